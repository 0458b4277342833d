"""SARIF 2.1.0 writer, shaped for GitHub code scanning (docs/reports.md, docs/ci.md).

- **One SARIF run per file**, whatever was merged: GitHub rejects a file with more than 20 runs
  and, since 2025, several runs of one tool and category. Each mcp-matrix run is an invocation.
- **One result per (server, tool, case, rule, verdict)**, naming every client it applies to, with
  its own ``partialFingerprints`` (no two results share one, so code scanning never folds two
  problems into one alert). Past GitHub's 25,000 results per run the most severe are kept
  (release-failing errors first) and a notification says how many were left out.
- **Locations**: with ``source`` (``report --sarif-source FILE``: the file in the repository
  that defines the tools), the line of each tool's name in it; otherwise a logical location
  (the tool), since no file of the repository is known. GitHub code scanning needs a file: the
  composite action always names one (docs/ci.md).
- Rules are client behaviours (``ruleId`` = the behaviour, or the verdict when no behaviour is
  involved), each with a full description and help that says the fix; a release-failing
  verdict is ``level: error``, anything else ``warning``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import Event, typed_events
from mcp_matrix.core.text import escape_invisible
from mcp_matrix.core.verdicts import MEANING
from mcp_matrix.report.advice import BY_BEHAVIOUR, BY_VERDICT
from mcp_matrix.report.document import NO_RUN, Report, ReportCell, ReportRun
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.json_report import describe_target
from mcp_matrix.report.model import read_model
from mcp_matrix.report.reasons import primary_finding

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
MAX_RESULTS = 25_000  # GitHub's hard limit per run
MAX_FINDINGS = 20  # findings listed in a result's properties
_TOOL_PREFIX = re.compile(r"^/tools/\d+/tool")
# A quoted string (a tool's name in a decorator, a dict or a JSON file) or a defined function.
_NAMES = re.compile(
    r"""(["'])((?:(?!\1)[^\\\n]){1,200})\1|\b(?:def|function|fn|func)\s+([A-Za-z_][\w-]*)"""
)


# A behaviour's citation of its client page, "(Vercel docs/clients/vercel.md#vercel-ai-sdk)": the
# rule's help states what the client does; the evidence is in the result's properties.
_CITATIONS = re.compile(r"\s*\([^()]*\bdocs/clients/[^()]*\)")


class Source:
    """The file that defines the tools, and the first line where each name is written (as a
    quoted string, else as a defined function)."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InputError(
                f"cannot read the file that defines the tools: {exc.strerror or exc}",
                where=str(path),
            ) from None
        if path.is_absolute() and path.resolve().is_relative_to(Path.cwd().resolve()):
            path = path.resolve().relative_to(Path.cwd().resolve())  # code scanning: relative
        self.uri = path.as_posix().removeprefix("./")
        quoted: dict[str, int] = {}
        defined: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), 1):
            for m in _NAMES.finditer(line):
                if m.group(2) is not None:
                    quoted.setdefault(m.group(2), number)
                else:
                    defined.setdefault(m.group(3), number)
        self.lines = {**defined, **quoted}

    def line(self, tool: str) -> int | None:
        return self.lines.get(tool)


def write_sarif(
    events: Iterable[Event],
    stream: IO[str],
    failing: Iterable[str] = RELEASE_FAILING,
    source: str | Path | None = None,
) -> None:
    """The SARIF log on a stream; ``source``: the file in the repository that defines the tools."""
    events = typed_events(events)
    log = render_sarif(read_model(events, failing), Source(source) if source else None)
    stream.write(json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def render_sarif(doc: Report, source: Source | None = None) -> dict:
    runs = doc.runs or (NO_RUN,)
    server_of = {r.run_id: _server_name(r) for r in runs}
    rules: dict[str, dict] = {}
    grouped: dict[tuple, _SarifResult] = {}
    for c in doc.cells:
        if not c.finding:
            continue
        rule_id = _rule_id(c)
        if rule_id not in rules:
            rules[rule_id] = _rule(rule_id, c, len(rules))
        server = server_of.get(c.run, "server")
        key = (server, c.tool, c.case, c.kind, rule_id, c.verdict, c.pointer)
        group = grouped.setdefault(key, _SarifResult(c, [], rule_id, server))
        if c.profile not in group.profiles:
            group.profiles.append(c.profile)
    ordered = sorted(grouped.values(), key=lambda g: (not g.cell.release_failing, g.cell.severity))
    kept = ordered[:MAX_RESULTS]
    notes = []
    if len(kept) < len(ordered):
        notes.append(
            f"{len(ordered) - len(kept)} results left out: GitHub accepts at most {MAX_RESULTS} per run "
            "(the most severe are kept; the JSON and HTML reports have every cell)"
        )
    if source is None and kept:
        notes.append(
            "the locations are logical (the server's tools): GitHub code scanning needs a file, "
            "name the one that defines the tools with --sarif-source FILE"
        )
    names = list(dict.fromkeys(server_of.values()))
    results = []
    seen: dict[str, int] = {}
    for g in kept:
        fingerprint = _fingerprint(g.cell, g.rule, g.server)
        seen[fingerprint] = seen.get(fingerprint, 0) + 1
        if seen[fingerprint] > 1:  # two tools of one name (a hostile list): still two alerts
            fingerprint = _hash(f"{fingerprint}#{seen[fingerprint]}")
        results.append(_result(g, rules[g.rule]["_index"], source, fingerprint))
    run: dict = {
        "tool": {
            "driver": {
                "name": "mcp-matrix",
                "version": str(runs[0].mcp_matrix or doc.generated_by["version"]),
                "informationUri": "https://modelcontextprotocol.io/",
                "rules": [{k: v for k, v in r.items() if k != "_index"} for r in rules.values()],
            }
        },
        "automationDetails": {"id": f"mcp-matrix/{_category('+'.join(names))}/"},
        "invocations": [_invocation(r, notes if i == 0 else []) for i, r in enumerate(runs)],
        "results": results,
        "properties": {
            "runIds": [r.run_id for r in runs],
            "servers": [dict(r.server or {}) for r in runs],
            "targets": [describe_target(r.target) for r in runs],
            "profiles": [p.name for p in doc.profiles],
            "releaseFailing": list(doc.release_failing),
        },
    }
    if source is not None:
        run["artifacts"] = [
            {
                "location": {"uri": source.uri},
                "description": {"text": "the file that defines the server's tools"},
            }
        ]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


@dataclass
class _SarifResult:
    """One result: the cells of one tool, case, rule and place, in every client they hit."""

    cell: ReportCell  # the first of them
    profiles: list[str]
    rule: str
    server: str


def _server_name(run: ReportRun) -> str:
    server = run.server or {}
    return str(server.get("name") or "server") if isinstance(server, Mapping) else "server"


def _category(name: str) -> str:
    """A server name fit for a code-scanning category (one per server in a repository)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_.+" else "-" for ch in name).strip("-")
    return safe[:60] or "server"


def _invocation(run: ReportRun, extra: list[str]) -> dict:
    inv: dict = {"executionSuccessful": run.finished and run.measured and not run.interrupted}
    if run.started_at:
        inv["startTimeUtc"] = run.started_at
    if run.finished_at:
        inv["endTimeUtc"] = run.finished_at
    notes = []
    if not run.finished:
        notes.append("the run did not finish (no run-finished event): results are partial")
    if run.interrupted:
        notes.append("the run was interrupted")
    if isinstance(run.error, Mapping):
        notes.append(f"could not measure: {run.error.get('message') or ''}")
    notes += extra
    if notes:
        inv["toolExecutionNotifications"] = [
            {"message": {"text": n}, "level": "warning"} for n in notes
        ]
    inv["properties"] = {"runId": run.run_id, "target": describe_target(run.target)}
    return inv


def _rule_id(c: ReportCell) -> str:
    if c.kind == "discovery":
        deciding = primary_finding(c.findings, c.verdict)
        if deciding and deciding.behaviour:
            return deciding.behaviour
    return c.behaviours[0] if c.behaviours else c.verdict


def _behaviour_summary(name: str) -> str:
    """The behaviour's own one-line summary (its docstring), when it is a registered one, without
    the docs/clients/ sections it cites."""
    from mcp_matrix.behaviours.registry import load_all

    spec = load_all().get(name)
    summary = spec.summary if spec is not None else ""
    return _CITATIONS.sub("", summary).replace("``", "`").strip()


def _rule(rule_id: str, c: ReportCell, index: int) -> dict:
    is_verdict = rule_id == c.verdict and rule_id not in BY_BEHAVIOUR
    verdict = c.verdict
    if is_verdict:
        short = f"verdict {rule_id}: {MEANING.get(rule_id, '')}"
        full = f"A call or tool judged {rule_id}: {MEANING.get(rule_id, rule_id)}."
        fix = BY_VERDICT.get(rule_id) or c.advice
    else:
        short = f"client behaviour '{rule_id}'"
        summary = _behaviour_summary(rule_id).rstrip(".")
        full = (
            f"Some MCP clients apply the behaviour '{rule_id}'"
            + (f" ({summary})" if summary else "")
            + f"; a tool or call it affects is judged {verdict}: {MEANING.get(verdict, verdict)}."
        )
        fix = BY_BEHAVIOUR.get(rule_id) or c.advice or BY_VERDICT.get(verdict)
    fix = fix or "Read the result's message: it names the clients, the reason and the evidence."
    return {
        "_index": index,
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.replace("_", "-").split("-"))
        or rule_id,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": f"Fix: {fix}", "markdown": f"**Fix:** {_md(fix)}"},
        "properties": {"tags": ["mcp", "verdict" if is_verdict else "behaviour"]},
    }


