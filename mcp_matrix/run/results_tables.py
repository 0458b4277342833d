"""The results stream's shared tables (version 3): each distinct value a line of its own, once.

A 5,000-tool run through 36 profiles has 180,000 discovery cells but only some 20,000 distinct
ways a client treats a tool, a few thousand distinct findings of a few dozen kinds, and schemas
that share most of their parts. Version 2 wrote each cell in full (findings with their evidence,
~1 KB each) and each distinct schema whole: 236 MB. Version 3 writes every distinct value once,
as an entry line before the first line that names it by number (docs/results.md):

- ``node``: a schema or sub-schema, its sub-schemas by number (mcp_matrix.core.schema_nodes, as
  ``discover --json`` version 4 stores them);
- ``evidence``: one evidence object; ``kind``: what findings share (``KIND``), its evidence by
  number; ``finding``: ``[kind, message, pointer]``;
- ``row``: a cell without its profile (``ROW``), its schema and findings by number;
- ``cell``: a discovery event, ``profile`` and ``row``;
- ``answer``: a call's answer summary; ``outcome``: a call event but its profile, its answer and
  evidence by number (the profiles a call treats alike share it); ``called``: a call event,
  ``profile`` and ``outcome``.

Each table counts from 0 after every ``run-started`` line (a file of concatenated runs reads as
they were). The writer (``Tables``) makes the lines; the reader (``TableReader``) checks each entry
once, when it is defined, and gives every ``cell`` line back as the discovery event it stands for.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from mcp_matrix.core.content_table import ContentTable, canonical
from mcp_matrix.core.event_values import CellEvidence, CellFinding
from mcp_matrix.core.events import CallCell, DiscoveryCell, EventError, check_event
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schema_nodes import SchemaNodes, SchemaReader
from mcp_matrix.core.schemas import checker

# A row of ``kind``: what a finding shares with others (most differ only in message and pointer).
KIND = ("code", "lost", "materiality", "blast_radius", "behaviour", "evidence", "culprit")
FINDING = ("kind", "message", "pointer")
# A row of ``row``: a discovery cell but its profile (its schema and findings by number).
ROW = ("tool", "index", "verdict", "model_name", "model_schema", "findings", "weakest_evidence")
# The line kinds only version 3 writes (entries, and a discovery cell by reference).
WIRE_ONLY = (
    "node",
    "text",
    "evidence",
    "kind",
    "finding",
    "row",
    "cell",
    "answer",
    "outcome",
    "called",
)

_dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


class EntryError(ValueError):
    """A version-3 line that does not follow its form, or names an entry never defined."""


class Tables:
    """The writer's side: a discovery or call cell as its line, after the lines of the entries
    it is the first to name. One per run; not thread-safe (the results writer holds its lock)."""

    def __init__(self) -> None:
        self._out: list[str] = []
        self.nodes = SchemaNodes(self._line("node"))
        self.texts, self.kinds = ContentTable(), ContentTable()
        self.findings, self.rows = ContentTable(), ContentTable()
        self._contents: dict[str, dict[str, int]] = {}  # evidence, answers, outcomes: by text
        self._texts: dict[str, int] = {}
        self._by_id: dict[int, int] = {}  # a typed finding or evidence (shared by the run)
        self._lists: dict[int, list[int]] = {}  # a cell's findings tuple, by identity
        self._rows: dict[tuple, int] = {}
        self._held: list[object] = []  # keeps what is looked up by identity alive

    def _line(self, label: str) -> Callable[[int, str], None]:
        def add(number: int, text: str) -> None:
            self._out.append(f'{{"{label}":{text}}}')

        return add

    def _entry(self, table: ContentTable, label: str, value: JSON) -> int:
        size = len(table)
        number = table.number(canonical(value))  # a list made for this look-up: not held
        if number == size:
            self._line(label)(number, table.texts[number])
        return number

    def _content(self, label: str, value: JSON) -> int:
        """The number of ``value`` in table ``label``, keyed by its JSON text alone (nothing held:
        a call's values are new objects each time)."""
        known = self._contents.setdefault(label, {})
        text = _dump(value)
        number = known.get(text)
        if number is None:
            number = known[text] = len(known)
            self._out.append(f'{{"{label}":{text}}}')
        return number

    def _text(self, text: str) -> int:
        known = self._texts.get(text)
        if known is None:
            known = self._texts[text] = self._entry(self.texts, "text", text)
        return known

    def cell(self, cell: DiscoveryCell) -> list[str]:
        """The lines that write ``cell``: new entries first, then its ``cell`` line."""
        self._out = out = []
        schema = None if cell.model_schema is None else self.nodes.ref(cell.model_schema)
        findings = self._lists.get(id(cell.findings))
        if findings is None:
            findings = self._lists[id(cell.findings)] = [self._finding(f) for f in cell.findings]
            self._held.append(cell.findings)
        name = None if cell.model_name is None else self._text(cell.model_name)
        head = (self._text(cell.tool), cell.index, cell.verdict, name, schema)
        key = (*head, tuple(findings), cell.weakest_evidence)
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = self._entry(
                self.rows, "row", [*head, findings, cell.weakest_evidence]
            )
        out.append(f'{{"cell":[{self._text(cell.profile)},{row}]}}')
        return out

    def snapshot(self, event: dict[str, JSON]) -> list[str]:
        """The snapshot line, each listed tool's ``inputSchema`` a node number (``nodes: true``):
        the schemas most cells show unchanged are written once, for both."""
        self._out = out = []
        doc = event.get("snapshot")
        if not isinstance(doc, dict) or not isinstance(doc.get("tools"), list):
            return [_dump(event)]
        tools: list[Any] = doc["tools"]
        written = []
        for entry in tools:
            tool = entry.get("tool") if isinstance(entry, dict) else None
            if isinstance(tool, dict) and "inputSchema" in tool:
                tool = {**tool, "inputSchema": self.nodes.ref(tool["inputSchema"])}
                entry = {**entry, "tool": tool}
            written.append(entry)
        out.append(_dump({**event, "snapshot": {**doc, "tools": written}, "nodes": True}))
        return out

    def _finding(self, f: CellFinding) -> int:
        known = self._by_id.get(id(f))
        if known is None:
            evidence = None if f.evidence is None else [self._evidence(e) for e in f.evidence]
            shared = [f.code, f.lost, f.materiality, f.blast_radius, f.behaviour, evidence]
            kind = self._entry(self.kinds, "kind", [*shared, f.culprit])
            known = self._entry(self.findings, "finding", [kind, f.message, f.pointer])
            self._by_id[id(f)] = known
            self._held.append(f)
        return known

    def _evidence(self, e: CellEvidence) -> int:
        known = self._by_id.get(id(e))
        if known is None:
            known = self._by_id[id(e)] = self._content("evidence", e.to_json())
            self._held.append(e)
        return known

    def call(self, cell: CallCell) -> list[str]:
        """The lines that write ``cell``: its answer and each evidence an entry, the rest but its
        profile one ``outcome`` (the profiles a call treats alike share it), then its ``called``
        line."""
        self._out = out = []
        event = cell.to_json()
        outcome = {k: v for k, v in event.items() if k not in ("event", "profile")}
        outcome["answer"] = self._content("answer", cell.answer)
        # by content: a call's evidence is built anew for each call (a finding's is shared)
        outcome["evidence"] = [self._content("evidence", e.to_json()) for e in cell.evidence]
        number = self._content("outcome", outcome)
        out.append(f'{{"called":[{self._text(cell.profile)},{number}]}}')
        return out


class TableReader:
    """The reader's side: each entry line checked once and kept (its parts resolved, so equal
    parts are one object); a ``cell`` or ``called`` line back as its discovery or call event.
    A problem is an EntryError saying what was expected (the caller adds the file and line)."""

    def __init__(self) -> None:
        self.version = 0  # the file's, from its first line
        self.reset()

    def reset(self) -> None:
        """Every table empty (a ``run-started`` line starts a run's numbering)."""
        self.nodes: list[JSON] = []
        self.schemas = SchemaReader(self.nodes, "node")
        self.texts: list[str] = []
        self.evidence: list[JSON] = []
        self.kinds: list[dict[str, Any]] = []
        self.findings: list[dict[str, JSON]] = []
        self.rows: list[dict[str, JSON]] = []
        self.answers: list[JSON] = []
        self.outcomes: list[dict[str, JSON]] = []
        self._lists: dict[tuple, list] = {}  # equal findings lists are one list

    def read(self, line: dict[str, JSON]) -> dict[str, JSON] | None:
        """The event a ``cell`` or ``called`` line stands for; None for an entry line (kept)."""
        if len(line) != 1:
            raise EntryError(f"expected an event or one entry ({', '.join(WIRE_ONLY)}) a line")
        ((label, value),) = line.items()
        if label == "cell":
            profile, number = _row(value, ("profile", "row"), "cell")
            profile = _ref(self.texts, profile, "cell: profile", "text")
            row = _ref(self.rows, number, "cell: row", "row")
            return {"event": "discovery", "profile": profile, **row}
        if label == "called":
            profile, number = _row(value, ("profile", "outcome"), "called")
            profile = _ref(self.texts, profile, "called: profile", "text")
            outcome = _ref(self.outcomes, number, "called: outcome", "outcome")
            return {"event": "call", "profile": profile, **outcome}
        if label == "node":
            self.schemas.add(value)  # its sub-schemas must be earlier nodes
        elif label == "text":
            if not isinstance(value, str):
                raise EntryError("text: expected a string")
            self.texts.append(sys.intern(value))
        elif label == "answer":
            self.answers.append(value)
        elif label in ("evidence", "kind", "finding", "row", "outcome"):
            getattr(self, label if label == "evidence" else f"{label}s").append(
                getattr(self, f"_{label}")(value)
            )
        else:
            raise EntryError(f"unknown entry {label!r}; expected one of {', '.join(WIRE_ONLY)}")
        return None

    def _outcome(self, value: JSON) -> dict[str, JSON]:
        if not isinstance(value, dict) or "event" in value or "profile" in value:
            raise EntryError("outcome: expected a call event but its 'event' and 'profile'")
        outcome = dict(value)
        outcome["answer"] = _ref(self.answers, value.get("answer"), "outcome: answer", "answer")
        refs = value.get("evidence")
        if not isinstance(refs, list):
            raise EntryError("outcome: expected 'evidence': a list of evidence numbers")
        outcome["evidence"] = [
            _ref(self.evidence, n, "outcome: evidence", "evidence") for n in refs
        ]
        try:  # its evidence was checked when it was defined; checked once for every profile
            check_event({"event": "call", "profile": "", **outcome})
        except EventError as exc:
            raise EntryError(f"outcome: {exc.message}") from None
        return outcome

    def snapshot(self, event: dict[str, JSON]) -> dict[str, JSON]:
        """A snapshot event with its tools' schemas back in place of their node numbers."""
        if event.pop("nodes", None) is not True:
            return event
        doc = event.get("snapshot")
        tools = doc.get("tools") if isinstance(doc, dict) else None
        for entry in tools if isinstance(tools, list) else ():  # not a list: no schema in it
            tool = entry.get("tool") if isinstance(entry, dict) else None
            if isinstance(tool, dict) and "inputSchema" in tool:
                tool["inputSchema"] = self.schemas.whole(tool["inputSchema"])
        return event

    def _evidence(self, value: JSON) -> JSON:
        return _checked("evidence", value)

    def _kind(self, value: JSON) -> dict[str, Any]:
        kind = dict(zip(KIND, _row(value, KIND, "kind")))
        refs = kind["evidence"]
        if refs is not None:
            if not isinstance(refs, list):
                raise EntryError("kind: expected 'evidence': a list of evidence numbers")
            kind["evidence"] = [_ref(self.evidence, n, "kind: evidence", "evidence") for n in refs]
        return kind

    def _finding(self, value: JSON) -> dict[str, JSON]:
        number, message, pointer = _row(value, FINDING, "finding")
        kind = _ref(self.kinds, number, "finding: kind", "kind")
        finding = {"code": kind["code"], "message": message, "pointer": pointer}
        for key in KIND[1:]:
            finding[key] = kind[key]
        finding = {k: v for k, v in finding.items() if v is not None}
        _checked("finding", finding)
        return finding

    def _row(self, value: JSON) -> dict[str, JSON]:
        row = dict(zip(ROW, _row(value, ROW, "row")))
        row["tool"] = _ref(self.texts, row["tool"], "row: tool", "text")
        if row["model_name"] is not None:
            row["model_name"] = _ref(self.texts, row["model_name"], "row: model_name", "text")
        schema = row["model_schema"]
        row["model_schema"] = None if schema is None else self.schemas.whole(schema)
        refs = row["findings"]
        if not isinstance(refs, list):
            raise EntryError("row: expected 'findings': a list of finding numbers")
        key = tuple(refs)
        findings = self._lists.get(key) if all(type(n) is int for n in key) else None
        if findings is None:  # the numbers checked before they key anything
            findings = [_ref(self.findings, n, "row: findings", "finding") for n in refs]
            self._lists[key] = findings
        try:  # its findings were checked when they were defined
            check_event({"event": "discovery", "profile": "", **row, "findings": []})
        except EventError as exc:
            raise EntryError(f"row: {exc.message}") from None
        row["findings"] = findings
        return row


def _checked(part: str, value: JSON) -> JSON:
    """``value`` when it follows the results schema's ``part`` (a finding leaves out the keys
    it lacks, as ``to_json`` writes it)."""
    problem = checker("results", part=part)(value)
    if problem is not None:
        raise EntryError(f"{part}: {problem.key}: {problem.message}")
    return value


def _ref(table: list, ref: object, where: str, label: str) -> Any:
    """The entry ``ref`` names; a number no line before defined is the reader's ValueError."""
    if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < len(table):
        article = "an" if label[0] in "aeiou" else "a"
        raise EntryError(
            f"{where}: expected the number of {article} {label} entry defined before this line "
            f"({len(table)} defined), got {ref!r}"
        )
    return table[ref]


def _row(value: JSON, columns: tuple[str, ...], kind: str) -> list:
    if not isinstance(value, list) or len(value) != len(columns):
        raise EntryError(f"{kind}: expected {kind!r}: a row of {list(columns)}")
    return value


__all__ = ["FINDING", "KIND", "ROW", "WIRE_ONLY", "EntryError", "TableReader", "Tables"]
