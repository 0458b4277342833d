"""The matrix: profiles x tools x cases against a live server, events out.

One session per profile, presenting that profile's identity, profiles in parallel
(``jobs``). Where calling twice is safe, a mutated call's intact twin is made on the same
session right after it (``mcp_matrix.run.deliver.compare``: the same server state), so a mutated call
that got the same answer is ``tolerated`` rather than ``silent-*``; a call that may not be
repeated (a write the cases file lists) reaches the server exactly once per profile.
Each session lists tools (first page) after initialize, as every client does before calling,
so a server that breaks the session on tools/list (an expired session id) is caught.
The runner prints nothing: it emits events (mcp_matrix.run.results) that writers consume.
A crash or Ctrl-C keeps every event emitted so far: on Ctrl-C the calls in flight are cut
short (their cells are not recorded, since the run, not the server, ended them) and the
run ends with ``run-finished`` and ``interrupted: true``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_matrix import __version__
from mcp_matrix.behaviours import registry
from mcp_matrix.core.errors import InputErrors
from mcp_matrix.core.events import (
    CallCell,
    DiscoveryCell,
    Event,
    ProfileError,
    RunFinished,
    RunStarted,
    Skipped,
    SnapshotTaken,
)
from mcp_matrix.core.tools import read_only, tools_by_name
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.bounds import CircuitBreaker, Deadline, timeout_note
from mcp_matrix.run.cases import Case, plan_cases, repeat_safe, unknown_tools
from mcp_matrix.run.classify import Answer, Verdict
from mcp_matrix.run.connection import Interrupted, breaker_saw
from mcp_matrix.run.deliver import Delivery, Held, Intended, LiveServer, deliver, hold
from mcp_matrix.run.discovery import discover_all, listed_profile
from mcp_matrix.run.sharing import (
    FreshAnswers,
    ProfileConnection,
    ServerEras,
    SessionPool,
    SharingPlan,
    Work,
    fresh_identities,
    plan_sharing,
)
from mcp_matrix.simulate.caching import stale_window
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import OpenSnapshot, Snapshot, open_snapshot
from mcp_matrix.wire.session import Timeouts

Emit = Callable[[Event], None]
FRESH_REASON = (
    "a client's session of its own per call meets this bundled server empty (its store lives in "
    "its process), so each distinct call of the same identity is sent once"
)


@dataclass(frozen=True)
class Progress:
    """How far a run is, for a progress line: calls made or explained of those planned."""

    done: int
    total: int  # 0 until the calls are planned (connecting, discovery)
    elapsed: float  # seconds since the calls began
    label: str  # what is happening, or the last (profile, case) done

    @property
    def eta(self) -> float | None:
        """Seconds left at the pace so far; None before the first call or after the last."""
        if not self.done or self.done >= self.total:
            return None
        return self.elapsed / self.done * (self.total - self.done)


class _Counter:
    """Counts the calls of a run from every profile's thread and reports each step."""

    def __init__(self, report: Callable[[Progress], None] | None) -> None:
        self.report = report
        self.total = 0
        self.done = 0
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def phase(self, label: str, total: int = 0) -> None:
        self.total, self.started = total, time.monotonic()
        if self.report:
            self.report(Progress(0, total, 0.0, label))

    def step(self, label: str) -> None:
        if not self.report:
            return
        with self.lock:
            self.done += 1
            now = Progress(self.done, self.total, time.monotonic() - self.started, label)
        self.report(now)


@dataclass
class RunConfig:
    target: Target
    profiles: list[Profile]
    cases: list[Case] = field(default_factory=list)
    baseline: Snapshot | None = None
    allow_writes: bool = False
    auto_cases: bool = True
    jobs: int = 4
    timeouts: Timeouts = field(default_factory=Timeouts)
    cases_source: str = ""
    on_progress: Callable[[Progress], None] | None = None
    timeout_run: float | None = None  # the whole run's deadline (mcp_matrix.run.bounds)
    circuit_breaker: bool = True
    share: str = "calls"  # mcp_matrix.run.sharing.SHARE_MODES


