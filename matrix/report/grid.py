"""The tools x clients grid, computed from result events (shared by every writer)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from matrix.verdicts import RELEASE_FAILING, rank

__all__ = ["RELEASE_FAILING", "Grid", "build_grid", "over_threshold"]


@dataclass
class Grid:
    profiles: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], list[dict]] = field(default_factory=dict)

    def worst(self, tool: str, profile: str) -> str | None:
        events = self.cells.get((tool, profile), [])
        return min((e["verdict"] for e in events), key=rank) if events else None

    def not_fine(self) -> list[dict]:
        return [
            e for es in self.cells.values() for e in es if e["verdict"] not in ("visible", "intact")
        ]


def build_grid(events: Iterable[dict]) -> Grid:
    grid = Grid()
    tools: set[str] = set()  # membership beside the ordered lists: 10,000 tools stay linear
    profiles: set[str] = set()
    for e in events:
        if e.get("event") == "run-started":
            for p in e.get("profiles", []):
                if p["name"] not in profiles:
                    profiles.add(p["name"])
                    grid.profiles.append(p["name"])
        if e.get("event") not in ("discovery", "call"):
            continue
        tool, profile = str(e.get("tool")), str(e.get("profile"))
        if tool not in tools:
            tools.add(tool)
            grid.tools.append(tool)
        if profile not in profiles:
            profiles.add(profile)
            grid.profiles.append(profile)
        grid.cells.setdefault((tool, profile), []).append(e)
    return grid


def over_threshold(events: Iterable[dict], failing: Iterable[str] = RELEASE_FAILING) -> list[dict]:
    bad = set(failing)
    return [
        e for e in events if e.get("event") in ("discovery", "call") and e.get("verdict") in bad
    ]
