"""The report as typed values: what every report writer reads (JSON, Markdown, JUnit, SARIF, HTML).

``read_model`` builds it once, in one pass over typed events: every cell in full, its advice,
findings and evidence resolved, so a writer says ``cell.verdict``, not ``cell["verdict"]``, and
mypy checks every key it reads. The fields are the keys of the JSON report's version-1 shape, in
its order (docs/reports.md); ``to_json()`` gives that document. A few fields are ``HELD``: what
the JSON report's tables record and the version-1 shape does not (the position of a cell's run
and of its tool in the run's snapshot, a call's evidence as the run wrote it, the pointer of the
tool that caused a list-level failure); ``to_json()`` leaves them out and equality ignores them.
Values many cells share (findings, evidence, schemas) are one object: 5,000 tools x 36 profiles
is 180,000 cells.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol, TypeVar

from mcp_matrix import __version__
from mcp_matrix.core.events import (
    HELD,
    CallCell,
    Cell,
    CellEvidence,
    CellFinding,
    CellMutation,
    CellVariant,
    DiscoveryCell,
    Event,
    JsonRecord,
    ListedProfile,
    ProfileError,
    RunFinished,
    RunStarted,
    Skipped,
    SnapshotTaken,
    typed_events,
)
from mcp_matrix.core.jsontypes import JSON, JSONObject
from mcp_matrix.core.verdicts import LOST, MEANING, SEVERITY, SYMBOL, is_finding, rank
from mcp_matrix.report.advice import advice_for
from mcp_matrix.report.grid import RELEASE_FAILING, Scope, gate_scope, run_profiles

FORMAT = "mcp-matrix.report"
_REASON_PARTS = 3
_Found = tuple[CellFinding, ...]


@dataclass(frozen=True, slots=True)
class CitedEvidence(JsonRecord):
    """One source a cell's verdict rests on, and the behaviour it is evidence for."""

    behaviour: str
    level: str
    source: str
    note: str


@dataclass(frozen=True, slots=True)
class ReportFinding(JsonRecord):
    """A finding as the report shows it: ``snapshot_pointer`` points into the run's snapshot."""

    code: str
    message: str
    pointer: str
    snapshot_pointer: str | None
    lost: bool
    blast_radius: str | None
    behaviour: str
    evidence: tuple[CellEvidence, ...]
    # the pointer into the snapshot of the tool that caused a list-level failure (``culprit``),
    # or None: ``snapshot_pointer`` is then under this cell's own tool
    culprit_pointer: str | None = field(default=None, compare=False, metadata=HELD)


@dataclass(frozen=True, slots=True)
class ReportCell(JsonRecord):
    """One (profile, tool) discovery cell or (profile, tool, case) call cell, in full."""

    kind: str  # discovery | call
    run: str | None
    profile: str
    tool: str
    case: str | None
    verdict: str
    symbol: str
    meaning: str
    severity: int
    finding: bool
    release_failing: bool
    reason: str
    blast_radius: str | None
    behaviours: tuple[str, ...]
    evidence: tuple[CitedEvidence, ...]
    weakest_evidence: str | None
    pointer: str | None
    advice: str | None
    findings: tuple[ReportFinding, ...]
    model_name: str | None
    model_schema: JSON
    origin: str | None
    expect: str | None
    mutations: tuple[CellMutation, ...]
    answer: JSON
    stale: bool
    sometimes: tuple[str, ...]
    frequency: str | None
    variants: tuple[CellVariant, ...]
    run_index: int = field(default=0, compare=False, metadata=HELD)  # its run's position in runs
    index: int | None = field(default=None, compare=False, metadata=HELD)  # its tool's, in the run
    # a call's evidence as the run wrote it (``evidence`` is it cited: its date checked left out)
    sources: tuple[CellEvidence, ...] = field(default=(), compare=False, metadata=HELD)


@dataclass(frozen=True, slots=True)
class ReportRun(JsonRecord):
    """One run of the stream (a merged file has several)."""

    run_id: str | None
    started_at: str | None
    finished_at: str | None
    mcp_matrix: str | None
    target: JSONObject | None
    server: JSONObject | None
    protocolVersion: str | None  # the document's key
    cases: str | None
    baseline: str | None
    finished: bool
    measured: bool
    interrupted: bool
    error: JSONObject | None