@dataclass
class MatrixOutcome:
    """What ``run_matrix`` did: measured or not, the verdict counts, what the calls cost.

    The api's ``RunOutcome`` (public) is built from it and adds the typed events.
    """

    measured: bool
    interrupted: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    deadline_passed: bool = False
    work: Work | None = (
        None  # what the calls cost the server against the least (mcp_matrix.run.sharing)
    )


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def run_matrix(config: RunConfig, emit: Emit) -> MatrixOutcome:
    """Run everything; returns whether the target could be measured and the verdict counts.

    Ctrl-C (KeyboardInterrupt in the calling thread) at any point after start still ends the
    stream with ``run-finished`` (``interrupted: true``) and returns; it is not re-raised.
    A case naming a tool the server does not list raises ``InputErrors`` once tools/list is in,
    before any call (the stream ends with ``run-finished``, not measured).
    """
    registry.load_all()
    deadline = Deadline(config.timeout_run, reserve=config.timeouts.shutdown)
    progress = _Counter(config.on_progress)
    progress.phase("connecting to the server")
    interrupted_early = False
    held = None
    try:
        held = _snapshot_with_retry(config, deadline)
        doc: dict | None = held.doc
        held.close()  # no call goes on it: each profile calls on its own sessions
    except KeyboardInterrupt as exc:  # take_snapshot closed the server on its way out
        # a snapshot finished before the interrupt is kept (also one interrupted while closing)
        doc = getattr(exc, "doc", None) or (held.doc if held is not None else None)
        interrupted_early = True
    try:
        return _after_snapshot(config, emit, doc, interrupted_early, deadline, progress)
    finally:
        if held is not None:  # closed already, unless an interrupt came first
            with contextlib.suppress(KeyboardInterrupt):  # the stream has ended: not re-raised
                held.close()


def _interrupted(emit: Emit, message: str) -> MatrixOutcome:
    """The run stopped by the user before anything was measured: its last line says where."""
    error = {"kind": "interrupted", "message": message, "detail": "", "stderr_tail": []}
    emit(RunFinished(finished_at=now(), measured=False, counts={}, error=error, interrupted=True))
    return MatrixOutcome(False, True, {})


def _after_snapshot(
    config: RunConfig,
    emit: Emit,
    doc: dict | None,
    interrupted_early: bool,
    deadline: Deadline,
    progress: _Counter,
) -> MatrixOutcome:
    """The run once the snapshot is in: its events, then discovery and the calls."""
    run_id = uuid.uuid4().hex[:12]
    breaker = CircuitBreaker(config.circuit_breaker)
    snap = Snapshot(doc or {})
    emit(
        RunStarted(
            run_id=run_id,
            started_at=now(),
            mcp_matrix=__version__,
            target=config.target.describe(),
            server=snap.doc.get("serverInfo"),
            server_key=snap.server_key.to_json(),
            protocolVersion=snap.doc.get("protocolVersion"),
            cases=config.cases_source,
            baseline=config.baseline.source if config.baseline else None,
            profiles=tuple(listed_profile(p) for p in config.profiles),
        )
    )
    if doc is None:
        return _interrupted(emit, "interrupted while connecting to the server")
    emit(SnapshotTaken(snapshot=dict(snap.doc)))
    if interrupted_early:
        return _interrupted(
            emit, "interrupted while the server was being closed, after the snapshot"
        )
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def count(cell: DiscoveryCell | CallCell) -> None:
        with lock:  # profiles count from several threads
            counts[cell.verdict] = counts.get(cell.verdict, 0) + 1
        emit(cell)

    def finish(
        measured: bool,
        error: dict | None = None,
        interrupted: bool = False,
        late: bool | None = None,
    ) -> None:
        """The run-finished line, the last one whichever way the run ends."""
        emit(
            RunFinished(
                finished_at=now(),
                measured=measured,
                counts=counts,
                error=error,
                interrupted=interrupted,
                deadline_passed=late,
            )
        )

    error = snap.error or _list_failure(snap.doc)
    if error:
        late = deadline.passed()  # the connection or the listing ran into --timeout-run
        finish(False, error, late=late)
        return MatrixOutcome(False, counts=counts, deadline_passed=late)
    unknown = unknown_tools([tool for _, tool in snap.tools], config.cases)
    if unknown:  # a case for a tool the server does not list: the user's to fix, before any call
        error = {
            "kind": "input-error",
            "message": "; ".join(str(e) for e in unknown),
            "detail": "",
            "stderr_tail": [],
        }
        finish(False, error)
        raise InputErrors(unknown)

    work = None
    try:
        work = _run_cells(config, snap, count, emit, deadline, breaker, progress)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    passed = deadline.passed()
    finish(True, interrupted=interrupted, late=passed)
    return MatrixOutcome(True, interrupted, counts, deadline_passed=passed, work=work)


