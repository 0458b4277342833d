"""What the corrected list costs the callers frozen on the list as given: the project's own
``diff`` (``mcp_matrix.evolution``) of the two lists, per change, with its populations (live
conversations, queued retries, transcript replays) and its guidance. So a rename or a loosened
schema is never applied silently: its severity and price are printed beside the edit."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.diff import diff_snapshots
from mcp_matrix.evolution.model import POPULATION_LABEL
from mcp_matrix.profiles.model import Profile
from mcp_matrix.targets.snapshot import Snapshot


@dataclass(frozen=True)
class Cost:
    """One change of the corrected list as ``diff`` classifies it."""

    tool: str
    kind: str
    severity: str  # breaking | risky | safe
    message: str
    populations: tuple[str, ...] = ()  # "queued retries: ..." for each population it touches
    advice: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "populations": list(self.populations),
            "advice": list(self.advice),
        }


def corrected(doc: Mapping[str, Any], tools: Sequence[JSON], eras: JSON) -> dict:
    """The snapshot document with ``tools`` in place of its own (the same pages), and ``eras``
    (the 2026-07-28 list's cache hints set; its own copy of the tools replaced too)."""
    out = copy.deepcopy(dict(doc))
    pages = [e.get("page", 0) for e in out.get("tools", [])]
    out["tools"] = [
        {"page": pages[i] if i < len(pages) else 0, "tool": copy.deepcopy(t)}
        for i, t in enumerate(tools)
    ]
    if isinstance(eras, dict):
        eras = copy.deepcopy(eras)
        modern = eras.get("modern")
        if isinstance(modern, dict) and isinstance(modern.get("tools"), list):
            modern["tools"] = copy.deepcopy(out["tools"])
        out["eras"] = eras
    return out


def costs(
    before: Snapshot, after: Mapping[str, JSON], profiles: Sequence[Profile], server: str | None
) -> tuple[Cost, ...]:
    """Every change from ``before`` to the corrected document that ``diff`` calls breaking or risky."""
    found = diff_snapshots(before, Snapshot(after, source="fixed"), profiles, server=server)
    out = []
    for change in found.changes:
        if change.severity == "safe":
            continue
        populations = tuple(
            f"{POPULATION_LABEL.get(p.population, p.population)}: {p.message}"
            for p in change.populations
        )
        out.append(
            Cost(
                change.tool,
                change.kind,
                change.severity,
                change.message,
                populations,
                tuple(change.advice),
            )
        )
    return tuple(out)
