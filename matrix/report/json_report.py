"""The JSON report (``format: mcp-matrix.report``, ``version: 1``; docs/reports.md).

``build_report`` turns a results stream (finished, interrupted, or several runs merged) into
one document: the runs, the profiles, the tools x clients grid, every cell with its reason,
evidence, snapshot pointer and fix advice, the skipped calls and the counts. The other
writers (Markdown, JUnit, SARIF, HTML) render this same document, so every format says the
same thing about every cell.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any

from matrix import __version__
from matrix.advice import advice_for
from matrix.events import (
    CallCell,
    Cell,
    DiscoveryCell,
    Event,
    ProfileError,
    RunFinished,
    RunStarted,
    Skipped,
    SnapshotTaken,
    typed_events,
)
from matrix.report.grid import RELEASE_FAILING, Scope, build_grid, gate_scope
from matrix.schemas import load_schema
from matrix.verdicts import MEANING, SEVERITY, SYMBOL, rank

FORMAT = "mcp-matrix.report"
VERSION = 1

_DECIDING = ("hidden", "server-dropped", "session-broken")
_REASON_PARTS = 3


def build_report(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> dict:
    """The report document for a list of result events (see docs/reports.md for every key)."""
    events = typed_events(events)
    failing = list(failing)
    scope = gate_scope(events, failing)  # every run's profiles: a merged file as its shards
    runs: list[dict] = []
    snapshots: list[_Tools] = []
    cells: list[dict] = []
    skipped: list[dict] = []
    profile_errors: list[dict] = []
    current = -1

    def run_index() -> int:
        nonlocal current
        if current < 0:  # events before any run-started (a hand-merged file): an anonymous run
            runs.append(_run_record(RunStarted()))
            snapshots.append(_Tools({}))
            current = 0
        return current

    for e in events:
        if isinstance(e, RunStarted):
            runs.append(_run_record(e))
            snapshots.append(_Tools({}))
            current = len(runs) - 1
        elif isinstance(e, SnapshotTaken):
            snapshots[run_index()] = _Tools(e.snapshot)
        elif isinstance(e, RunFinished):
            _finish(runs[run_index()], e)
        elif isinstance(e, (DiscoveryCell, CallCell)):
            i = run_index()
            cells.append(_cell(e, runs[i]["run_id"], snapshots[i], scope))
        elif isinstance(e, Skipped):
            i = run_index()
            skipped.append(
                {
                    "run": runs[i]["run_id"],
                    "profile": e.profile,
                    "tool": e.tool,
                    "case": e.case,
                    "reason": e.reason,
                }
            )
        elif isinstance(e, ProfileError):
            i = run_index()
            profile_errors.append(
                {"run": runs[i]["run_id"], "profile": e.profile, "error": e.error}
            )

    grid = build_grid(events)
    profiles = _profiles(events, grid.profiles)
    counts = {v: 0 for v in SEVERITY}
    for c in cells:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    counts = {v: n for v, n in counts.items() if n}
    first = runs[0] if runs else _run_record(RunStarted())
    return {
        "format": FORMAT,
        "version": VERSION,
        "generated_by": {"name": "mcp-matrix", "version": __version__},
        "mcp_matrix": first["mcp_matrix"],
        "server": first["server"],
        "complete": bool(runs)
        and all(r["finished"] and r["measured"] and not r["interrupted"] for r in runs),
        "runs": runs,
        "profiles": profiles,
        "tools": list(grid.tools),
        "release_failing": failing,
        "legend": [
            {"verdict": v, "symbol": SYMBOL[v], "meaning": MEANING[v]}
            for v in SEVERITY
            if v in counts
        ],
        "grid": {
            "profiles": list(grid.profiles),
            "rows": [
                {"tool": t, "cells": [grid.worst(t, p) for p in grid.profiles]} for t in grid.tools
            ],
        },
        "cells": cells,
        "skipped": skipped,
        "profile_errors": profile_errors,
        "counts": {
            "verdicts": counts,
            "cells": len(cells),
            "discovery": sum(1 for c in cells if c["kind"] == "discovery"),
            "calls": sum(1 for c in cells if c["kind"] == "call"),
            "findings": sum(1 for c in cells if c["finding"]),
            "release_failing": sum(1 for c in cells if c["release_failing"]),
            "skipped": len(skipped),
            "profile_errors": len(profile_errors),
        },
    }


def write_json(
    events: Iterable[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(
        json.dumps(build_report(events, failing), indent=2, ensure_ascii=False, default=str) + "\n"
    )


# -- pieces ---------------------------------------------------------------------------------


def _run_record(e: RunStarted) -> dict:
    return {
        "run_id": e.run_id,
        "started_at": e.started_at,
        "finished_at": None,
        "mcp_matrix": e.mcp_matrix,
        "target": e.target,
        "server": dict(e.server) if e.server else None,
        "protocolVersion": e.protocolVersion,
        "cases": e.cases or None,
        "baseline": e.baseline,
        "finished": False,
        "measured": True,
        "interrupted": False,
        "error": None,
    }


def _finish(run: dict, e: RunFinished) -> None:
    run.update(
        finished_at=e.finished_at, finished=True, measured=e.measured, interrupted=e.interrupted
    )
    run["error"] = e.error


def _profiles(events: list[Event], names: list[str]) -> list[dict]:
    seen: dict[str, dict] = {}
    for e in events:
        if not isinstance(e, RunStarted):
            continue
        for p in e.profiles:
            if p["name"] not in seen:
                seen[p["name"]] = {
                    "name": p["name"],
                    "client": p.get("client"),
                    "versions": p.get("versions"),
                    "models": p.get("models"),
                    "weakest_evidence": p.get("weakest_evidence"),
                }
    return [
        seen.get(n)
        or {"name": n, "client": None, "versions": None, "models": None, "weakest_evidence": None}
        for n in names
    ]


def primary_finding(
    findings: Sequence[Mapping[str, Any]], verdict: str
) -> Mapping[str, Any] | None:
    """The finding that decided a discovery cell: the last one for a hidden or dropped tool,
    else the first that lost something, else the first."""
    if not findings:
        return None
    if verdict in _DECIDING:
        return findings[-1]
    return next((f for f in findings if f.get("lost")), findings[0])


def _cell(e: Cell, run_id: str | None, tools: _Tools, scope: Scope) -> dict:
    verdict = e.verdict
    discovery = isinstance(e, DiscoveryCell)
    if discovery:
        index = e.index if e.index is not None else _index_of(tools, e.tool)
        findings = [_finding(f, index, tools) for f in e.findings]
        primary = primary_finding(e.findings, verdict)
        behaviours = list(dict.fromkeys(f["behaviour"] for f in findings if f["behaviour"]))
        evidence = _dedupe_evidence(
            {**ev, "behaviour": f["behaviour"]} for f in findings for ev in f["evidence"]
        )
        pointer = _finding_pointer(primary, index, tools) if primary else _tool_pointer(index)
        blast = primary.get("blast_radius") if primary else None
        reason = _discovery_reason(e)
    else:
        index = _index_of(tools, e.tool)
        findings = []
        behaviours = list(e.behaviours)
        evidence = _dedupe_evidence({**ev, "behaviour": ""} for ev in e.evidence)
        pointer = _call_pointer(index, e.mutations)
        blast = "tool" if verdict == "unreachable" else "call"
        reason = e.reason
    raw_tool = tools.tools[index] if index is not None and 0 <= index < len(tools.tools) else None
    call = None if discovery else e
    return {
        "kind": e.KIND,
        "run": run_id,
        "profile": e.profile,
        "tool": e.tool,
        "case": call and call.case,
        "verdict": verdict,
        "symbol": SYMBOL.get(verdict, "?"),
        "meaning": MEANING.get(verdict, ""),
        "severity": rank(verdict),
        "finding": verdict not in ("visible", "intact"),
        "release_failing": scope.fails(e),
        "reason": reason,
        "blast_radius": blast,
        "behaviours": behaviours,
        "evidence": evidence,
        "weakest_evidence": e.weakest_evidence,
        "pointer": pointer,
        "advice": advice_for(e, raw_tool),
        "findings": findings,
        "model_name": e.model_name if discovery else None,
        "model_schema": e.model_schema if discovery else None,
        "origin": call and call.origin,
        "expect": call and call.expect,
        "mutations": [dict(m) for m in call.mutations] if call else [],
        "answer": call and call.answer,
        "stale": bool(call and call.stale),
        "sometimes": list(call.sometimes) if call else [],
        "frequency": call and call.frequency,
        "variants": [dict(v) for v in call.variants or ()] if call else [],
    }


def _discovery_reason(e: DiscoveryCell) -> str:
    findings = e.findings
    if e.verdict == "visible" or not findings:
        return ""
    if e.verdict in _DECIDING:
        return findings[-1]["message"]
    lost = [f for f in findings if f.get("lost")] or findings
    text = "; ".join(f["message"] for f in lost[:_REASON_PARTS])
    return text + (f" (and {len(lost) - _REASON_PARTS} more)" if len(lost) > _REASON_PARTS else "")


def _finding(f: Mapping[str, Any], index: int | None, tools: _Tools) -> dict:
    return {
        "code": f["code"],
        "message": f["message"],
        "pointer": f.get("pointer", ""),
        "snapshot_pointer": _finding_pointer(f, index, tools),
        "lost": bool(f.get("lost")),
        "blast_radius": f.get("blast_radius"),
        "behaviour": f.get("behaviour", ""),
        "evidence": [dict(ev) for ev in f.get("evidence", ())],
    }


def _dedupe_evidence(items: Iterable[Mapping[str, Any]]) -> list[dict]:
    out: dict[tuple, dict] = {}
    for ev in items:
        item = {
            "behaviour": _s(ev.get("behaviour")),
            "level": _s(ev.get("level")),
            "source": _s(ev.get("source")),
            "note": _s(ev.get("note")),
        }
        out.setdefault(tuple(item.values()), item)
    return list(out.values())


class _Tools:
    """A run's snapshot tools, indexed by name once: a run of 10,000 tools has 10,000s of cells,
    and looking each cell's tool up by a scan made the report quadratic."""

    def __init__(self, snapshot: Any) -> None:
        entries = snapshot.get("tools") if isinstance(snapshot, Mapping) else None
        entries = entries if isinstance(entries, list) else []
        self.tools = [t.get("tool") if isinstance(t, Mapping) else None for t in entries]
        self.index: dict[str, int] = {}
        for i, t in enumerate(self.tools):
            name = t.get("name") if isinstance(t, Mapping) else None
            if isinstance(name, str):
                self.index.setdefault(name, i)


