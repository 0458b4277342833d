"""The JSON report (``format: mcp-matrix.report``, ``version: 3``; docs/reports.md).

``report_document`` turns a results stream (finished, interrupted, or several runs merged) into
one document: the runs, the profiles, the tools x clients grid, every cell with its reason,
evidence, snapshot pointer and fix advice, the skipped calls and the counts. It stores each
distinct value once: a cell is a row of numbers (``columns``) naming its entry in the tables
``details`` (what happened: verdict, findings, advice...; a discovery detail a row of
``DETAIL_COLUMNS``), ``findings`` (rows of ``FINDING_COLUMNS`` naming what findings share in
``kinds``), ``evidence``, ``schemas`` (their property schemas by number in ``properties``, as
``discover --json`` version 3) and ``texts`` (names, reasons, advice); a cell's pointer follows
from its detail and index. A 5,000-tool server through 36 clients wrote 548 MB in version 1
(each cell in full), 28.6 MB in version 2, 21.5 MB in version 3.

The document is written from the typed report (``mcp_matrix.report.model``), as every other
writer renders it, so every format says the same thing about every cell: ``write_model`` stores
its values once again, in the order the cells first name them; ``write_json`` reads the cells
one at a time (``stream_model``). ``mcp_matrix.report.json_read.read_report`` gives the
version-1 shape (every cell in full) of any version: the model's ``to_json()`` (``build_report``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import IO, Any

from mcp_matrix.core.collector import collector_paused
from mcp_matrix.core.content_table import ContentTable
from mcp_matrix.core.event_values import CellEvidence
from mcp_matrix.core.events import Event
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schemas import load_schema
from mcp_matrix.report.discovery_doc import SchemaTable
from mcp_matrix.report.document import FORMAT, Report, ReportCell, ReportFinding
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.model import read_model, stream_model

VERSION = 3
READABLE = (1, 2, 3)
# A version-3 cell, in order: positions in runs, profiles, tools; the tool's position in its
# run's snapshot; positions in details; 1 if it fails the release, else 0; positions in texts
# (model_name) and schemas. Its pointer follows from its detail and index (``read_report``).
COLUMNS = (
    "run",
    "profile",
    "tool",
    "index",
    "detail",
    "release_failing",
    "model_name",
    "schema",
)
# A discovery cell's detail (a call's is an object with its ``kind``): positions in texts
# (advice) and findings.
DETAIL_COLUMNS = ("verdict", "blast_radius", "weakest_evidence", "advice", "findings")
# A finding: a position in kinds, then what differs from one finding of a kind to the next.
FINDING_COLUMNS = ("kind", "message", "pointer", "snapshot_pointer")
KIND_COLUMNS = ("code", "lost", "blast_radius", "behaviour", "evidence")
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

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
_dump = _ENCODER.encode  # the C encoder; one row a line, no pure-Python indent


def report_document(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> dict:
    """The version-2 report document of a list of result events (docs/reports.md), as JSON."""
    buf = io.StringIO()
    write_json(events, buf, failing)
    return json.loads(buf.getvalue())


def build_report(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> dict:
    """The report with every cell in full (the version-1 shape): what the model holds."""
    return read_model(events, failing).to_json()


def write_json(
    events: Iterable[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    """The version-3 document of the report, one cell row or table entry a line: its cells
    read one at a time (``stream_model``), each kept only as its row's JSON text."""
    with collector_paused():
        cells = stream_model(events, failing)
        tables = _Tables()
        row, profiles, tools = tables.row, cells.profiles, cells.tools
        rows = [row(c, profiles[c.profile], tools[c.tool]) for c in cells]
        _write(cells.report(), stream, rows, tables)


def write_model(report: Report, stream: IO[str]) -> None:
    """The version-3 document of a typed report: its values stored once again, each distinct
    value an entry of a table in the order the cells first name it; the C encoder throughout."""
    tables = _Tables()
    profiles = {name: i for i, name in enumerate(report.grid.profiles)}
    tools = {name: i for i, name in enumerate(report.tools)}
    rows = [tables.row(c, profiles[c.profile], tools[c.tool]) for c in report.cells]
    _write(report, stream, rows, tables)


def _write(report: Report, stream: IO[str], rows: list[str], tables: _Tables) -> None:
    w = stream.write
    w("{\n")
    head: tuple[tuple[str, Any], ...] = (
        ("format", FORMAT),
        ("version", VERSION),
        ("generated_by", report.generated_by),
        ("mcp_matrix", report.mcp_matrix),
        ("server", report.server),
        ("complete", report.complete),
        ("release_failing", list(report.release_failing)),
    )
    for key, value in head:
        w(f"{_dump(key)}: {_dump(value)},\n")
    _rows(w, "runs", [r.to_json() for r in report.runs])
    _rows(w, "profiles", [p.to_json() for p in report.profiles])
    w(f'"tools": {_dump(list(report.tools))},\n')
    _rows(w, "legend", [x.to_json() for x in report.legend])
    place = {x.verdict: i for i, x in enumerate(report.legend)}
    grid = report.grid
    w(f'"grid": {{"profiles": {_dump(list(grid.profiles))}, "rows": [')
    w(",".join("\n" + _dump([None if v is None else place[v] for v in r.cells]) for r in grid.rows))
    w("\n]},\n" if grid.rows else "]},\n")
    w(f'"columns": {_dump(list(COLUMNS))},\n')
    w(f'"detail_columns": {_dump(list(DETAIL_COLUMNS))},\n')
    w(f'"finding_columns": {_dump(list(FINDING_COLUMNS))},\n')
    w(f'"kind_columns": {_dump(list(KIND_COLUMNS))},\n')
    w('"cells": [' + ",".join("\n" + row for row in rows) + ("\n],\n" if rows else "],\n"))
    _rows(w, "skipped", [s.to_json() for s in report.skipped])
    _rows(w, "profile_errors", [e.to_json() for e in report.profile_errors])
    w(f'"counts": {_dump(report.counts.to_json())},\n')
    last = len(tables.named()) - 1
    for n, (key, table) in enumerate(tables.named()):
        w(f"{_dump(key)}: [" + ",".join("\n" + text for text in table.texts))
        w(("\n]" if table.texts else "]") + (",\n" if n < last else "\n"))
    w("}\n")


