"""The report as typed values: the JSON report's version-1 document, key for key, in its order
(docs/reports.md). ``mcp_matrix.report.model`` builds it; every writer reads it.

A few fields are ``HELD``: what the JSON report's tables record and the version-1 shape does not
(the position of a cell's run and of its tool in the run's snapshot, a call's evidence as the run
wrote it, the pointer of the tool that caused a list-level failure); ``to_json()`` leaves them
out and equality ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp_matrix.core.event_values import CellEvidence, CellMutation, CellVariant
from mcp_matrix.core.json_record import HELD, JsonRecord
from mcp_matrix.core.jsontypes import JSON, JSONObject

FORMAT = "mcp-matrix.report"


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


__all__ = [
    "FORMAT",
    "NO_RUN",
    "CitedEvidence",
    "FailedProfile",
    "GridRow",
    "LegendEntry",
    "Report",
    "ReportCell",
    "ReportCounts",
    "ReportFinding",
    "ReportProfile",
    "ReportRun",
    "SkippedCall",
    "VerdictGrid",
]
