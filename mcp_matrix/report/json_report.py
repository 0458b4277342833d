"""The JSON report (``format: mcp-matrix.report``, ``version: 2``; docs/reports.md).

``report_document`` turns a results stream (finished, interrupted, or several runs merged) into
one document: the runs, the profiles, the tools x clients grid, every cell with its reason,
evidence, snapshot pointer and fix advice, the skipped calls and the counts. Version 2 stores
each distinct value once: a cell is a row of numbers (``columns``) naming its entry in the
tables ``details`` (what happened: verdict, reason, findings, advice...), ``findings``,
``evidence``, ``schemas`` (their property schemas by number in ``properties``, as
``discover --json``) and ``texts`` (pointers, names, reasons, advice). A 5,000-tool server
through 36 clients wrote 548 MB in version 1, each cell in full with its findings and schema.

``read_report`` gives the version-1 shape (every cell in full) of either version; that is
``build_report``, the document the other writers (Markdown, JUnit, SARIF, HTML) render, so
every format says the same thing about every cell.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, Any, Protocol, TypeVar

from mcp_matrix import __version__
from mcp_matrix.core.content_table import ContentTable, resolve
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import (
    CallCell,
    Cell,
    CellEvidence,
    CellFinding,
    CellMutation,
    DiscoveryCell,
    Event,
    ListedProfile,
    ProfileError,
    RunFinished,
    RunStarted,
    Skipped,
    SnapshotTaken,
    typed_events,
)
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schemas import load_schema
from mcp_matrix.core.verdicts import LOST, MEANING, SEVERITY, SYMBOL, is_finding, rank
from mcp_matrix.report.advice import advice_for
from mcp_matrix.report.discovery_doc import SchemaTable, whole_schema
from mcp_matrix.report.grid import RELEASE_FAILING, Scope, gate_scope, run_profiles

FORMAT = "mcp-matrix.report"
VERSION = 2
READABLE = (1, 2)
# A version-2 cell, in order: positions in runs, profiles, tools; the tool's position in its
# run's snapshot; positions in details, texts (pointer, model_name) and schemas.
COLUMNS = (
    "run",
    "profile",
    "tool",
    "index",
    "detail",
    "release_failing",
    "pointer",
    "model_name",
    "schema",
)
CALL_KEYS = (
    "origin",
    "expect",
    "mutations",
    "answer",
    "stale",
    "sometimes",
    "frequency",
    "variants",
)

_REASON_PARTS = 3
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
_dump = _ENCODER.encode  # the C encoder; one row a line, no pure-Python indent


def report_document(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> dict:
    """The version-2 report document of a list of result events (docs/reports.md), as JSON."""
    return {
        k: json.loads("[" + ",".join(v.texts) + "]") if isinstance(v, (ContentTable, _Rows)) else v
        for k, v in _document(events, failing).items()
    }


def build_report(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> dict:
    """The report with every cell in full (the version-1 shape): what the other writers render."""
    return read_report(_document(events, failing))


def write_json(
    events: Iterable[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    """The version-2 document, one cell row or table entry a line (the C encoder throughout)."""
    doc = _document(events, failing)
    w = stream.write
    w("{\n")
    last = len(doc) - 1
    for n, (key, value) in enumerate(doc.items()):
        w(f"{_dump(key)}: ")
        if key == "grid":
            w(f'{{"profiles": {_dump(value["profiles"])}, "rows": [')
            w(",".join("\n" + _dump(row) for row in value["rows"]))
            w("\n]}" if value["rows"] else "]}")
        elif isinstance(value, (ContentTable, _Rows)):
            w("[" + ",".join("\n" + text for text in value.texts) + ("\n]" if value else "]"))
        elif isinstance(value, list) and key in _ROWS:
            w("[" + ",".join("\n" + _dump(item) for item in value) + ("\n]" if value else "]"))
        else:
            w(_dump(value))
        w(",\n" if n < last else "\n")
    w("}\n")


def _document(events: Iterable[Event], failing: Iterable[str]) -> dict:
    """The version-2 document with its tables as ``ContentTable`` (their entries' JSON text)."""
    events = typed_events(events)
    failing = list(failing)
    scope = gate_scope(events, failing)  # every run's profiles: a merged file as its shards
    listed: dict[str, ListedProfile] = {}  # each profile as the first run lists it
    for e in events:
        if isinstance(e, RunStarted):
            for p in e.profiles:
                listed.setdefault(p.name, p)
    build = _ReportBuilder(scope, list(run_profiles(events)))
    for e in events:
        build.add(e)
    doc = build.document(listed)
    first = doc["runs"][0] if doc["runs"] else _run_record(RunStarted())
    complete = bool(doc["runs"]) and all(
        r["finished"] and r["measured"] and not r["interrupted"] for r in doc["runs"]
    )
    return {
        "format": FORMAT,
        "version": VERSION,
        "generated_by": {"name": "mcp-matrix", "version": __version__},
        "mcp_matrix": first["mcp_matrix"],
        "server": first["server"],
        "complete": complete,
        "release_failing": failing,
        **doc,
    }


_ROWS = ("runs", "profiles", "legend", "skipped", "profile_errors")


class _Rows:
    """The cell rows as their JSON text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __len__(self) -> int:
        return len(self.texts)


class _DocTable(ContentTable):
    """A table of the document: written as its entries' JSON text, one a line. Its entries are
    made here (a cell's pointer, a finding's entry), so they are looked up by value, never kept
    by identity as ``ContentTable`` keeps values shared by reference."""

    def __init__(self) -> None:
        super().__init__()
        self._strings: dict[str, int] = {}

    def ref(self, value: JSON) -> int:
        """A string by value; any other value made here by its text alone (it is not kept)."""
        key = value if isinstance(value, str) else _dump(value)
        known = self._strings.get(key)
        if known is None:
            known = self._strings[key] = len(self.texts)
            self.texts.append(_dump(value) if key is value else key)
        return known


class _ReportBuilder:
    """One pass over the events: runs, cells as rows, each distinct value once in a table."""

    def __init__(self, scope: Scope, profiles: list[str]) -> None:
        self.scope = scope
        self.runs: list[dict] = []
        self.snapshots: list[_Tools] = []
        self.profiles = {name: i for i, name in enumerate(profiles)}
        self.tools: dict[str, int] = {}
        self.worst: list[dict[int, str]] = []  # per tool: profile position -> worst verdict
        self.cells = _Rows()
        self.skipped: list[dict] = []
        self.profile_errors: list[dict] = []
        self.counts: dict[str, int] = {}
        self.kinds = {"discovery": 0, "call": 0}
        self.release_failing = 0
        self.details, self.findings, self.evidence = _DocTable(), _DocTable(), _DocTable()
        self.shapes, self.texts = SchemaTable(), _DocTable()
        # (run, verdict, weakest evidence, hash of the findings) -> (the findings, the answer)
        self._discovery: dict[tuple, tuple[tuple, tuple[int, Mapping | None]]] = {}
        # a typed finding or evidence read once and shared by many cells (read_typed's memo):
        # its entry by identity, (the value, its entry's number, the entry), the value held
        self._finding_refs: dict[tuple[int, str | None], tuple[CellFinding, int, dict]] = {}
        self._evidence_refs: dict[int, tuple[CellEvidence, int]] = {}
        self.findings_count = 0

    def run_index(self) -> int:
        if not self.runs:  # events before any run-started (a hand-merged file): an anonymous run
            self.runs.append(_run_record(RunStarted()))
            self.snapshots.append(_Tools({}))
        return len(self.runs) - 1

    def add(self, e: Event) -> None:
        if isinstance(e, RunStarted):
            self.runs.append(_run_record(e))
            self.snapshots.append(_Tools({}))
        elif isinstance(e, SnapshotTaken):
            self.snapshots[self.run_index()] = _Tools(e.snapshot)
        elif isinstance(e, RunFinished):
            _finish(self.runs[self.run_index()], e)
        elif isinstance(e, (DiscoveryCell, CallCell)):
            self.cell(e)
        elif isinstance(e, Skipped):
            run = self.runs[self.run_index()]["run_id"]
            self.skipped.append(
                {
                    "run": run,
                    "profile": e.profile,
                    "tool": e.tool,
                    "case": e.case,
                    "reason": e.reason,
                }
            )
        elif isinstance(e, ProfileError):
            run = self.runs[self.run_index()]["run_id"]
            self.profile_errors.append({"run": run, "profile": e.profile, "error": e.error})

    def cell(self, e: Cell) -> None:
        run = self.run_index()
        tools = self.snapshots[run]
        profile = self.profiles.setdefault(e.profile, len(self.profiles))
        tool = self.tools.get(e.tool)
        if tool is None:
            tool = self.tools[e.tool] = len(self.tools)
            self.worst.append({})
        verdict = e.verdict
        if isinstance(e, DiscoveryCell):
            index = e.index if e.index is not None else tools.index.get(e.tool)
            detail, primary = self.discovery_detail(e, run, index, tools)
            if primary is None:
                pointer = _tool_pointer(index)
            else:
                pointer = primary["snapshot_pointer"] or _under(index, _s(primary["pointer"]))
            name = None if e.model_name is None else self.texts.ref(e.model_name)
            schema = None if e.model_schema is None else self.shapes.ref(e.model_schema)
            self.kinds["discovery"] += 1
        else:
            index = tools.index.get(e.tool)
            raw = tools.tools[index] if index is not None else None
            detail = self.details.ref(self.call_detail(e, raw))
            pointer = _call_pointer(index, e.mutations)
            name = schema = None
            self.kinds["call"] += 1
        fails = self.scope.fails(e)
        self.release_failing += fails
        self.counts[verdict] = self.counts.get(verdict, 0) + 1
        self.findings_count += is_finding(verdict)
        worst = self.worst[tool]
        held = worst.get(profile)
        if held is None or rank(verdict) < rank(held):
            worst[profile] = verdict
        at = None if pointer is None else self.texts.ref(pointer)
        # a row's JSON text (a list of 9 numbers is 5x its text in memory, 180,000 times)
        self.cells.texts.append(_dump([run, profile, tool, index, detail, fails, at, name, schema]))

    def discovery_detail(
        self, e: DiscoveryCell, run: int, index: int | None, tools: _Tools
    ) -> tuple[int, Mapping | None]:
        """The detail of a discovery cell and its deciding finding's entry, made once per
        distinct (run, verdict, findings): a culprit's pointer depends on the run's snapshot."""
        key = (run, e.verdict, e.weakest_evidence, hash(e.findings))
        held = self._discovery.get(key)
        if held is not None and held[0] == e.findings:  # equal, not a hash collision
            return held[1]
        refs = [self.finding_ref(f, tools) for f in e.findings]
        findings = [ref for ref, _ in refs]
        entries = [entry for _, entry in refs]
        primary = primary_finding(e.findings, e.verdict)
        entry = None if primary is None else entries[e.findings.index(primary)]
        detail = {  # its reason, behaviours and evidence are its findings' (read_report)
            "kind": "discovery",
            "verdict": e.verdict,
            "blast_radius": primary.blast_radius if primary else None,
            "weakest_evidence": e.weakest_evidence,
            "advice": self.text(advice_for(e, None)),
            "findings": findings,
        }
        known = (self.details.ref(detail), entry)
        self._discovery.setdefault(key, (e.findings, known))
        return known

    def finding_ref(self, f: CellFinding, tools: _Tools) -> tuple[int, dict]:
        """A finding's number in the findings table, and its entry."""
        at = None
        if (
            f.culprit
        ):  # a list-level failure reported on every tool: point at the tool that caused it
            place = tools.index.get(f.culprit)
            at = None if place is None else _under(place, _s(f.pointer))
        held = self._finding_refs.get((id(f), at))
        if held is not None and held[0] is f:
            return held[1], held[2]
        entry = {
            "code": f.code,
            "message": f.message,
            "pointer": _s(f.pointer),
            "snapshot_pointer": at,
            "lost": bool(f.lost),
            "blast_radius": f.blast_radius,
            "behaviour": _s(f.behaviour),
            "evidence": [self.evidence_ref(ev) for ev in f.evidence or ()],
        }
        ref = self.findings.ref(entry)
        self._finding_refs[(id(f), at)] = (f, ref, entry)
        return ref, entry

    def text(self, value: str | None) -> int | None:
        return None if value is None else self.texts.ref(value)

    def evidence_ref(self, ev: CellEvidence) -> int:
        held = self._evidence_refs.get(id(ev))
        if held is not None and held[0] is ev:
            return held[1]
        ref = self.evidence.ref(ev.to_json())
        self._evidence_refs[id(ev)] = (ev, ref)
        return ref

    def call_detail(self, e: CallCell, raw_tool: Mapping | None) -> dict:
        evidence = dict.fromkeys(("", self.evidence_ref(ev)) for ev in e.evidence)
        return {
            "kind": "call",
            "verdict": e.verdict,
            "case": e.case,
            "reason": self.text(e.reason),
            "blast_radius": "tool" if e.verdict == "unreachable" else "call",
            "behaviours": list(e.behaviours),
            "evidence": [list(k) for k in evidence],
            "weakest_evidence": e.weakest_evidence,
            "advice": self.text(advice_for(e, raw_tool)),
            "findings": [],
            "origin": e.origin,
            "expect": e.expect,
            "mutations": [m.to_json() for m in e.mutations],
            "answer": e.answer,
            "stale": bool(e.stale),
            "sometimes": list(e.sometimes),
            "frequency": e.frequency,
            "variants": [v.to_json() for v in e.variants or ()],
        }

    def document(self, known: Mapping[str, ListedProfile]) -> dict:
        names = list(self.profiles)
        verdicts = [v for v in SEVERITY if v in self.counts]
        verdicts += sorted((v for v in self.counts if v not in SYMBOL), key=rank)
        place = {v: i for i, v in enumerate(verdicts)}
        width = len(names)
        rows = []
        for worst in self.worst:
            row: list[int | None] = [None] * width
            for p, v in worst.items():
                row[p] = place[v]
            rows.append(row)
        cells = len(self.cells.texts)
        return {
            "runs": self.runs,
            "profiles": [_profile(known.get(n), n) for n in names],
            "tools": list(self.tools),
            "legend": [
                {"verdict": v, "symbol": SYMBOL.get(v, "?"), "meaning": MEANING.get(v, "")}
                for v in verdicts
            ],
            "grid": {"profiles": names, "rows": rows},
            "columns": list(COLUMNS),
            "cells": self.cells,
            "skipped": self.skipped,
            "profile_errors": self.profile_errors,
            "counts": {
                "verdicts": {v: self.counts[v] for v in verdicts},
                "cells": cells,
                "discovery": self.kinds["discovery"],
                "calls": self.kinds["call"],
                "findings": self.findings_count,
                "release_failing": self.release_failing,
                "skipped": len(self.skipped),
                "profile_errors": len(self.profile_errors),
            },
            "details": self.details,
            "findings": self.findings,
            "evidence": self.evidence,
            "schemas": self.shapes.schemas,
            "properties": self.shapes.properties,
            "texts": self.texts,
        }


def read_report(doc: object, where: str = "report") -> dict:
    """A report document of any readable version in the version-1 shape: ``cells`` with every
    key in full, ``grid.rows`` as ``{"tool", "cells": [verdict or null]}``."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise InputError(f"not an {FORMAT} document", where=where)
    version = doc.get("version")
    if version not in READABLE:
        raise InputError(
            f"report version {version!r} is not supported; expected one of {list(READABLE)}",
            where=where,
        )
    if version == 1:
        return dict(doc)
    try:
        return _expand(doc, where)
    except (KeyError, TypeError, IndexError) as exc:
        raise InputError(
            f"malformed version-2 report (missing or wrong {exc})", where=where
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), where=where) from None


def _expand(doc: Mapping[str, Any], where: str) -> dict:
    names = ("details", "findings", "evidence", "schemas", "properties", "texts")
    tables = {k: _entries(doc[k]) for k in names}
    texts, evidence = tables["texts"], tables["evidence"]
    schemas = [
        whole_schema(s, tables["properties"], f"{where}: properties") for s in tables["schemas"]
    ]
    legend = {x["verdict"]: x for x in doc["legend"]}
    verdicts = [x["verdict"] for x in doc["legend"]]
    runs, profiles, tools = doc["runs"], doc["grid"]["profiles"], doc["tools"]

    def ev_pair(pair: Sequence) -> dict:
        e = resolve(evidence, pair[1], f"{where}: evidence")
        return {
            "behaviour": _s(pair[0]),
            "level": _s(e.get("level")),
            "source": _s(e.get("source")),
            "note": _s(e.get("note")),
        }

    findings = [
        {**f, "evidence": [dict(resolve(evidence, x, f"{where}: evidence")) for x in f["evidence"]]}
        for f in tables["findings"]
    ]
    details = []
    for d in tables["details"]:
        verdict = d["verdict"]
        shown = legend.get(verdict, {})
        call = d["kind"] == "call"
        found = [resolve(findings, f, f"{where}: findings") for f in d["findings"]]
        if call:
            reason = resolve(texts, d["reason"], f"{where}: texts")
            behaviours = d["behaviours"]
            cited = _dedupe_evidence(ev_pair(p) for p in d["evidence"])
        else:  # a discovery cell's reason, behaviours and evidence are its findings'
            reason = discovery_reason(verdict, found)
            behaviours = list(dict.fromkeys(f["behaviour"] for f in found if f["behaviour"]))
            cited = _dedupe_evidence(
                {**e, "behaviour": f["behaviour"]} for f in found for e in f["evidence"]
            )
        details.append(
            {
                "kind": d["kind"],
                "head": {  # the keys between a cell's tool and its release_failing
                    "case": d.get("case") if call else None,
                    "verdict": verdict,
                    "symbol": shown.get("symbol", SYMBOL.get(verdict, "?")),
                    "meaning": shown.get("meaning", MEANING.get(verdict, "")),
                    "severity": rank(verdict),
                    "finding": is_finding(verdict),
                },
                "tail": {
                    "reason": reason,
                    "blast_radius": d["blast_radius"],
                    "behaviours": behaviours,
                    "evidence": cited,
                    "weakest_evidence": d["weakest_evidence"],
                },
                "advice": None
                if d["advice"] is None
                else resolve(texts, d["advice"], f"{where}: texts"),
                "findings": found,
                "call": {
                    k: d.get(k, _CALL_DEFAULTS[k]) if call else _CALL_DEFAULTS[k] for k in CALL_KEYS
                },
            }
        )
    cells = []
    for row in _entries(doc["cells"]):
        if not isinstance(row, list) or len(row) != len(COLUMNS):
            raise ValueError(f"{where}: a cell is not a row of {list(COLUMNS)}")
        run, profile, tool, index, detail, fails, pointer, name, schema = row
        d = resolve(details, detail, f"{where}: details")
        cell = {
            "kind": d["kind"],
            "run": resolve(runs, run, f"{where}: runs")["run_id"],
            "profile": resolve(profiles, profile, f"{where}: profiles"),
            "tool": resolve(tools, tool, f"{where}: tools"),
        }
        cell.update(d["head"])
        cell["release_failing"] = bool(fails)
        cell.update(d["tail"])
        cell["pointer"] = None if pointer is None else resolve(texts, pointer, f"{where}: texts")
        cell["advice"] = d["advice"]
        cell["findings"] = [
            f
            if f["snapshot_pointer"] is not None
            else {**f, "snapshot_pointer": _under(index, _s(f["pointer"]))}
            for f in d["findings"]
        ]
        cell["model_name"] = None if name is None else resolve(texts, name, f"{where}: texts")
        cell["model_schema"] = (
            None if schema is None else resolve(schemas, schema, f"{where}: schemas")
        )
        cell.update(d["call"])
        cells.append(cell)
    out = {k: doc[k] for k in _KEPT if k in doc}
    out["version"] = 1
    out["grid"] = {
        "profiles": list(profiles),
        "rows": [
            {
                "tool": t,
                "cells": [
                    None if v is None else resolve(verdicts, v, f"{where}: legend") for v in row
                ],
            }
            for t, row in zip(tools, doc["grid"]["rows"])
        ],
    }
    out["cells"] = cells
    return out


_CALL_DEFAULTS: dict[str, JSON] = {
    "origin": None,
    "expect": None,
    "mutations": [],
    "answer": None,
    "stale": False,
    "sometimes": [],
    "frequency": None,
    "variants": [],
}
_KEPT = (
    "format",
    "version",
    "generated_by",
    "mcp_matrix",
    "server",
    "complete",
    "runs",
    "profiles",
    "tools",
    "release_failing",
    "legend",
    "grid",
    "cells",
    "skipped",
    "profile_errors",
    "counts",
)


def _entries(table: object) -> list:
    if isinstance(table, (ContentTable, _Rows)):
        return json.loads("[" + ",".join(table.texts) + "]")
    if not isinstance(table, list):
        raise TypeError("a table is not a list")
    return table


def _profile(p: ListedProfile | None, name: str) -> dict:
    p = p or ListedProfile(name)
    return {
        "name": name,
        "client": p.client,
        "versions": p.versions,
        "models": p.models,
        "weakest_evidence": p.weakest_evidence,
    }


def _under(index: int | None, rel: str) -> str | None:
    """A pointer relative to a tool as a pointer into the snapshot document."""
    base = _tool_pointer(index)
    if base is None:
        return None
    return base + (rel if rel.startswith("/") else "")


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


def primary_finding(findings: Sequence[_F], verdict: str) -> _F | None:
    """The finding that decided a discovery cell: the last one for a hidden or dropped tool,
    else the first that lost something, else the first (a cell's findings, or a report's)."""
    if not findings:
        return None
    if verdict in LOST:
        return findings[-1]
    return next((f for f in findings if f.lost), findings[0])


class _Losing(Protocol):
    @property
    def lost(self) -> bool | None: ...


_F = TypeVar("_F", bound=_Losing)


def discovery_reason(verdict: str, findings: Sequence[Mapping[str, Any]]) -> str:
    """A discovery cell's reason: the deciding finding's message for a lost tool, else the
    messages of the findings that lost something (the first three)."""
    if verdict == "visible" or not findings:
        return ""
    if verdict in LOST:
        return findings[-1]["message"]
    lost = [f for f in findings if f.get("lost")] or findings
    text = "; ".join(f["message"] for f in lost[:_REASON_PARTS])
    return text + (f" (and {len(lost) - _REASON_PARTS} more)" if len(lost) > _REASON_PARTS else "")


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

    def __init__(self, snapshot: JSON) -> None:
        entries = snapshot.get("tools") if isinstance(snapshot, Mapping) else None
        entries = entries if isinstance(entries, list) else []
        self.tools = [t.get("tool") if isinstance(t, Mapping) else None for t in entries]
        self.index: dict[str, int] = {}
        for i, t in enumerate(self.tools):
            name = t.get("name") if isinstance(t, Mapping) else None
            if isinstance(name, str):
                self.index.setdefault(name, i)


def _tool_pointer(index: int | None) -> str | None:
    return None if index is None else f"/tools/{index}/tool"


def _call_pointer(index: int | None, mutations: Sequence[CellMutation]) -> str | None:
    """The input schema of the called tool, at the property the first mutation touched."""
    base = _tool_pointer(index)
    if base is None:
        return None
    if not mutations:
        return base + "/inputSchema"
    parts = mutations[0].pointer.split("/")[1:]
    path = "/inputSchema"
    for p in parts:
        path += "/items" if p.isdigit() else f"/properties/{p}"
    return base + path


def describe_target(target: object) -> str:
    """One line for a (masked) target as the run-started event records it: its kind's own line
    (``mcp_matrix.targets.kinds.describe_line``, so an SSE target reads ``sse:``, not ``http:``)."""
    from mcp_matrix.targets.kinds import describe_line

    return describe_line(target)


def _s(value: object) -> str:
    return "" if value is None else str(value)


# -- the schema of the document ----------------------------------------------------------------

SCHEMA: dict = load_schema("report")  # published: mcp_matrix/core/schemas/report.schema.json


__all__ = [
    "COLUMNS",
    "FORMAT",
    "READABLE",
    "SCHEMA",
    "VERSION",
    "build_report",
    "describe_target",
    "primary_finding",
    "read_report",
    "report_document",
    "write_json",
]