def _rows(w: Any, key: str, items: list[dict]) -> None:
    w(f"{_dump(key)}: [" + ",".join("\n" + _dump(item) for item in items))
    w("\n],\n" if items else "],\n")


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


class _Tables:
    """The report's values stored once: each distinct value an entry, numbered as the cells
    first name it. A finding's evidence is looked up by identity first (it stays alive in the
    events while the report is written)."""

    def __init__(self) -> None:
        self.details, self.findings, self.kinds = _DocTable(), _DocTable(), _DocTable()
        self.evidence, self.texts, self.shapes = _DocTable(), _DocTable(), SchemaTable()
        self._discovery: dict[tuple[str | int | None, ...], int] = {}
        self._finding_refs: dict[tuple[str | bool | int | None, ...], int] = {}
        self._evidence_refs: dict[int, int] = {}

    def named(self) -> tuple[tuple[str, ContentTable], ...]:
        return (
            ("details", self.details),
            ("findings", self.findings),
            ("kinds", self.kinds),
            ("evidence", self.evidence),
            ("schemas", self.shapes.schemas),
            ("properties", self.shapes.properties),
            ("texts", self.texts),
        )

    def row(self, c: ReportCell, profile: int, tool: int) -> str:
        """A cell's row (``COLUMNS``) as JSON text, its values entered in the tables."""
        name = schema = None
        if c.kind == "discovery":
            detail = self.discovery(c)
            name = None if c.model_name is None else self.texts.ref(c.model_name)
            schema = None if c.model_schema is None else self.shapes.ref(c.model_schema)
        else:
            detail = self.details.ref(self.call(c))
        fails = 1 if c.release_failing else 0
        return _dump([c.run_index, profile, tool, c.index, detail, fails, name, schema])

    def discovery(self, c: ReportCell) -> int:
        """A discovery cell's detail (``DETAIL_COLUMNS``): its reason, behaviours and evidence
        are its findings'."""
        findings = [self.finding(f) for f in c.findings]
        key = (c.verdict, c.weakest_evidence, c.advice, c.blast_radius, *findings)
        known = self._discovery.get(key)
        if known is None:
            advice = self.text(c.advice)
            detail = [c.verdict, c.blast_radius, c.weakest_evidence, advice, findings]
            known = self._discovery[key] = self.details.ref(detail)
        return known

    def finding(self, f: ReportFinding) -> int:
        """A finding's entry (``FINDING_COLUMNS``): what it says, without its place under the
        cell's tool (profiles and tools share one entry)."""
        # what the entry says; the evidence by identity (it stays alive in the events)
        key: tuple[str | bool | int | None, ...] = (f.code, f.message, f.pointer)
        key += (f.culprit_pointer, f.lost, f.blast_radius, f.behaviour, id(f.evidence))
        known = self._finding_refs.get(key)
        if known is None:
            evidence = [self.evidence_ref(ev) for ev in f.evidence]
            kind = self.kinds.ref([f.code, f.lost, f.blast_radius, f.behaviour, evidence])
            # snapshot_pointer: the culprit's, else None (under the cell's tool: read_report)
            entry: list[JSON] = [kind, f.message, f.pointer, f.culprit_pointer]
            known = self._finding_refs[key] = self.findings.ref(entry)
        return known

    def evidence_ref(self, ev: CellEvidence) -> int:
        known = self._evidence_refs.get(id(ev))
        if known is None:
            known = self._evidence_refs[id(ev)] = self.evidence.ref(ev.to_json())
        return known

    def text(self, value: str | None) -> int | None:
        return None if value is None else self.texts.ref(value)

    def call(self, c: ReportCell) -> dict[str, JSON]:
        evidence = dict.fromkeys(("", self.evidence_ref(ev)) for ev in c.sources)
        return {
            "kind": "call",
            "verdict": c.verdict,
            "case": c.case,
            "reason": self.text(c.reason),
            "blast_radius": c.blast_radius,
            "behaviours": list(c.behaviours),
            "evidence": [list(k) for k in evidence],
            "weakest_evidence": c.weakest_evidence,
            "advice": self.text(c.advice),
            "findings": [],
            "origin": c.origin,
            "expect": c.expect,
            "mutations": [m.to_json() for m in c.mutations],
            "answer": c.answer,
            "stale": c.stale,
            "sometimes": list(c.sometimes),
            "frequency": c.frequency,
            "variants": [v.to_json() for v in c.variants],
        }


def describe_target(target: object) -> str:
    """One line for a (masked) target as the run-started event records it: its kind's own line
    (``mcp_matrix.targets.kinds.describe_line``, so an SSE target reads ``sse:``, not ``http:``)."""
    from mcp_matrix.targets.kinds import describe_line

    return describe_line(target)


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
    "report_document",
    "write_json",
    "write_model",
]
