"""The report's cells in full, one at a time as the events are read: a cell's symbol, meaning,
advice, findings under the run's snapshot and evidence resolved (``mcp_matrix.report.model``).

Values many cells share (findings, evidence, schemas) are one object, and what a discovery cell's
verdict and findings decide is worked out once: 5,000 tools x 36 profiles is 180,000 cells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from mcp_matrix.core.event_values import CellFinding
from mcp_matrix.core.events import CallCell, Cell, DiscoveryCell, Event, SnapshotTaken
from mcp_matrix.core.json_record import JsonRecord
from mcp_matrix.core.verdicts import MEANING, SYMBOL, V, is_finding, rank
from mcp_matrix.report.advice import advice_for
from mcp_matrix.report.document import CitedEvidence, ReportCell, ReportFinding
from mcp_matrix.report.head import ReportHead
from mcp_matrix.report.places import SnapshotTools, call_pointer, under_tool
from mcp_matrix.report.reasons import discovery_reason, primary_finding

_Found = tuple[CellFinding, ...]


class ReportCells:
    """Each cell in full, as it is read (the head counting it). What a discovery cell's findings
    decide (its reason, behaviours, evidence, advice) is worked out once per (run, verdict,
    weakest evidence, findings); a run's snapshot places each cell's tool."""

    def __init__(self, head: ReportHead) -> None:
        self.head = head
        self.snapshots: list[SnapshotTools] = []  # per run of the head's
        self._discovery: dict[tuple[int, str, str | None, int], tuple[_Found, _Decided]] = {}
        self._pointers: dict[tuple[int | None, str], str | None] = {}
        self._shown: dict[str, _Shown] = {}

    def cells(self, events: list[Event]) -> Iterator[ReportCell]:
        head, snapshots = self.head, self.snapshots
        for e in events:
            if isinstance(e, (DiscoveryCell, CallCell)):
                fails = head.cell(e)
                if len(snapshots) < len(head.runs):
                    snapshots.append(SnapshotTools({}))  # the anonymous run of a hand-merged file
                yield self.cell(e, fails)
                continue
            head.add(e)
            while len(snapshots) < len(head.runs):
                snapshots.append(SnapshotTools({}))
            if isinstance(e, SnapshotTaken):
                snapshots[-1] = SnapshotTools(e.snapshot)

    def cell(self, e: Cell, fails: bool) -> ReportCell:
        run = len(self.snapshots) - 1
        verdict = e.verdict
        shown = self._shown.get(verdict)
        if shown is None:
            shown = self._shown[verdict] = _shown(verdict)
        run_id = self.head.runs[run]["run_id"]
        if isinstance(e, DiscoveryCell):
            return self.discovery(e, run, run_id, fails, shown)
        tools = self.snapshots[run]
        index = tools.index.get(e.tool)
        raw = tools.tools[index] if index is not None else None
        cited = {(ev.level, _s(ev.source), _s(ev.note)): ev for ev in e.evidence}
        return _make_cell(
            "call",
            run_id,
            e.profile,
            e.tool,
            e.case,
            verdict,
            *shown,
            fails,
            e.reason,
            "tool" if verdict == V.UNREACHABLE.name else "call",
            tuple(e.behaviours),
            tuple(CitedEvidence("", _s(level), s, n) for level, s, n in cited),
            e.weakest_evidence,
            call_pointer(index, e.mutations[0].pointer if e.mutations else None),
            advice_for(e, raw),
            (),
            None,
            None,
            e.origin,
            e.expect,
            e.mutations,
            e.answer,
            bool(e.stale),
            tuple(e.sometimes),
            e.frequency,
            e.variants or (),
            run,
            index,
            e.evidence,
        )

    def discovery(
        self, e: DiscoveryCell, run: int, run_id: str | None, fails: bool, shown: _Shown
    ) -> ReportCell:
        tools = self.snapshots[run]
        index = e.index if e.index is not None else tools.index.get(e.tool)
        findings = e.findings
        key = (run, e.verdict, e.weakest_evidence, id(findings))
        held = self._discovery.get(key)
        if held is None or held[0] is not findings:  # keeps the findings alive: ids stay theirs
            held = self._discovery[key] = (findings, self.decide(e, tools))
        decided = held[1]
        if not findings:
            found: tuple[ReportFinding, ...] = ()
            pointer = self.under(index, "")
        else:
            found = self.found(decided, index)
            primary = found[decided.primary]  # type: ignore[index]  # findings: a primary
            pointer = primary.culprit_pointer or self.under(index, primary.pointer)
        return _make_cell(
            "discovery",
            run_id,
            e.profile,
            e.tool,
            None,
            e.verdict,
            *shown,
            fails,
            decided.reason,
            decided.blast_radius,
            decided.behaviours,
            decided.evidence,
            e.weakest_evidence,
            pointer,
            decided.advice,
            found,
            e.model_name,
            e.model_schema,
            None,
            None,
            (),
            None,
            False,
            (),
            None,
            (),
            run,
            index,
            (),
        )

    def decide(self, e: DiscoveryCell, tools: SnapshotTools) -> _Decided:
        findings = e.findings
        culprits = tuple(_culprit(f, tools) for f in findings)
        primary = primary_finding(findings, e.verdict)
        cited: dict[tuple[str, str, str, str], CitedEvidence] = {}
        for f in findings:
            for ev in f.evidence or ():
                item = CitedEvidence(_s(f.behaviour), _s(ev.level), _s(ev.source), _s(ev.note))
                cited.setdefault((item.behaviour, item.level, item.source, item.note), item)
        return _Decided(
            reason=discovery_reason(e.verdict, findings),
            blast_radius=primary.blast_radius if primary else None,
            behaviours=tuple(dict.fromkeys(_s(f.behaviour) for f in findings if f.behaviour)),
            evidence=tuple(cited.values()),
            advice=advice_for(e, None),
            primary=None if primary is None else findings.index(primary),
            parts=tuple(
                (f.code, f.message, _s(f.pointer), at, bool(f.lost), f.blast_radius)
                + (_s(f.behaviour), f.evidence or ())
                for f, at in zip(findings, culprits)
            ),
        )

    def found(self, decided: _Decided, index: int | None) -> tuple[ReportFinding, ...]:
        """A cell's findings as the report shows them: under its tool, or the culprit's."""
        under = self.under
        return tuple(
            [
                _make_finding(
                    code,
                    message,
                    at,
                    under(index, at) if culprit is None else culprit,
                    *rest,
                    culprit,
                )
                for code, message, at, culprit, *rest in decided.parts
            ]
        )

    def under(self, index: int | None, rel: str) -> str | None:
        """``under_tool``, one string per place (the 36 profiles of a tool share it)."""
        if index is None:
            return None
        key = (index, rel)
        known = self._pointers.get(key)
        if known is None:
            known = self._pointers[key] = under_tool(index, rel)
        return known


_Shown = tuple[str, str, int, bool]  # a verdict's symbol, meaning, severity, and if a finding


def _shown(verdict: str) -> _Shown:
    return SYMBOL.get(verdict, "?"), MEANING.get(verdict, ""), rank(verdict), is_finding(verdict)


_R = TypeVar("_R", bound=JsonRecord)


def _maker(cls: type[_R]) -> Callable[..., _R]:
    """A value of ``cls`` from its fields' values in order, made as the generic reader makes one
    (each slot set by its own setter): 180,000 cells, no ``__init__`` of 32 keyword checks and
    no ``__post_init__`` for values that are typed already."""
    names = [f.name for f in fields(cls)]
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def make({', '.join(names)}):", " o = _new(_cls)"]
    for i, name in enumerate(names):
        env[f"_s{i}"] = cls.__dict__[name].__set__
        lines.append(f" _s{i}(o, {name})")
    exec("\n".join([*lines, " return o"]), env)  # noqa: S102  # our own text, from the fields
    return env["make"]  # type: ignore[no-any-return]


_make_cell = _maker(ReportCell)
_make_finding = _maker(ReportFinding)


@dataclass(frozen=True, slots=True)
class _Decided:
    """What a discovery cell's verdict and findings decide, whichever tool it is."""

    reason: str
    blast_radius: str | None
    behaviours: tuple[str, ...]
    evidence: tuple[CitedEvidence, ...]
    advice: str | None
    primary: int | None  # the position of the deciding finding
    # per finding, what a ReportFinding holds but its place: code, message, pointer, the culprit
    # tool's pointer (or None), lost, blast radius, behaviour, evidence
    parts: tuple[tuple[Any, ...], ...]


def _culprit(f: CellFinding, tools: SnapshotTools) -> str | None:
    """A list-level failure reported on every tool points at the tool that caused it."""
    if not f.culprit:
        return None
    place = tools.index.get(f.culprit)
    return None if place is None else under_tool(place, _s(f.pointer))


def _s(value: object) -> str:
    return "" if value is None else str(value)


__all__ = ["ReportCells"]