# The run of a stream without a run-started event.
NO_RUN = ReportRun(
    run_id=None,
    started_at=None,
    finished_at=None,
    mcp_matrix=None,
    target=None,
    server=None,
    protocolVersion=None,
    cases=None,
    baseline=None,
    finished=False,
    measured=True,
    interrupted=False,
    error=None,
)


@dataclass(frozen=True, slots=True)
class ReportProfile(JsonRecord):
    name: str
    client: str | None
    versions: str | None
    models: str | None
    weakest_evidence: str | None


@dataclass(frozen=True, slots=True)
class LegendEntry(JsonRecord):
    verdict: str
    symbol: str
    meaning: str


@dataclass(frozen=True, slots=True)
class GridRow(JsonRecord):
    """One tool's worst verdict per client (None: no cell)."""

    tool: str
    cells: tuple[str | None, ...]


@dataclass(frozen=True, slots=True)
class VerdictGrid(JsonRecord):
    profiles: tuple[str, ...]
    rows: tuple[GridRow, ...]


@dataclass(frozen=True, slots=True)
class SkippedCall(JsonRecord):
    run: str | None
    profile: str | None
    tool: str
    case: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class FailedProfile(JsonRecord):
    run: str | None
    profile: str
    error: str


@dataclass(frozen=True, slots=True)
class ReportCounts(JsonRecord):
    verdicts: Mapping[str, int]
    cells: int
    discovery: int
    calls: int
    findings: int
    release_failing: int
    skipped: int
    profile_errors: int


@dataclass(frozen=True, slots=True)
class Report(JsonRecord):
    """The whole report (the JSON report's version-1 document)."""

    format: str
    version: int
    generated_by: Mapping[str, str]
    mcp_matrix: str | None
    server: JSONObject | None
    complete: bool
    runs: tuple[ReportRun, ...]
    profiles: tuple[ReportProfile, ...]
    tools: tuple[str, ...]
    release_failing: tuple[str, ...]
    legend: tuple[LegendEntry, ...]
    grid: VerdictGrid
    cells: tuple[ReportCell, ...]
    skipped: tuple[SkippedCall, ...]
    profile_errors: tuple[FailedProfile, ...]
    counts: ReportCounts


