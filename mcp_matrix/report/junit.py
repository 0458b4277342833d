"""JUnit XML writer: one testcase per cell, so a CI server shows the matrix as tests.

Valid against junit-10.xsd (the schema Jenkins' xUnit plugin and most CI servers read;
vendored in tests/report/data). One ``<testsuite>`` per (run, profile); a testcase's id is
``classname`` + ``name``: ``classname`` is ``<server>.<profile>`` and ``name`` the tool
(discovery) or ``tool::case`` (a call), so merged shards of several servers never collide
(two runs of one server key with different targets become ``memory`` and ``memory-2``; a
repeated name gets `` (2)``). A cell whose verdict fails a release is a ``<failure>`` with
the reason as its message; every other cell passes and carries its verdict, reason and
evidence in ``<system-out>`` (junit-10 allows no properties on a testcase). Calls not made
are ``<skipped>``: in their profile's suite when one profile's call was not made, else in a
``not-called`` suite. A profile whose worker failed is an ``<error>``. Characters XML 1.0
forbids are written as ``\\uXXXX`` text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

from mcp_matrix.core.events import Event
from mcp_matrix.core.text import escape_invisible
from mcp_matrix.report.document import NO_RUN, Report, ReportCell, ReportRun
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.json_report import describe_target
from mcp_matrix.report.model import read_model
from mcp_matrix.targets.server_key import server_key


def xml_text(value: object) -> str:
    """Text for the XML: what XML 1.0 forbids, and what CI would obey, as escapes."""
    return escape_invisible("" if value is None else str(value))


def write_junit(
    events: Iterable[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(render_junit(read_model(events, failing)))


def render_junit(doc: Report) -> str:
    root = ET.Element("testsuites", name="mcp-matrix")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    runs = doc.runs or (NO_RUN,)
    labels = _server_labels(runs)
    seen: set[tuple[str, str]] = set()

    def testcase(suite: ET.Element, classname: str, name: str) -> ET.Element:
        unique, n = name, 1
        while (classname, unique) in seen:
            n += 1
            unique = f"{name} ({n})"
        seen.add((classname, unique))
        return ET.SubElement(
            suite, "testcase", classname=xml_text(classname), name=xml_text(unique), time="0"
        )

    for run in runs:
        run_id = run.run_id
        label = labels[run_id]
        in_run = [c for c in doc.cells if c.run == run_id]
        skipped = [s for s in doc.skipped if s.run == run_id]
        errors_of_run = [e for e in doc.profile_errors if e.run == run_id]
        profiles = [
            p
            for p in doc.grid.profiles
            if any(c.profile == p for c in in_run)
            or any(s.profile == p for s in skipped)
            or any(e.profile == p for e in errors_of_run)
        ]
        for profile in profiles:
            cells = [c for c in in_run if c.profile == profile]
            not_made = [s for s in skipped if s.profile == profile]
            errors = [e for e in errors_of_run if e.profile == profile]
            failures = sum(c.release_failing for c in cells)
            suite = _suite(
                root,
                f"{profile} on {label}",
                len(cells) + len(not_made) + len(errors),
                failures,
                len(errors),
                len(not_made),
                run,
            )
            props = ET.SubElement(suite, "properties")
            _run_props(props, run)
            meta = next((p for p in doc.profiles if p.name == profile), None)
            for key, given in (
                ("client", meta and meta.client),
                ("versions", meta and meta.versions),
                ("weakest_evidence", meta and meta.weakest_evidence),
            ):
                if given:
                    _prop(props, key, given)
            classname = f"{label}.{profile}"
            for c in cells:
                case = testcase(suite, classname, _name(c))
                if c.release_failing:
                    failure = ET.SubElement(
                        case,
                        "failure",
                        message=xml_text(c.reason or c.meaning),
                        type=c.verdict,
                    )
                    failure.text = xml_text(_details(c))
                else:
                    ET.SubElement(case, "system-out").text = xml_text(_details(c))
            for s in not_made:
                case = testcase(suite, classname, s.tool + (f"::{s.case}" if s.case else ""))
                ET.SubElement(case, "skipped", message=xml_text(s.reason))
            for e in errors:
                case = testcase(suite, classname, "(profile error)")
                ET.SubElement(case, "error", message=xml_text(e.error), type="profile-error")
            totals["tests"] += len(cells) + len(not_made) + len(errors)
            totals["failures"] += failures
            totals["errors"] += len(errors)
        tool_level = [s for s in skipped if not s.profile]
        if tool_level:
            suite = _suite(
                root, f"not called on {label}", len(tool_level), 0, 0, len(tool_level), run
            )
            _run_props(ET.SubElement(suite, "properties"), run)
            for s in tool_level:
                case = testcase(
                    suite, f"{label}.not-called", s.tool + (f"::{s.case}" if s.case else "")
                )
                ET.SubElement(case, "skipped", message=xml_text(s.reason))
            totals["tests"] += len(tool_level)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _server_labels(runs: Sequence[ReportRun]) -> dict[str | None, str]:
    """Each run's server as a classname part: its config key, numbered when two runs of one key
    measured different targets (``memory`` and ``memory --schema anyof``)."""
    labels: dict[str | None, str] = {}
    targets: dict[str, list[str]] = {}
    for run in runs:
        key = server_key(run.target, run.server).name or "server"
        key = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-") or "server"
        target = describe_target(run.target)
        known = targets.setdefault(key, [])
        if target not in known:
            known.append(target)
        n = known.index(target) + 1
        labels[run.run_id] = key if n == 1 else f"{key}-{n}"
    return labels


def _run_props(props: ET.Element, run: ReportRun) -> None:
    server = run.server if isinstance(run.server, Mapping) else {}
    _prop(props, "server", f"{server.get('name') or ''} {server.get('version') or ''}".strip())
    _prop(props, "target", describe_target(run.target))
    if run.run_id:
        _prop(props, "run", run.run_id)


def _suite(
    root: ET.Element,
    name: str,
    tests: int,
    failures: int,
    errors: int,
    skipped: int,
    run: ReportRun,
) -> ET.Element:
    suite = ET.SubElement(
        root,
        "testsuite",
        name=xml_text(name),
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time="0",
    )
    if run.started_at:
        suite.set("timestamp", xml_text(run.started_at))
    return suite


def _prop(parent: ET.Element, name: str, value: object) -> None:
    ET.SubElement(parent, "property", name=name, value=xml_text(value))


def _name(c: ReportCell) -> str:
    return c.tool + (f"::{c.case}" if c.kind == "call" and c.case else "")


def _details(c: ReportCell) -> str:
    lines = [f"{c.verdict}: {c.meaning}"]
    if c.reason:
        lines.append(f"why: {c.reason}")
    for m in c.mutations:
        lines.append(f"mutation: {m.kind} at {m.pointer or '/'}")
    if c.behaviours:
        lines.append("behaviours: " + ", ".join(c.behaviours))
    for ev in c.evidence:
        lines.append("evidence: " + " ".join(x for x in (ev.level, ev.source, ev.note) if x))
    if c.pointer:
        lines.append(f"snapshot: {c.pointer}")
    if c.advice:
        lines.append(f"fix: {c.advice}")
    return "\n".join(lines)


__all__ = ["render_junit", "write_junit", "xml_text"]
