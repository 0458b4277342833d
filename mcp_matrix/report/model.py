"""The report as typed values: what every report writer reads (JSON, Markdown, JUnit, SARIF, HTML).

``read_model`` builds it once, in one pass over typed events: every cell in full, its advice,
findings and evidence resolved, so a writer says ``cell.verdict``, not ``cell["verdict"]``, and
mypy checks every key it reads. The values are ``mcp_matrix.report.document``'s (the keys of the
JSON report's version-1 shape, in its order; ``to_json()`` gives that document); the pass counts
in ``report.head`` and makes each cell in ``report.cells``. Values many cells share (findings,
evidence, schemas) are one object: 5,000 tools x 36 profiles is 180,000 cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from mcp_matrix import __version__
from mcp_matrix.core.event_values import ListedProfile
from mcp_matrix.core.events import Event, RunStarted, typed_events
from mcp_matrix.report.cells import ReportCells
from mcp_matrix.report.document import Report, ReportCell
from mcp_matrix.report.grid import RELEASE_FAILING, gate_scope, run_profiles
from mcp_matrix.report.head import ReportHead


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
        self.head = ReportHead(gate_scope(events, failing), list(run_profiles(events)))
        # a cell's positions in the report's profiles and tools, there once the cell is made
        self.profiles, self.tools = self.head.profiles, self.head.tools
        self.done = False

    def __iter__(self) -> Iterator[ReportCell]:
        yield from ReportCells(self.head).cells(self.events)
        self.done = True

    def report(self) -> Report:
        if not self.done:
            raise RuntimeError("the report is known once every cell has been read")
        return self.head.report(self.listed, self.failing, __version__)


__all__ = ["ModelStream", "read_model", "stream_model"]