def read_model(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> Report:
    """The report of a results stream as typed values, built once (a merged file as its runs)."""
    stream = stream_model(events, failing)
    cells = tuple(stream)
    return replace(stream.report(), cells=cells)


def stream_model(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> ModelStream:
    """The report's cells made one at a time as they are read, then the rest of the report: a
    writer that reads each cell once (the JSON report) holds one, not 180,000 (5,000 tools x
    36 profiles)."""
    return ModelStream(typed_events(events), tuple(failing))


class ModelStream:
    """One pass over the events: iterate it for the cells in full, in stream order; then
    ``report()`` is the report without its cells (``cells`` empty; the counts, grid and legend
    of them all)."""

    def __init__(self, events: list[Event], failing: tuple[str, ...]) -> None:
        self.events, self.failing = events, failing
        self.listed: dict[str, ListedProfile] = {}  # each profile as the first run lists it
        for e in events:
            if isinstance(e, RunStarted):
                for p in e.profiles:
                    self.listed.setdefault(p.name, p)
        self.head = _Head(gate_scope(events, failing), list(run_profiles(events)))
        # a cell's positions in the report's profiles and tools, there once the cell is made
        self.profiles, self.tools = self.head.profiles, self.head.tools
        self.done = False

    def __iter__(self) -> Iterator[ReportCell]:
        yield from _Cells(self.head).cells(self.events)
        self.done = True

    def report(self) -> Report:
        if not self.done:
            raise RuntimeError("the report is known once every cell has been read")
        return self.head.report(self.listed, self.failing)


class _Head:
    """The first pass over the events: runs, the grid's worst verdicts, the counts."""

    def __init__(self, scope: Scope, profiles: list[str]) -> None:
        self.scope = scope
        self.runs: list[dict[str, Any]] = []
        self.profiles = {name: i for i, name in enumerate(profiles)}
        self.tools: dict[str, int] = {}
        self.worst: list[dict[int, str]] = []  # per tool: profile position -> worst verdict
        self.skipped: list[SkippedCall] = []
        self.profile_errors: list[FailedProfile] = []
        self.counts: dict[str, int] = {}
        self.kinds = {"discovery": 0, "call": 0}
        self.release_failing = self.findings = 0
        self._judged: dict[tuple[str, str], tuple[bool, int, bool]] = {}

    def run_index(self) -> int:
        if not self.runs:  # events before any run-started (a hand-merged file): an anonymous run
            self.runs.append(_run_record(RunStarted()))
        return len(self.runs) - 1

    def add(self, e: Event) -> None:
        if isinstance(e, RunStarted):
            self.runs.append(_run_record(e))
        elif isinstance(e, SnapshotTaken):
            self.run_index()
        elif isinstance(e, RunFinished):
            run = self.runs[self.run_index()]
            run.update(finished_at=e.finished_at, finished=True)
            run.update(measured=e.measured, interrupted=e.interrupted, error=e.error)
        elif isinstance(e, (DiscoveryCell, CallCell)):
            self.cell(e)
        elif isinstance(e, Skipped):
            run = self.runs[self.run_index()]["run_id"]
            self.skipped.append(SkippedCall(run, e.profile, e.tool, e.case, e.reason))
        elif isinstance(e, ProfileError):
            run = self.runs[self.run_index()]["run_id"]
            self.profile_errors.append(FailedProfile(run, e.profile, e.error))

    def cell(self, e: Cell) -> bool:
        """Count a cell; whether it fails the release."""
        self.run_index()
        profile = self.profiles.setdefault(e.profile, len(self.profiles))
        tool = self.tools.get(e.tool)
        if tool is None:
            tool = self.tools[e.tool] = len(self.tools)
            self.worst.append({})
        verdict = e.verdict
        self.kinds[e.KIND] += 1
        judged = self._judged.get((verdict, e.profile))  # a few verdicts x profiles
        if judged is None:
            fails = self.scope.fails(e)
            judged = self._judged[(verdict, e.profile)] = (
                fails,
                rank(verdict),
                is_finding(verdict),
            )
        fails, severity, finding = judged
        self.release_failing += fails
        self.counts[verdict] = self.counts.get(verdict, 0) + 1
        self.findings += finding
        worst = self.worst[tool]
        held = worst.get(profile)
        if held is None or severity < rank(held):
            worst[profile] = verdict
        return fails

    def report(self, known: Mapping[str, ListedProfile], failing: tuple[str, ...]) -> Report:
        names = tuple(self.profiles)
        verdicts = [v for v in SEVERITY if v in self.counts]
        verdicts += sorted((v for v in self.counts if v not in SYMBOL), key=rank)
        runs = tuple(ReportRun.build(r) for r in self.runs)
        first = runs[0] if runs else NO_RUN
        tools = tuple(self.tools)
        return Report(
            format=FORMAT,
            version=1,
            generated_by={"name": "mcp-matrix", "version": __version__},
            mcp_matrix=first.mcp_matrix,
            server=first.server,
            complete=bool(runs)
            and all(r.finished and r.measured and not r.interrupted for r in runs),
            runs=runs,
            profiles=tuple(_profile(known.get(n), n) for n in names),
            tools=tools,
            release_failing=failing,
            legend=tuple(LegendEntry(v, SYMBOL.get(v, "?"), MEANING.get(v, "")) for v in verdicts),
            grid=VerdictGrid(
                names,
                tuple(
                    GridRow(t, tuple(worst.get(p) for p in range(len(names))))
                    for t, worst in zip(tools, self.worst)
                ),
            ),
            cells=(),
            skipped=tuple(self.skipped),
            profile_errors=tuple(self.profile_errors),
            counts=ReportCounts(
                verdicts={v: self.counts[v] for v in verdicts},
                cells=sum(self.counts.values()),
                discovery=self.kinds["discovery"],
                calls=self.kinds["call"],
                findings=self.findings,
                release_failing=self.release_failing,
                skipped=len(self.skipped),
                profile_errors=len(self.profile_errors),
            ),
        )


class _Cells:
    """Each cell in full, as it is read (the head counting it). What a discovery cell's findings
    decide (its reason, behaviours, evidence, advice) is worked out once per (run, verdict,
    weakest evidence, findings); a run's snapshot places each cell's tool."""

    def __init__(self, head: _Head) -> None:
        self.head = head
        self.snapshots: list[_Tools] = []  # per run of the head's
        self._discovery: dict[tuple[int, str, str | None, int], tuple[_Found, _Decided]] = {}
        self._pointers: dict[tuple[int | None, str], str | None] = {}
        self._shown: dict[str, _Shown] = {}

    def cells(self, events: list[Event]) -> Iterator[ReportCell]:
        head, snapshots = self.head, self.snapshots
        for e in events:
            if isinstance(e, (DiscoveryCell, CallCell)):
                fails = head.cell(e)
                if len(snapshots) < len(head.runs):
                    snapshots.append(_Tools({}))  # the anonymous run of a hand-merged file
                yield self.cell(e, fails)
                continue
            head.add(e)
            while len(snapshots) < len(head.runs):
                snapshots.append(_Tools({}))
            if isinstance(e, SnapshotTaken):
                snapshots[-1] = _Tools(e.snapshot)

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
            "tool" if verdict == "unreachable" else "call",
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

    def decide(self, e: DiscoveryCell, tools: _Tools) -> _Decided:
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


def _culprit(f: CellFinding, tools: _Tools) -> str | None:
    """A list-level failure reported on every tool points at the tool that caused it."""
    if not f.culprit:
        return None
    place = tools.index.get(f.culprit)
    return None if place is None else under_tool(place, _s(f.pointer))


def _run_record(e: RunStarted) -> dict[str, Any]:
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


def _profile(p: ListedProfile | None, name: str) -> ReportProfile:
    p = p or ListedProfile(name)
    return ReportProfile(name, p.client, p.versions, p.models, p.weakest_evidence)


class _Losing(Protocol):
    @property
    def lost(self) -> bool | None: ...


_F = TypeVar("_F", bound=_Losing)


def primary_finding(findings: Sequence[_F], verdict: str) -> _F | None:
    """The finding that decided a discovery cell: the last one for a hidden or dropped tool,
    else the first that lost something, else the first (a cell's findings, or a report's)."""
    if not findings:
        return None
    if verdict in LOST:
        return findings[-1]
    return next((f for f in findings if f.lost), findings[0])


class _SaysFinding(Protocol):
    @property
    def lost(self) -> bool | None: ...

    @property
    def message(self) -> str: ...


def discovery_reason(verdict: str, findings: Sequence[_SaysFinding]) -> str:
    """A discovery cell's reason: the deciding finding's message for a lost tool, else the
    messages of the findings that lost something (the first three)."""
    if verdict == "visible" or not findings:
        return ""
    if verdict in LOST:
        return findings[-1].message
    lost = [f for f in findings if f.lost] or findings
    text = "; ".join(f.message for f in lost[:_REASON_PARTS])
    return text + (f" (and {len(lost) - _REASON_PARTS} more)" if len(lost) > _REASON_PARTS else "")


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


def under_tool(index: int | None, rel: str) -> str | None:
    """A pointer relative to a tool as a pointer into the snapshot document."""
    base = _tool_pointer(index)
    if base is None:
        return None
    return base + (rel if rel.startswith("/") else "")


def call_pointer(index: int | None, mutated: str | None) -> str | None:
    """The input schema of the called tool, at the property the first mutation touched (its
    pointer into the arguments: ``mutated``)."""
    base = _tool_pointer(index)
    if base is None:
        return None
    if mutated is None:
        return base + "/inputSchema"
    path = "/inputSchema"
    for p in mutated.split("/")[1:]:
        path += "/items" if p.isdigit() else f"/properties/{p}"
    return base + path


def _s(value: object) -> str:
    return "" if value is None else str(value)


__all__ = [
    "NO_RUN",
    "CitedEvidence",
    "FailedProfile",
    "GridRow",
    "LegendEntry",
    "ModelStream",
    "Report",
    "ReportCell",
    "ReportCounts",
    "ReportFinding",
    "ReportProfile",
    "ReportRun",
    "SkippedCall",
    "VerdictGrid",
    "call_pointer",
    "discovery_reason",
    "primary_finding",
    "read_model",
    "stream_model",
    "under_tool",
]