def _md(text: str) -> str:
    from mcp_matrix.report.markdown import md

    return md(text)


def _location(source: Source | None, server: str, tool: str, pointer: str | None) -> dict:
    logical = {"name": tool, "fullyQualifiedName": f"{server}/{tool}", "kind": "function"}
    location: dict = {"logicalLocations": [logical]}
    if source is not None:
        physical: dict = {"artifactLocation": {"uri": source.uri, "index": 0}}
        line = source.line(tool)
        if line:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    if pointer:
        location["properties"] = {"jsonPointer": pointer}
    return location


def _result(group: _SarifResult, rule_index: int, source: Source | None, fingerprint: str) -> dict:
    c, profiles = group.cell, group.profiles
    label = c.tool + (f"::{c.case}" if c.case else "")
    clients = ", ".join(profiles)
    text = f"{label} is {c.verdict} ({c.meaning}) in {len(profiles)} client{'s' if len(profiles) > 1 else ''}: {clients}"
    if c.reason:
        text += f". {c.reason}"
    if c.advice:
        text += f" Fix: {c.advice}"
    return {
        "ruleId": group.rule,
        "ruleIndex": rule_index,
        "level": "error" if c.release_failing else "warning",
        "kind": "fail",
        "message": {"text": escape_invisible(text)},  # as CI shows it: no bidi control obeyed
        "locations": [_location(source, group.server, c.tool, c.pointer)],
        "partialFingerprints": {"mcpMatrixCell/v3": fingerprint},
        "properties": {
            "profiles": list(profiles),
            "tool": c.tool,
            "case": c.case,
            "verdict": c.verdict,
            "blastRadius": c.blast_radius,
            "behaviours": list(c.behaviours),
            "weakestEvidence": c.weakest_evidence,
            "evidence": [e.to_json() for e in c.evidence],
            "jsonPointer": c.pointer,
            "advice": c.advice,
            "mutations": [m.to_json() for m in c.mutations],
            "findings": [
                {"code": f.code, "message": f.message, "pointer": f.pointer}
                for f in c.findings[:MAX_FINDINGS]
            ],
        },
    }


def _fingerprint(c: ReportCell, rule_id: str, server: str) -> str:
    """Stable across runs and client sets (the alert is the tool's, whichever clients it hits)
    and distinct for every result: the tool's position in the list is left out, the place in
    its schema kept."""
    where = _TOOL_PREFIX.sub("", c.pointer or "")
    key = [server, c.tool, c.case, c.kind, rule_id, c.verdict, where]
    return _hash(json.dumps(key, ensure_ascii=False))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


__all__ = ["MAX_RESULTS", "SCHEMA_URI", "Source", "render_sarif", "write_sarif"]