def _snapshot_with_retry(config: RunConfig, deadline: Deadline) -> OpenSnapshot:
    """The run's snapshot (the caller closes its main session); a handshake that
    timed out is retried once with twice the bound, since on a loaded machine our bound, not the
    server, may be what failed."""
    versions, modern = probe_versions(config.profiles), modern_probe(config.profiles)
    held = open_snapshot(
        config.target, deadline.cap(config.timeouts), probe_versions=versions, modern=modern
    )
    error = held.doc.get("error") or {}
    if (
        error.get("kind") != "timeout"
        or held.doc.get("serverInfo") is not None
        or deadline.passed()
    ):
        return held
    held.close()
    longer = replace(config.timeouts, initialize=2 * config.timeouts.initialize)
    held = open_snapshot(
        config.target, deadline.cap(longer), probe_versions=versions, modern=modern
    )
    error = held.doc.get("error") or {}
    if error.get("kind") == "timeout":
        first = deadline.cap(config.timeouts).initialize
        error["message"] = (
            f"{error.get('message', '')} (the second try; the first waited {first:g} s; {timeout_note()})"
        )
    return held


def probe_versions(profiles: list[Profile]) -> tuple[str, ...]:
    """The handshake versions to probe: those the selected profiles ask for (an unprobed version
    is unknown to the session verdict, and no other profile reads the answers; the ``snapshot``
    command probes HANDSHAKE_PROBES for any profile later)."""
    asked = [p.identity.protocol_version for p in profiles if p.identity.protocol_version]
    return tuple(dict.fromkeys(asked))


def modern_probe(profiles: list[Profile]) -> str:
    """When to probe the 2026-07-28 era: always if a selected profile tries it (or reads its
    cache hints); else only after a refused ``initialize`` (the snapshot's modern fallback, and
    the versions the refusal is reported with), the only other readers of ``eras.modern``."""
    tries = any(
        p.handshake is not None
        and (
            p.handshake.fallback != "initialize-only"
            or p.handshake.listens
            or p.handshake.honours_ttl
        )
        for p in profiles
    )
    return "always" if tries else "if-refused"


def _list_failure(doc: Any) -> dict | None:
    """Why the tools could not be listed (a JSON-RPC error to tools/list), or None.

    A client that gets an error for tools/list shows none of the server's tools, so nothing
    about them can be measured: the run says so (exit 3) instead of passing with no cells.
    """
    err = doc.get("listError")
    if not err:
        return None
    pages = len(doc.get("pages") or [])
    return {
        "kind": "list-error",
        "message": f"tools/list was refused (page {pages + 1}): {err.get('code')} {err.get('message')}",
        "detail": "" if err.get("data") is None else str(err.get("data"))[:500],
        "stderr_tail": list(doc.get("stderrTail") or []),
    }


def _plan_sessions(
    config: RunConfig, eras: ServerEras, cases: list[Case], live_by_name: dict[str, Any]
) -> tuple[SharingPlan, FreshAnswers | None]:
    """Which profiles share sessions and answers, and the identities whose calls a server
    starting empty answers alike (only when calls are shared)."""
    sharing = plan_sharing(
        config.share, config.profiles, [live_by_name.get(c.tool) for c in cases], eras
    )
    fresh = (
        fresh_identities(config.target, config.profiles, eras) if sharing.mode == "calls" else None
    )
    if fresh is not None and any(sessions_opened(p, 2) > 1 for p in config.profiles):
        sharing = replace(sharing, reason=f"{sharing.reason}; {FRESH_REASON}")
    return sharing, fresh


