"""The tools x clients grid, and what the release gate judges, computed from typed result events
(shared by every writer and the checklist).

A results stream may hold several runs: ``merge`` joins per-client shards, each with its own
``run-started`` (its profiles) and ``run-finished``. Everything here reads every run, so a merged
file is judged exactly as the union of its shards (``runs``, ``run_profiles``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from mcp_matrix.core.event_values import ListedProfile
from mcp_matrix.core.events import (
    CallCell,
    Cell,
    DiscoveryCell,
    Event,
    RunFinished,
    RunStarted,
    Skipped,
)
from mcp_matrix.core.verdicts import LOST, RELEASE_FAILING, V, is_finding, rank

__all__ = [
    "ASSUMED_KEY",
    "ASSUMED_MARK",
    "LOST_TOOL",
    "RELEASE_FAILING",
    "Grid",
    "Judged",
    "Run",
    "Scope",
    "assumed_cells",
    "build_grid",
    "calls_not_made",
    "default_required",
    "gate_scope",
    "not_made_text",
    "opt_in",
    "over_threshold",
    "rests_on_assumed",
    "run_profiles",
    "runs",
    "session_blockers",
]

# Discovery verdicts that lose a tool: they fail the gate in a required client.
LOST_TOOL = LOST

# A grid cell whose verdict rests on ``assumed`` evidence (docs/design.md: a verdict is never
# stronger than its weakest evidence) carries this mark beside its symbol: the same verdict, not
# a worse one, said to be a prediction nobody has seen (Amp's calls: its model runs in its service).
ASSUMED_MARK = "*"
ASSUMED_KEY = (
    f"{ASSUMED_MARK} marks a verdict that rests on assumed evidence (that behaviour of the "
    "client was never observed, read in its code, reported or documented): a prediction, not a "
    "measurement"
)


class Judged(Protocol):
    """A cell as any report holds it (a results event, a report model's cell)."""

    @property
    def tool(self) -> str: ...
    @property
    def profile(self) -> str: ...
    @property
    def verdict(self) -> str: ...
    @property
    def weakest_evidence(self) -> str | None: ...


def rests_on_assumed(cells: Iterable[Judged], verdict: str | None) -> bool:
    """Some cell of ``verdict`` among ``cells`` (one grid cell's) rests on assumed evidence."""
    return any(c.verdict == verdict and c.weakest_evidence == "assumed" for c in cells)


def assumed_cells(
    cells: Iterable[Judged], worst: Callable[[str, str], str | None]
) -> set[tuple[str, str]]:
    """The (tool, profile) grid cells whose worst verdict (``worst(tool, profile)``) rests on
    assumed evidence: what a writer that holds its own grid marks with ``ASSUMED_MARK``."""
    return {
        (c.tool, c.profile)
        for c in cells
        if c.weakest_evidence == "assumed" and c.verdict == worst(c.tool, c.profile)
    }


@dataclass
class Grid:
    profiles: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], list[Cell]] = field(default_factory=dict)

    def worst(self, tool: str, profile: str) -> str | None:
        cells = self.cells.get((tool, profile), [])
        return min((c.verdict for c in cells), key=rank) if cells else None

    def assumed(self, tool: str, profile: str) -> bool:
        """The cell's worst verdict rests on assumed evidence (``ASSUMED_MARK``)."""
        cells = self.cells.get((tool, profile), [])
        return rests_on_assumed(cells, self.worst(tool, profile))

    def findings(self) -> list[Cell]:
        """The cells that are findings: anything but exactly as intended (``is_finding``)."""
        return [c for cs in self.cells.values() for c in cs if is_finding(c.verdict)]


@dataclass(frozen=True)
class Run:
    """One run of a stream: its ``run-started`` (None for events before any), its events, and
    its ``run-finished`` (None when the run never ended: killed, or still being written)."""

    start: RunStarted | None
    events: tuple[Event, ...]
    finish: RunFinished | None


def runs(events: Iterable[Event]) -> list[Run]:
    """The runs of a stream, in order: each ``run-started`` opens one (a merged file has one per
    shard); events before any belong to an anonymous run."""
    out: list[Run] = []
    start: RunStarted | None = None
    held: list[Event] = []
    for e in events:
        if isinstance(e, RunStarted):
            if start is not None or held:
                out.append(_run(start, held))
            start, held = e, []
        else:
            held.append(e)
    if start is not None or held:
        out.append(_run(start, held))
    return out


def _run(start: RunStarted | None, held: list[Event]) -> Run:
    finish = next((e for e in reversed(held) if isinstance(e, RunFinished)), None)
    return Run(start, tuple(held), finish)


def _required_by_default(profile: ListedProfile) -> bool:
    """A profile's ``required_by_default``; results written before that field existed leave out
    the probes (``versions: probe``)."""
    given = profile.required_by_default
    return not _probe(profile) if given is None else given


def _probe(profile: ListedProfile) -> bool:
    return (profile.versions or "").strip() == "probe"


def run_profiles(events: Iterable[Event]) -> dict[str, ListedProfile]:
    """Every profile of every run in the stream, by name, in the order first listed. A profile
    required by default in any run is required (two shards that disagree never lose a client)."""
    out: dict[str, ListedProfile] = {}
    for e in events:
        if not isinstance(e, RunStarted):
            continue
        for p in e.profiles:
            known = out.get(p.name)
            if known is None or (_required_by_default(p) and not _required_by_default(known)):
                out[p.name] = p
    return out


