"""The JSON report (``format: mcp-matrix.report``, ``version: 1``; docs/reports.md).

``build_report`` turns a results stream (finished, interrupted, or several runs merged) into
one document: the runs, the profiles, the tools x clients grid, every cell with its reason,
evidence, snapshot pointer and fix advice, the skipped calls and the counts. The other
writers (Markdown, JUnit, SARIF, HTML) render this same document, so every format says the
same thing about every cell.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import IO, Any

from matrix import __version__
from matrix.advice import advice_for
from matrix.report.grid import RELEASE_FAILING, build_grid
from matrix.schemas import load_schema
from matrix.verdicts import MEANING, SEVERITY, SYMBOL, rank

FORMAT = "mcp-matrix.report"
VERSION = 1

_DECIDING = ("hidden", "server-dropped", "session-broken")
_REASON_PARTS = 3


def build_report(
    events: Iterable[Mapping[str, Any]], failing: Iterable[str] = RELEASE_FAILING
) -> dict:
    """The report document for a list of result events (see docs/reports.md for every key)."""
    events = [e for e in events if isinstance(e, Mapping)]
    failing = list(failing)
    runs: list[dict] = []
    snapshots: list[_Tools] = []
    cells: list[dict] = []
    skipped: list[dict] = []
    profile_errors: list[dict] = []
    current = -1

    def run_index() -> int:
        nonlocal current
        if current < 0:  # events before any run-started (a hand-merged file): an anonymous run
            runs.append(_run_record({}))
            snapshots.append(_Tools({}))
            current = 0
        return current

    for e in events:
        kind = e.get("event")
        if kind == "run-started":
            runs.append(_run_record(e))
            snapshots.append(_Tools({}))
            current = len(runs) - 1
        elif kind == "snapshot":
            snapshots[run_index()] = _Tools(e.get("snapshot"))
        elif kind == "run-finished":
            _finish(runs[run_index()], e)
        elif kind in ("discovery", "call"):
            i = run_index()
            cells.append(_cell(e, runs[i]["run_id"], snapshots[i], failing))
        elif kind == "skipped":
            i = run_index()
            skipped.append(
                {
                    "run": runs[i]["run_id"],
                    "profile": _opt(e.get("profile")),
                    "tool": _s(e.get("tool")),
                    "case": _opt(e.get("case")),
                    "reason": _s(e.get("reason")),
                }
            )
        elif kind == "profile-error":
            i = run_index()
            profile_errors.append(
                {
                    "run": runs[i]["run_id"],
                    "profile": _s(e.get("profile")),
                    "error": _s(e.get("error")),
                }
            )

    grid = build_grid(events)
    profiles = _profiles(events, grid.profiles)
    counts = {v: 0 for v in SEVERITY}
    for c in cells:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    counts = {v: n for v, n in counts.items() if n}
    first = runs[0] if runs else _run_record({})
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
    events: list[dict], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(
        json.dumps(build_report(events, failing), indent=2, ensure_ascii=False, default=str) + "\n"
    )


# -- pieces ---------------------------------------------------------------------------------


def _run_record(e: Mapping[str, Any]) -> dict:
    server = e.get("server") if isinstance(e.get("server"), Mapping) else None
    return {
        "run_id": _opt(e.get("run_id")),
        "started_at": _opt(e.get("started_at")),
        "finished_at": None,
        "mcp_matrix": _opt(e.get("mcp_matrix")),
        "target": e.get("target"),
        "server": dict(server) if server else None,
        "protocolVersion": _opt(e.get("protocolVersion")),
        "cases": _opt(e.get("cases")) or None,
        "baseline": _opt(e.get("baseline")),
        "finished": False,
        "measured": True,
        "interrupted": False,
        "error": None,
    }


def _finish(run: dict, e: Mapping[str, Any]) -> None:
    run.update(
        finished_at=_opt(e.get("finished_at")),
        finished=True,
        measured=bool(e.get("measured", True)),
        interrupted=bool(e.get("interrupted", False)),
        error=e.get("error"),
    )


def _profiles(events: list[Mapping[str, Any]], names: list[str]) -> list[dict]:
    seen: dict[str, dict] = {}
    for e in events:
        if e.get("event") != "run-started":
            continue
        for p in e.get("profiles") or []:
            if isinstance(p, Mapping) and p.get("name") not in seen:
                seen[str(p.get("name"))] = {
                    "name": str(p.get("name")),
                    "client": _opt(p.get("client")),
                    "versions": _opt(p.get("versions")),
                    "models": _opt(p.get("models")),
                    "weakest_evidence": _opt(p.get("weakest_evidence")),
                }
    return [
        seen.get(n)
        or {"name": n, "client": None, "versions": None, "models": None, "weakest_evidence": None}
        for n in names
    ]


def primary_finding(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The finding that decided a discovery cell: the last one for a hidden or dropped tool,
    else the first that lost something, else the first."""
    findings = [f for f in event.get("findings") or [] if isinstance(f, Mapping)]
    if not findings:
        return None
    if event.get("verdict") in _DECIDING:
        return findings[-1]
    return next((f for f in findings if f.get("lost")), findings[0])