def _run_cells(
    config: RunConfig,
    snap: Snapshot,
    count: Callable[[DiscoveryCell | CallCell], None],
    emit: Emit,
    deadline: Deadline,
    breaker: CircuitBreaker,
    progress: _Counter,
) -> Work:
    """Discovery, then calls through every profile; KeyboardInterrupt stops the calls in flight and propagates.
    Returns what the calls cost the server against the least they could.

    A call the deadline or the circuit breaker rules out is a ``skipped`` event naming the
    profile and why, so every cell of the matrix is either measured or explained."""
    progress.phase("discovery")
    live_views = discover_all(snap, config.profiles)
    base_views = (
        discover_all(config.baseline, config.profiles, server=snap.server_name)
        if config.baseline
        else None
    )
    for view in live_views:
        for t in view.tools:
            count(DiscoveryCell.of(view.profile, t))

    live_tools = [tool for _, tool in snap.tools]
    cases, skips = plan_cases(live_tools, config.cases, config.allow_writes, config.auto_cases)
    for s in skips:
        emit(Skipped(tool=s.tool, case=s.case, reason=s.reason))
    # The first tool of a name stands for it (a server may list a name twice; plan_cases skips
    # such a name unless every one of them is safe to call).
    live_by_name = tools_by_name(live_tools)
    base_tools = tools_by_name(t for _, t in config.baseline.tools) if config.baseline else {}

    sharing, fresh = _plan_sessions(config, ServerEras.of(snap.eras), cases, live_by_name)
    emit(sharing.to_event())
    sessions = SessionPool(
        sharing,
        config.profiles,
        config.target,
        config.timeouts,
        deadline,
        breaker,
        [name for name, tool in live_by_name.items() if read_only(tool)],
        fresh,
    )
    stop = threading.Event()
    progress.phase("calling", total=len(cases) * len(config.profiles))
    runners: list[_ProfileRunner] = []

    def not_called(profile: str, case: Case, reason: str) -> None:
        emit(Skipped(profile=profile, tool=case.tool, case=case.name, reason=reason))
        progress.step(f"{profile} {case.id} (not called)")

    def run_profile(i: int) -> None:
        profile = config.profiles[i]
        base = base_views[i] if base_views else None
        holding = hold(
            profile, live_views[i], base, live_by_name, base_tools, config.baseline, snap
        )
        window = stale_window(profile, config.baseline, snap) if holding.stale else None
        runner = _ProfileRunner(config, profile, stop, breaker, sessions.connection(profile))
        runners.append(
            runner
        )  # before the first stop check: an interrupt sees every runner in flight
        try:
            for case in cases:
                if stop.is_set() and not deadline.passed():
                    return  # the user interrupted: what was not made is not a finding
                why = deadline.reason() if deadline.passed() else breaker.reason(case.tool)
                if why:
                    not_called(profile.name, case, why)
                    continue
                try:
                    event = runner.run_case(case, holding)
                    if event.get("stale") and window is not None:
                        event["stale_for"] = (
                            window.text
                        )  # how long a stale schema lives in this client
                except Interrupted:
                    if not deadline.passed():
                        return
                    not_called(
                        profile.name, case, deadline.reason().replace("not called", "cut short")
                    )
                    continue
                shared = runner.conn.take_answer_from()
                if shared:  # another profile's byte-identical read-only call (--share calls)
                    event["answer_from"] = shared[0]
                count(CallCell.of(event))
                progress.step(f"{profile.name} {case.id}")
        finally:
            runner.close()

    pool = ThreadPoolExecutor(max_workers=max(1, config.jobs), thread_name_prefix="profile")
    order = longest_first(config.profiles, len(cases))
    futures = {pool.submit(run_profile, i): i for i in order}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            if deadline.passed() and not stop.is_set():
                stop.set()
                for runner in runners:
                    runner.conn.abort()  # calls waiting past the deadline end now
            for f in done:
                if f.exception() is not None:
                    emit(
                        ProfileError(
                            profile=config.profiles[futures[f]].name,
                            error=f"{type(f.exception()).__name__}: {f.exception()}",
                        )
                    )
    except KeyboardInterrupt:
        stop.set()
        for runner in runners:
            runner.conn.abort()  # a call waiting on a hung server ends now, not at its timeout
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        sessions.close()
    return sessions.work()