def default_required(events: Iterable[Event]) -> tuple[str, ...]:
    """The clients a release must not lose a tool in when no policy names them: every profile of
    every run that is ``required_by_default`` (not a probe, not an opt-in configuration)."""
    return tuple(n for n, p in run_profiles(events).items() if _required_by_default(p))


def opt_in(events: Iterable[Event]) -> frozenset[str]:
    """The opt-in configurations of the stream (``required_by_default: false`` and not a probe: a
    pinned protocol era, a rollout flag): the gate never fails on their cells unless a policy or
    ``--require`` names them. A probe's verdicts over ``--fail-on`` still fail it (a probe stands
    for every client with its habit), though a tool it hides does not."""
    return frozenset(
        n for n, p in run_profiles(events).items() if not _required_by_default(p) and not _probe(p)
    )


@dataclass(frozen=True)
class Scope:
    """What the release gate judges: a tool lost (``LOST_TOOL``) in a ``required`` client, and a
    verdict in ``failing`` in any client that is not ``opt_in`` (unless it is required)."""

    failing: frozenset[str]
    required: frozenset[str]
    opt_in: frozenset[str]

    def judges(self, verdict: str, profile: str) -> bool:
        """A cell of ``verdict`` in ``profile`` fails the release."""
        lost = verdict in LOST_TOOL and profile in self.required
        return lost or self._over(verdict, profile)

    def fails(self, cell: Cell) -> bool:
        """The cell fails the release: the reports' ``release_failing`` (JUnit, SARIF, JSON)."""
        return self.judges(cell.verdict, cell.profile)

    def over(self, cell: Cell) -> bool:
        """The cell fails the release by its verdict (``failing``), not as a lost tool."""
        return self._over(cell.verdict, cell.profile)

    def _over(self, verdict: str, profile: str) -> bool:
        return verdict in self.failing and (profile not in self.opt_in or profile in self.required)


def gate_scope(
    events: Iterable[Event],
    failing: Iterable[str] = RELEASE_FAILING,
    required: Iterable[str] | None = None,
) -> Scope:
    """The gate over a stream. ``required`` None: every profile required by default, or none when
    ``failing`` is empty too (``--fail-on none`` without ``--require``: nothing fails)."""
    events = list(events)
    failing = frozenset(failing)
    if required is None:
        required = default_required(events) if failing else ()
    return Scope(failing, frozenset(required), opt_in(events))


def build_grid(events: Iterable[Event]) -> Grid:
    events = list(events)
    grid = Grid(profiles=list(run_profiles(events)))
    tools: set[str] = set()  # membership beside the ordered lists: 10,000 tools stay linear
    profiles: set[str] = set(grid.profiles)
    for e in events:
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


def over_threshold(
    events: Iterable[Event],
    failing: Iterable[str] = RELEASE_FAILING,
    required: Iterable[str] = (),
) -> list[Cell]:
    """The cells whose verdict is one of ``failing``, in every client but the opt-in ones
    (``opt_in``) that ``required`` does not name: the gate never fails on a profile not required."""
    events = list(events)
    scope = Scope(frozenset(failing), frozenset(required), opt_in(events))
    return [e for e in events if isinstance(e, (DiscoveryCell, CallCell)) and scope.over(e)]


def session_blockers(events: Iterable[Event]) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Profile -> (how many tools it lists, the tools that break its session), for each profile
    whose other tools' cells hold their own predictions: each culprit's cell is
    ``session-broken`` and the rest are what the client does with them if the model API accepted
    the request. Results written before per-tool predictions were kept (every tool of the server
    ``session-broken``, the culprit named in each copy's finding) give none."""
    listed: dict[str, set[str]] = {}
    broken: dict[str, dict[str, None]] = {}  # ordered and a set: thousands of tools can break it
    for e in events:
        if isinstance(e, DiscoveryCell):
            listed.setdefault(e.profile, set()).add(e.tool)
            if e.verdict == V.SESSION_BROKEN.name:
                broken.setdefault(e.profile, {})[e.tool] = None
    return {
        p: (len(listed[p]), tuple(tools))
        for p, tools in broken.items()
        if tools and len(tools) < len(listed[p])
    }


def calls_not_made(events: Iterable[Event]) -> list[Skipped]:
    """The calls a profile was to make and did not: ruled out or cut short by the run's deadline
    or the circuit breaker (a ``skipped`` event naming its profile): cells not measured, never a
    pass. Calls the safety policy leaves out, or that have no case, name no profile."""
    return [e for e in events if isinstance(e, Skipped) and e.profile]


def not_made_text(missing: list[Skipped], limit: int = 6) -> str:
    """The calls not made in one sentence: how many, in which clients, and the commonest reason
    (the deadline, a tool or a server that stopped answering)."""
    reasons: dict[str, int] = {}
    for e in missing:
        reasons[e.reason] = reasons.get(e.reason, 0) + 1
    reason, count = max(reasons.items(), key=lambda r: r[1])
    clients = list(dict.fromkeys(str(e.profile) for e in missing))
    shown = ", ".join(clients[:limit]) + (
        f" and {len(clients) - limit} more" if len(clients) > limit else ""
    )
    text = f"{len(missing)} call(s) not made in {shown}: {reason}"
    if len(reasons) > 1:
        text += f" ({count} of them; {len(missing) - count} for other reasons)"
    return text
