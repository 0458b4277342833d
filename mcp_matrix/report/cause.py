"""A root cause of the triage (``mcp_matrix.report.triage``) as a value: what one change of the
server fixes, the cells it takes down, counted once each, and two causes that differ only in
wording across clients merged into one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp_matrix.core.events import CallCell, Cell
from mcp_matrix.core.verdicts import rank


@dataclass
class Cause:
    """One root cause and everything it takes down."""

    verdict: str  # the worst verdict among its cells
    tool: str  # the tool that causes it ("" when many tools share a schema habit)
    code: str
    summary: str  # what happens, in one sentence (from a representative cell)
    fix: str | None
    tools: list[str] = field(default_factory=list)
    clients: list[str] = field(default_factory=list)
    cells: int = 0
    calls_lost: int = 0  # calls that could not reach the tool because of it
    blast_radius: str = "tool"
    lost: list[str] = field(
        default_factory=list
    )  # what the model loses: "default at /properties/x"
    evidence: list[tuple[str, str]] = field(default_factory=list)  # (level, source) a user can open
    weakest: str | None = None
    stricter: bool = False  # a forced stricter schema: a note, not a loss
    culprits: list[str] = field(default_factory=list)  # tools whose own cell carries the finding
    # a tool that breaks the session while the other tools keep their own cells: how many tools
    # the server lists in the client(s), every one of them failing if the request is refused
    session_tools: int = 0
    optional: bool = False  # the default release gate fails on none of its cells
    by_verdict: dict[str, list[str]] = field(default_factory=dict)  # verdict -> clients
    # every cell loud and the only advice "keep validating strictly": the safe outcome, listed
    # after the problems, never one to fix
    safe: bool = False
    keywords: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set, repr=False)  # (event, profile, tool, case) counted

    @property
    def severity(self) -> tuple[int, int, int, int]:
        """Notes last, after the safe outcomes; before them, what hits a client the gate requires
        comes before what hits only opt-in configurations and probes (a pinned protocol era, a
        rollout flag)."""
        return (
            2 if self.stricter else 1 if self.safe else 0,
            1 if self.optional else 0,
            rank(self.verdict),
            -self.cells,
        )

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "tool": self.tool,
            "code": self.code,
            "summary": self.summary,
            "fix": self.fix,
            "tools": self.tools,
            "clients": self.clients,
            "cells": self.cells,
            "calls_lost": self.calls_lost,
            "blast_radius": self.blast_radius,
            "lost": self.lost,
            "evidence": [{"level": lv, "source": src} for lv, src in self.evidence],
            "weakest_evidence": self.weakest,
            "note": self.stricter,
            "by_verdict": self.by_verdict,
            "optional": self.optional,
            "safe": self.safe,
        }


def add_cell(
    causes: dict[tuple, Cause], tools_of: dict[tuple, set[str]], key: tuple, make: Cause, cell: Cell
) -> Cause:
    """Count ``cell`` under the cause at ``key`` (``make`` when it is new); ``tools_of`` mirrors
    each cause's tools as a set."""
    cause = causes.get(key)
    if cause is None:
        cause = causes[key] = make
        tools_of[key] = set(cause.tools)
    case = cell.case if isinstance(cell, CallCell) else None
    cell_id = (cell.KIND, cell.profile, cell.tool, case)
    count_cell(cause, tools_of[key], cell_id, cell.verdict, cell.weakest_evidence)
    return cause


def count_cell(
    cause: Cause, listed: set[str], cell_id: tuple, verdict: str, weakest: str | None
) -> None:
    """One cell (``cell_id``: kind, profile, tool, case) counted in ``cause``, once however many
    of its findings lead there; ``listed`` is the cause's tools as a set."""
    _, profile, tool, _ = cell_id
    if cell_id not in cause.seen:
        cause.seen.add(cell_id)
        cause.cells += 1
    if profile not in cause.clients:
        cause.clients.append(profile)
    if tool and tool not in listed:
        listed.add(tool)
        cause.tools.append(tool)
    in_verdict = cause.by_verdict.get(verdict)
    if in_verdict is None:
        in_verdict = cause.by_verdict[verdict] = []
    if profile not in in_verdict:
        in_verdict.append(profile)
    if verdict != cause.verdict and not cause.stricter and rank(verdict) < rank(cause.verdict):
        cause.verdict = verdict
    if (
        weakest
        and weakest != cause.weakest
        and (cause.weakest is None or _weaker(weakest, cause.weakest))
    ):
        cause.weakest = weakest


def merge_causes(causes: dict[tuple, Cause]) -> list[Cause]:
    """Hard causes that differ only in wording across clients (same tool, code and fix) as one."""
    out: list[Cause] = []
    seen: dict[tuple, Cause] = {}
    for key, cause in causes.items():
        if key[0] == "hard":
            same: tuple = ("hard", cause.tool, cause.code, cause.fix)
        elif key[0] == "note":
            out.append(cause)
            continue
        else:  # one schema habit or one call behaviour across tools, in the same clients: one fix
            same = (
                key[0],
                cause.code,
                cause.fix,
                tuple(sorted((v, tuple(n)) for v, n in cause.by_verdict.items())),
            )
        first = seen.get(same)
        if first is None:
            seen[same] = cause
            out.append(cause)
            continue
        first.cells += len(cause.seen - first.seen)
        first.seen |= cause.seen
        first.calls_lost += cause.calls_lost
        first.session_tools = max(first.session_tools, cause.session_tools)
        first.clients += [c for c in cause.clients if c not in first.clients]
        listed = set(first.tools)
        first.tools += [t for t in cause.tools if t not in listed]
        named = set(first.culprits)
        first.culprits += [t for t in cause.culprits if t not in named]
        first.evidence += [e for e in cause.evidence if e not in first.evidence]
        first.keywords += [k for k in cause.keywords if k not in first.keywords]
        gone = set(first.lost)
        first.lost += [w for w in cause.lost if w not in gone]
        for v, names in cause.by_verdict.items():
            have = first.by_verdict.setdefault(v, [])
            have += [n for n in names if n not in have]
        if rank(cause.verdict) < rank(first.verdict):
            first.verdict = cause.verdict
        if cause.weakest and (first.weakest is None or _weaker(cause.weakest, first.weakest)):
            first.weakest = cause.weakest
    return out


_LEVELS = {level: i for i, level in enumerate(("observed", "code", "issue", "doc", "assumed"))}


def _weaker(a: str, b: str) -> bool:
    return _LEVELS.get(a, 9) > _LEVELS.get(b, 9)


__all__ = ["Cause", "add_cell", "count_cell", "merge_causes"]
