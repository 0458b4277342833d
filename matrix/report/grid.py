"""The tools x clients grid, computed from typed result events (shared by every writer)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from matrix.events import CallCell, Cell, DiscoveryCell, Event, RunStarted
from matrix.verdicts import RELEASE_FAILING, rank

__all__ = ["RELEASE_FAILING", "Grid", "build_grid", "over_threshold"]


@dataclass
class Grid:
    profiles: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], list[Cell]] = field(default_factory=dict)

    def worst(self, tool: str, profile: str) -> str | None:
        cells = self.cells.get((tool, profile), [])
        return min((c.verdict for c in cells), key=rank) if cells else None

    def not_fine(self) -> list[Cell]:
        return [
            c for cs in self.cells.values() for c in cs if c.verdict not in ("visible", "intact")
        ]


def build_grid(events: Iterable[Event]) -> Grid:
    grid = Grid()
    tools: set[str] = set()  # membership beside the ordered lists: 10,000 tools stay linear
    profiles: set[str] = set()
    for e in events:
        if isinstance(e, RunStarted):
            for p in e.profiles:
                if p["name"] not in profiles:
                    profiles.add(p["name"])
                    grid.profiles.append(p["name"])
        if not isinstance(e, (DiscoveryCell, CallCell)):
            continue
        if e.tool not in tools:
            tools.add(e.tool)
            grid.tools.append(e.tool)
        if e.profile not in profiles:
            profiles.add(e.profile)
            grid.profiles.append(e.profile)
        grid.cells.setdefault((e.tool, e.profile), []).append(e)
    return grid


def over_threshold(events: Iterable[Event], failing: Iterable[str] = RELEASE_FAILING) -> list[Cell]:
    """The cells whose verdict is one of ``failing``."""
    bad = set(failing)
    return [e for e in events if isinstance(e, (DiscoveryCell, CallCell)) and e.verdict in bad]
