"""The public entry for callers that are not the CLI: the pytest plugin, scripts, CI glue.

    from mcp_matrix import api
    target = api.target(server="memory")                    # or stdio=, http=, sse=
    outcome = api.run(target, profiles=api.profiles(["claude-code"]), timeouts=api.Timeouts(call=5))
    outcome.verdict("memory_reflect", "claude-code", "alias-only")   # -> "intact"
    snap = api.snapshot(target, timeouts=api.Timeouts())
    api.discover(snap, api.profiles())                       # offline: typed discovery cells

Timeouts and the server's environment are parameters of every call that reaches a server
(the plugin once ran without either); what comes back is typed (mcp_matrix.core.events), with secrets
masked as in a results file. Nothing here prints.

``run`` is the one assembly of a live run, for the ``run`` command as for any caller: the
results stream written as it is made (a path is locked and replaced), progress as values
(``Progress``: calls done of planned, ETA), an interrupt (KeyboardInterrupt, which the CLI
makes of SIGINT and SIGTERM) ending the stream with ``run-finished`` and the servers closed,
the reports written when it ends, and the release gate (``RunOutcome.gate``) over its events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import IO

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import CallCell, Cell, DiscoveryCell, Event
from mcp_matrix.core.outfiles import open_results
from mcp_matrix.core.verdicts import RELEASE_FAILING
from mcp_matrix.gate.checklist import lost_tools
from mcp_matrix.profiles.loader import runnable_profiles
from mcp_matrix.profiles.model import Profile
from mcp_matrix.report.grid import default_required, over_threshold
from mcp_matrix.report.writers import FORMATS, write_report
from mcp_matrix.run.cases import Case, load_cases
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.run.matrix import RunConfig, run_matrix
from mcp_matrix.run.progress import Progress
from mcp_matrix.run.results import ResultsWriter
from mcp_matrix.run.session_pool import Work
from mcp_matrix.run.sharing import SHARE_MODES
from mcp_matrix.targets.kinds import KINDS, Target, TargetOptions
from mcp_matrix.targets.snapshot import Snapshot, load_snapshot, take_snapshot
from mcp_matrix.wire.session import Timeouts


@dataclass(frozen=True)
class Gate:
    """The release gate over a run: tools lost in a required client, cells over ``fail_on``."""

    fail_on: tuple[str, ...]
    required: tuple[str, ...]
    lost: tuple[DiscoveryCell, ...]  # hidden, server-dropped, session-broken
    over: tuple[Cell, ...]  # cells whose verdict is in fail_on

    @property
    def passed(self) -> bool:
        return not self.lost and not self.over


@dataclass(frozen=True)
class RunOutcome:
    """One run: whether the target was measured, and every event it emitted, typed."""

    measured: bool
    interrupted: bool
    deadline_passed: bool
    events: tuple[Event, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    json_events: tuple[dict, ...] = field(default=(), repr=False, compare=False)
    work: Work | None = (
        None  # the calls' sessions and requests against the least (mcp_matrix.run.session_pool)
    )

    @property
    def cells(self) -> tuple[Cell, ...]:
        """The discovery and call cells, in the order they were made."""
        return tuple(e for e in self.events if isinstance(e, (DiscoveryCell, CallCell)))

    def cell(self, tool: str, profile: str, case: str | None = None) -> Cell:
        """The call cell (with ``case``) or the discovery cell of ``tool`` in ``profile``."""
        kind = "call" if case else "discovery"
        for c in self.cells:
            if (
                c.KIND == kind
                and c.tool == tool
                and c.profile == profile
                and (case is None or (isinstance(c, CallCell) and c.case == case))
            ):
                return c
        raise KeyError(f"no {kind} cell {tool}[{profile}]" + (f"::{case}" if case else ""))

    def verdict(self, tool: str, profile: str, case: str | None = None) -> str:
        return self.cell(tool, profile, case).verdict

    def to_json(self) -> list[dict]:
        """The events as a results stream holds them (JSON; the writers and the checklist read ``events``)."""
        return list(self.json_events) or [e.to_json() for e in self.events]

    @property
    def profile_errors(self) -> tuple[Event, ...]:
        """Profiles whose run crashed: their cells are missing, so the run is never a pass."""
        return tuple(e for e in self.events if e.KIND == "profile-error")

    def gate(
        self, fail_on: Sequence[str] = RELEASE_FAILING, require: Sequence[str] | None = None
    ) -> Gate:
        """The release gate. ``require`` None: every real client profile of the run (not the
        probes), or none when ``fail_on`` is empty too (nothing fails). An opt-in configuration's
        cells count only when ``require`` names it, as in ``check``."""
        events = self.events
        if require is None:
            required = default_required(events) if fail_on else ()
        else:
            required = tuple(require)
        return Gate(
            fail_on=tuple(fail_on),
            required=required,
            lost=tuple(lost_tools(events, required)),
            over=tuple(over_threshold(events, fail_on, required)),
        )


def target(
    *,
    stdio: str | Sequence[str] | None = None,
    http: str | None = None,
    sse: str | None = None,
    server: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    cwd: str | None = None,
    name: str = "",
    **other_kinds: str | None,
) -> Target:
    """What to connect to: one of ``stdio``, ``http``, ``sse`` or a bundled ``server`` (default
    ``memory``), or any other kind of ``mcp_matrix.targets.kinds.KINDS`` by its name (``target_of``)."""
    values = {"stdio": stdio, "http": http, "sse": sse, "server": server, **other_kinds}
    return target_of(values, env=env, headers=headers, cwd=cwd, name=name)


def target_of(
    values: Mapping[str, str | Sequence[str] | None],
    *,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    cwd: str | None = None,
    name: str = "",
) -> Target:
    """The target of the one kind given a value in ``values`` (kind name -> value; none: the
    bundled ``memory`` server), parsed and checked by its kind as the CLI does."""
    unknown = sorted(set(values) - set(KINDS))
    if unknown:
        raise InputError(
            f"no target kind {unknown[0]!r}; expected one of: {', '.join(KINDS)}", where="target"
        )
    given = [k for k in KINDS if values.get(k)]
    if len(given) > 1:
        raise InputError(f"give one target, not {' and '.join(given)}", where="target")
    options = TargetOptions(headers=dict(headers or {}), env=dict(env or {}), cwd=cwd, name=name)
    kind = given[0] if given else "server"
    return KINDS[kind].build(values.get(kind) or "memory", options)


def profiles(names: Sequence[str] = (), extra_dirs: Sequence[str | Path] = ()) -> list[Profile]:
    """The runnable profiles named (all of them when none are), with did-you-mean for a typo."""
    return runnable_profiles(names, extra_dirs)


def bundled_cases(server_spec: str) -> Path | None:
    """The cases file shipped with a bundled server (``matrix_servers/<name>/cases.yaml``)."""
    name = server_spec.split()[0].split("-")[0]
    try:
        path = resources.files(f"matrix_servers.{name}").joinpath("cases.yaml")
    except ModuleNotFoundError:
        return None
    return Path(str(path)) if path.is_file() else None


def snapshot(
    target: Target, *, timeouts: Timeouts, env: Mapping[str, str] | None = None
) -> Snapshot:
    """What a client learns on connect (docs/snapshot.md); ``error`` says why when incomplete.

    A handshake that timed out is tried once more with twice the bound, as ``run`` does: on a
    loaded machine our bound, not the server, may be what failed."""
    target = _with_env(target, env)
    doc = take_snapshot(target, timeouts=timeouts)
    if (doc.get("error") or {}).get("kind") == "timeout" and doc.get("serverInfo") is None:
        doc = take_snapshot(target, timeouts=replace(timeouts, initialize=2 * timeouts.initialize))
    return Snapshot(doc)


def discover(snapshot: Snapshot, profiles: Sequence[Profile]) -> tuple[DiscoveryCell, ...]:
    """Offline: the (profile, tool) cells of every profile for a snapshot."""
    views = discover_all(snapshot, list(profiles))
    return tuple(DiscoveryCell.of(v.profile, t) for v in views for t in v.tools)


def run(
    target: Target,
    *,
    profiles: Sequence[Profile],
    timeouts: Timeouts,
    env: Mapping[str, str] | None = None,
    cases: str | Path | Sequence[Case] | None = None,
    baseline: str | Path | Snapshot | None = None,
    allow_writes: bool = False,
    auto_cases: bool = True,
    timeout_run: float | None = None,
    jobs: int = 4,
    circuit_breaker: bool = True,
    share: str = "calls",
    results: str | Path | IO[str] | None = None,
    reports: Sequence[tuple[str, str | Path]] = (),
    fail_on: Sequence[str] = RELEASE_FAILING,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunOutcome:
    """The live matrix (``mcp-matrix run``): discovery and calls through every profile.

    ``cases`` is a cases file or a list of cases; none means the bundled server's own cases
    (none for another target). ``results`` also writes the results stream as it is made (a
    path is locked, then replaced). ``reports`` are (format, path) pairs of
    ``mcp_matrix.report.writers``, written when the run ends, interrupted or not, with ``fail_on``
    as the verdicts they report as failing. ``share`` is one of ``mcp_matrix.run.sharing.SHARE_MODES``;
    ``circuit_breaker`` False keeps calling a tool after one of its calls timed out.
    """
    unknown = [fmt for fmt, _ in reports if fmt not in FORMATS]
    if unknown:
        raise InputError(
            f"unknown report format {unknown[0]!r}; expected one of {', '.join(FORMATS)}",
            where="reports",
        )
    if share not in SHARE_MODES:
        raise InputError(f"expected one of {', '.join(SHARE_MODES)}, got {share!r}", where="share")
    target = _with_env(target, env)
    loaded, source = cases_for(target, cases)
    if isinstance(baseline, (str, Path)):
        baseline = load_snapshot(baseline)
    handle = open_results(str(results), "results") if isinstance(results, (str, Path)) else results
    try:
        writer = ResultsWriter(handle, secrets=target.secrets())
        done = run_matrix(
            RunConfig(
                target=target,
                profiles=list(profiles),
                cases=loaded,
                cases_source=source,
                baseline=baseline,
                allow_writes=allow_writes,
                auto_cases=auto_cases,
                jobs=jobs,
                timeouts=timeouts,
                timeout_run=timeout_run,
                circuit_breaker=circuit_breaker,
                share=share,
                on_progress=on_progress,
            ),
            writer,
        )
    finally:
        if handle is not None and handle is not results:
            handle.close()
    for fmt, path in reports:
        write_report(writer.typed, fmt, str(path), list(fail_on))
    return RunOutcome(
        measured=done.measured,
        interrupted=done.interrupted,
        deadline_passed=done.deadline_passed,
        events=tuple(writer.typed),
        counts=dict(done.counts),
        json_events=tuple(writer.events),
        work=done.work,
    )


def _with_env(target: Target, env: Mapping[str, str] | None) -> Target:
    return replace(target, env={**target.env, **env}) if env else target


def cases_for(target: Target, cases: str | Path | Sequence[Case] | None) -> tuple[list[Case], str]:
    """The cases a run makes (the file's, the list given, or a bundled server's own) and their source."""
    if cases is not None and not isinstance(cases, (str, Path)):
        return list(cases), ""
    path = (
        Path(cases)
        if cases
        else (bundled_cases(target.server) if target.kind == "server" else None)
    )
    return (load_cases(path) if path else []), str(path or "")


__all__ = [
    "Gate",
    "Progress",
    "RunOutcome",
    "Timeouts",
    "bundled_cases",
    "cases_for",
    "discover",
    "profiles",
    "run",
    "snapshot",
    "target",
    "target_of",
]
