"""The report's first pass over the events: its runs, each tool's worst verdict per client (the
grid), the counts, the skipped calls and the profiles that failed; then the report without its
cells (``mcp_matrix.report.model`` makes the cells, counting each here as it is read).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_matrix.core.event_values import ListedProfile
from mcp_matrix.core.events import (
    CallCell,
    Cell,
    DiscoveryCell,
    Event,
    ProfileError,
    RunFinished,
    RunStarted,
    Skipped,
    SnapshotTaken,
)
from mcp_matrix.core.verdicts import MEANING, SEVERITY, SYMBOL, is_finding, rank
from mcp_matrix.report.document import (
    FORMAT,
    NO_RUN,
    FailedProfile,
    GridRow,
    LegendEntry,
    Report,
    ReportCounts,
    ReportProfile,
    ReportRun,
    SkippedCall,
    VerdictGrid,
)
from mcp_matrix.report.grid import Scope


class ReportHead:
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

    def report(
        self, known: Mapping[str, ListedProfile], failing: tuple[str, ...], version: str
    ) -> Report:
        """The report without its cells, ``version`` the mcp-matrix that writes it."""
        names = tuple(self.profiles)
        verdicts = [v for v in SEVERITY if v in self.counts]
        verdicts += sorted((v for v in self.counts if v not in SYMBOL), key=rank)
        runs = tuple(ReportRun.build(r) for r in self.runs)
        first = runs[0] if runs else NO_RUN
        tools = tuple(self.tools)
        return Report(
            format=FORMAT,
            version=1,
            generated_by={"name": "mcp-matrix", "version": version},
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


__all__ = ["ReportHead"]
