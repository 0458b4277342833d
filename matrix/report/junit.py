"""JUnit XML writer: one testcase per cell, so a CI server shows the matrix as tests.

``classname`` is the profile, ``name`` the tool (discovery) or ``tool::case`` (a call). A cell
whose verdict fails a release (RELEASE_FAILING, or the list given) is a ``<failure>`` with the
reason as its message; every other cell passes and carries its verdict in ``<properties>``.
Calls that were not made are ``<skipped>`` testcases of a ``skipped`` suite; a profile whose
worker failed is an ``<error>``. Characters XML 1.0 forbids are written as ``\\uXXXX`` text.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import IO, Any

from matrix.report.grid import RELEASE_FAILING
from matrix.report.json_report import build_report, describe_target

# Not allowed anywhere in an XML 1.0 document, even as a character reference.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(value: Any) -> str:
    s = "" if value is None else str(value)
    return _FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def write_junit(
    events: list[dict], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(render_junit(build_report(events, failing)))


def render_junit(doc: Mapping[str, Any]) -> str:
    root = ET.Element("testsuites", name="mcp-matrix")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    server = doc.get("server") or {}
    for profile in doc["grid"]["profiles"]:
        cells = [c for c in doc["cells"] if c["profile"] == profile]
        errors = [e for e in doc["profile_errors"] if e["profile"] == profile]
        suite = _suite(
            root,
            profile,
            len(cells) + len(errors),
            sum(c["release_failing"] for c in cells),
            len(errors),
            0,
        )
        props = ET.SubElement(suite, "properties")
        _prop(props, "server", f"{server.get('name') or ''} {server.get('version') or ''}".strip())
        meta = next((p for p in doc["profiles"] if p["name"] == profile), {})
        for key in ("client", "versions", "weakest_evidence"):
            if meta.get(key):
                _prop(props, key, meta[key])
        for c in cells:
            case = ET.SubElement(
                suite, "testcase", classname=xml_text(profile), name=xml_text(_name(c)), time="0"
            )
            if c["release_failing"]:
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=xml_text(c["reason"] or c["meaning"]),
                    type=c["verdict"],
                )
                failure.text = xml_text(_details(c))
            else:
                cprops = ET.SubElement(case, "properties")
                _prop(cprops, "verdict", c["verdict"])
                if c["reason"]:
                    _prop(cprops, "reason", c["reason"])
                if c["weakest_evidence"]:
                    _prop(cprops, "weakest_evidence", c["weakest_evidence"])
                if c["finding"] and c["advice"]:
                    _prop(cprops, "advice", c["advice"])
        for e in errors:
            case = ET.SubElement(
                suite, "testcase", classname=xml_text(profile), name="(profile error)", time="0"
            )
            ET.SubElement(case, "error", message=xml_text(e["error"]), type="profile-error")
        totals["tests"] += len(cells) + len(errors)
        totals["failures"] += sum(c["release_failing"] for c in cells)
        totals["errors"] += len(errors)
    if doc["skipped"]:
        suite = _suite(root, "skipped", len(doc["skipped"]), 0, 0, len(doc["skipped"]))
        for s in doc["skipped"]:
            name = s["tool"] + (f"::{s['case']}" if s.get("case") else "")
            case = ET.SubElement(
                suite, "testcase", classname="skipped", name=xml_text(name), time="0"
            )
            ET.SubElement(case, "skipped", message=xml_text(s["reason"]))
        totals["tests"] += len(doc["skipped"])
        totals["skipped"] += len(doc["skipped"])
    for key, value in totals.items():
        root.set(key, str(value))
    runs = doc["runs"]
    if runs:
        root.set("timestamp", xml_text(runs[0]["started_at"] or ""))
        root.set("target", xml_text(describe_target(runs[0].get("target"))))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(
    root: ET.Element, name: str, tests: int, failures: int, errors: int, skipped: int
) -> ET.Element:
    return ET.SubElement(
        root,
        "testsuite",
        name=xml_text(name),
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time="0",
    )


def _prop(parent: ET.Element, name: str, value: Any) -> None:
    ET.SubElement(parent, "property", name=name, value=xml_text(value))


def _name(c: Mapping[str, Any]) -> str:
    return c["tool"] + (f"::{c['case']}" if c["kind"] == "call" and c.get("case") else "")


def _details(c: Mapping[str, Any]) -> str:
    lines = [f"{c['verdict']}: {c['meaning']}"]
    if c["reason"]:
        lines.append(f"why: {c['reason']}")
    for m in c["mutations"]:
        lines.append(f"mutation: {m.get('kind')} at {m.get('pointer') or '/'}")
    if c["behaviours"]:
        lines.append("behaviours: " + ", ".join(c["behaviours"]))
    for ev in c["evidence"]:
        lines.append(
            "evidence: " + " ".join(x for x in (ev["level"], ev["source"], ev["note"]) if x)
        )
    if c["pointer"]:
        lines.append(f"snapshot: {c['pointer']}")
    if c["advice"]:
        lines.append(f"fix: {c['advice']}")
    return "\n".join(lines)


__all__ = ["render_junit", "write_junit", "xml_text"]