def _index_of(tools: _Tools, name: str) -> int | None:
    return tools.index.get(name)


def _tool_pointer(index: int | None) -> str | None:
    return None if index is None else f"/tools/{index}/tool"


def _finding_pointer(f: Mapping[str, Any], index: int | None, tools: _Tools) -> str | None:
    """The finding's pointer (relative to the tool) as a pointer into the snapshot document."""
    if f.get(
        "culprit"
    ):  # a list-level failure reported on every tool: point at the tool that caused it
        culprit = _index_of(tools, _s(f.get("culprit")))
        index = culprit if culprit is not None else index
    base = _tool_pointer(index)
    rel = _s(f.get("pointer"))
    if base is None:
        return None
    return base + (rel if rel.startswith("/") else "")


def _call_pointer(index: int | None, mutations: list[Mapping[str, Any]]) -> str | None:
    """The input schema of the called tool, at the property the first mutation touched."""
    base = _tool_pointer(index)
    if base is None:
        return None
    if not mutations:
        return base + "/inputSchema"
    parts = [p for p in _s(mutations[0].get("pointer")).split("/")[1:]]
    path = "/inputSchema"
    for p in parts:
        path += "/items" if p.isdigit() else f"/properties/{p}"
    return base + path


def describe_target(target: Any) -> str:
    """One line for a (masked) target as the run-started event records it."""
    if not isinstance(target, Mapping):
        return "" if target is None else str(target)
    kind = str(target.get("kind") or "")
    if kind == "stdio":
        command = target.get("command")
        return "stdio: " + (
            " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
        )
    if kind == "http" or target.get("url"):
        return f"http: {target.get('url') or ''}"
    if kind == "server" or target.get("server"):
        return f"bundled server {target.get('server') or ''} ({target.get('transport') or 'stdio'})"
    return json.dumps(dict(target), ensure_ascii=False, default=str)


def _s(value: Any) -> str:
    return "" if value is None else str(value)


def _opt(value: Any) -> Any:
    return (
        None
        if value is None
        else (value if isinstance(value, (str, int, float, bool)) else str(value))
    )


# -- the schema of the document ----------------------------------------------------------------

SCHEMA: dict = load_schema("report")  # published: matrix/schemas/report.schema.json


__all__ = [
    "FORMAT",
    "SCHEMA",
    "VERSION",
    "build_report",
    "describe_target",
    "primary_finding",
    "write_json",
]