def sessions_opened(profile: Profile, calls: int) -> int:
    """How many sessions (stdio server processes) a profile opens for ``calls`` calls: one per
    call for a client that opens a session per call (langchain-mcp-adapters), else one."""
    per_call = any(u.name == "new-session-per-call" for u in profile.call)
    return calls if per_call else 1


def longest_first(profiles: list[Profile], calls: int) -> list[int]:
    """The profiles' indices, those that open the most sessions first (then in run order), so
    the pool does not end with one profile's long chain of sessions running alone."""
    return sorted(range(len(profiles)), key=lambda i: -sessions_opened(profiles[i], calls))


class _ProfileRunner:
    """One profile's session: each case through ``mcp_matrix.run.deliver`` to the live server."""

    def __init__(
        self,
        config: RunConfig,
        profile: Profile,
        stop: threading.Event,
        breaker: CircuitBreaker,
        conn: ProfileConnection,
    ) -> None:
        self.config = config
        self.profile = profile
        self.stop = stop
        self.breaker = breaker
        self.conn = conn

    def close(self) -> None:
        self.conn.close()

    def run_case(self, case: Case, held: Held) -> dict:
        base = {
            "event": "call",
            "profile": self.profile.name,
            "tool": case.tool,
            "case": case.name,
            "origin": case.origin,
            "expect": case.expect.outcome,
        }
        safe = repeat_safe(held.live_raw.get(case.tool), case)
        bound = self.conn.timeouts.call

        def heard(tool: str, answer: Answer) -> None:
            breaker_saw(self.breaker, case.tool, self.profile.name, answer, bound)

        server = LiveServer(self.conn, held.live_raw, on_answer=heard, repeat_safe=lambda _: safe)
        call = Intended(case.tool, case.arguments, case.omit_arguments, case.expect, case.id)
        done = deliver(self.profile, held, call, server)
        chosen = done.verdict
        event = {**base, **_verdict_json(chosen), "stale": held.stale}
        notes = [n.message for n in done.notes] + once_notes(done, safe)
        if notes:
            event["notes"] = notes
        if len(done.verdicts) > 1:
            event["variants"] = [
                {"verdict": v.verdict, "sometimes": list(v.sometimes)} for v in done.verdicts
            ]
        if chosen.sometimes:  # also when only that way was sent (a write: ``deliver``)
            event["frequency"] = "sometimes"
        return event


def once_notes(done: Delivery, safe: bool) -> list[str]:
    """What a cell says of a call that may not be repeated (a write): that it went out once, the
    way the client sometimes sends it, not also the usual way; a failure after which it was not
    sent again."""
    if safe:
        return []
    notes = []
    if done.unsent:
        notes.append(
            "sent once, the way the client sometimes sends it "
            f"({', '.join(done.verdict.sometimes)}), the way most likely to go wrong; not also "
            "the usual way, since the tool may write (repeat_safe: true on the case sends both)"
        )
    if any(a is not None and a.wire_error is not None for a in done.answers):
        notes.append(
            "the call may have run on the server before the failure; it was not sent again "
            "(the tool may write)"
        )
    return notes


def _verdict_json(v: Verdict) -> dict:
    return {
        "verdict": v.verdict,
        "reason": v.reason,
        "mutations": [m.to_json() for m in v.mutations],
        "answer": v.answer,
        "behaviours": list(v.behaviours),
        "evidence": [e.to_json() for e in v.evidence],
        "weakest_evidence": v.weakest_evidence,
        "sometimes": list(v.sometimes),
        **({"violations": [e.to_json() for e in v.violations]} if v.violations else {}),
    }