def _cell(e: Mapping[str, Any], run_id: str | None, tools: _Tools, failing: list[str]) -> dict:
    verdict = _s(e.get("verdict"))
    discovery = e.get("event") == "discovery"
    tool_name = _s(e.get("tool"))
    if discovery:
        index = e.get("index") if isinstance(e.get("index"), int) else _index_of(tools, tool_name)
        findings = [
            _finding(f, index, tools) for f in e.get("findings") or [] if isinstance(f, Mapping)
        ]
        primary = primary_finding(e)
        behaviours = list(dict.fromkeys(f["behaviour"] for f in findings if f["behaviour"]))
        evidence = _dedupe_evidence(
            {**ev, "behaviour": f["behaviour"]}
            for f in findings
            for ev in f["evidence"]
            if isinstance(ev, Mapping)
        )
        pointer = _finding_pointer(primary, index, tools) if primary else _tool_pointer(index)
        blast = _opt(primary.get("blast_radius")) if primary else None
        reason = _discovery_reason(e, verdict)
    else:
        index = _index_of(tools, tool_name)
        findings = []
        behaviours = [_s(b) for b in e.get("behaviours") or []]
        evidence = _dedupe_evidence(
            {**ev, "behaviour": ""} for ev in e.get("evidence") or [] if isinstance(ev, Mapping)
        )
        mutations = [m for m in e.get("mutations") or [] if isinstance(m, Mapping)]
        pointer = _call_pointer(index, mutations)
        blast = "tool" if verdict == "unreachable" else "call"
        reason = _s(e.get("reason"))
    raw_tool = tools.tools[index] if index is not None and 0 <= index < len(tools.tools) else None
    return {
        "kind": "discovery" if discovery else "call",
        "run": run_id,
        "profile": _s(e.get("profile")),
        "tool": tool_name,
        "case": None if discovery else _opt(e.get("case")),
        "verdict": verdict,
        "symbol": SYMBOL.get(verdict, "?"),
        "meaning": MEANING.get(verdict, ""),
        "severity": rank(verdict),
        "finding": verdict not in ("visible", "intact"),
        "release_failing": verdict in failing,
        "reason": reason,
        "blast_radius": blast,
        "behaviours": behaviours,
        "evidence": evidence,
        "weakest_evidence": _opt(e.get("weakest_evidence")),
        "pointer": pointer,
        "advice": advice_for(e, raw_tool),
        "findings": findings,
        "model_name": _opt(e.get("model_name")) if discovery else None,
        "model_schema": e.get("model_schema") if discovery else None,
        "origin": None if discovery else _opt(e.get("origin")),
        "expect": None if discovery else _opt(e.get("expect")),
        "mutations": [] if discovery else [dict(m) for m in mutations],
        "answer": None if discovery else e.get("answer"),
        "stale": False if discovery else bool(e.get("stale")),
        "sometimes": [] if discovery else [_s(x) for x in e.get("sometimes") or []],
        "frequency": None if discovery else _opt(e.get("frequency")),
        "variants": []
        if discovery
        else [dict(v) for v in e.get("variants") or [] if isinstance(v, Mapping)],
    }


def _discovery_reason(e: Mapping[str, Any], verdict: str) -> str:
    findings = [f for f in e.get("findings") or [] if isinstance(f, Mapping)]
    if verdict == "visible" or not findings:
        return ""
    if verdict in _DECIDING:
        return _s(findings[-1].get("message"))
    lost = [f for f in findings if f.get("lost")] or findings
    text = "; ".join(_s(f.get("message")) for f in lost[:_REASON_PARTS])
    return text + (f" (and {len(lost) - _REASON_PARTS} more)" if len(lost) > _REASON_PARTS else "")


def _finding(f: Mapping[str, Any], index: int | None, tools: _Tools) -> dict:
    return {
        "code": _s(f.get("code")),
        "message": _s(f.get("message")),
        "pointer": _s(f.get("pointer")),
        "snapshot_pointer": _finding_pointer(f, index, tools),
        "lost": bool(f.get("lost")),
        "blast_radius": _opt(f.get("blast_radius")),
        "behaviour": _s(f.get("behaviour")),
        "evidence": [dict(ev) for ev in f.get("evidence") or [] if isinstance(ev, Mapping)],
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
