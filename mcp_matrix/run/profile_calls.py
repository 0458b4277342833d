"""Every profile's calls in a live run: the sessions and answers profiles share, then each
profile's cases through ``mcp_matrix.run.deliver`` to the live server (profiles in parallel, the
ones that open the most sessions first), a call the deadline or the circuit breaker rules out
a ``skipped`` event. ``mcp_matrix.run.matrix`` runs it once the server is snapshotted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, Protocol

from mcp_matrix.core.events import (
    CallCell,
    DiscoveryCell,
    ProfileError,
    Skipped,
)
from mcp_matrix.core.tools import read_only, tools_by_name
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.bounds import CircuitBreaker, Deadline
from mcp_matrix.run.call_servers import Intended, LiveServer
from mcp_matrix.run.cases import Case, plan_cases, repeat_safe
from mcp_matrix.run.classify import Answer, Verdict
from mcp_matrix.run.connection import Interrupted, breaker_saw
from mcp_matrix.run.deliver import Delivery, deliver
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.run.held import Held, hold
from mcp_matrix.run.progress import Emit, ProgressCounter
from mcp_matrix.run.session_pool import (
    FreshAnswers,
    ProfileConnection,
    SessionPool,
    Work,
    fresh_identities,
)
from mcp_matrix.run.sharing import ServerEras, SharingPlan, plan_sharing
from mcp_matrix.simulate.caching import stale_window
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot
from mcp_matrix.wire.session import Timeouts

FRESH_REASON = (
    "a client's session of its own per call meets this bundled server empty (its store lives in "
    "its process), so each distinct call of the same identity is sent once"
)


class CallsConfig(Protocol):
    """What the profiles' calls read of the run's configuration (the matrix's)."""

    target: Target
    profiles: list[Profile]
    cases: list[Case]
    baseline: Snapshot | None
    allow_writes: bool
    auto_cases: bool
    jobs: int
    timeouts: Timeouts
    share: str


def plan_sessions(
    config: CallsConfig, eras: ServerEras, cases: list[Case], live_by_name: dict[str, Any]
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


def call_profiles(
    config: CallsConfig,
    snap: Snapshot,
    count: Callable[[DiscoveryCell | CallCell], None],
    emit: Emit,
    deadline: Deadline,
    breaker: CircuitBreaker,
    progress: ProgressCounter,
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

    sharing, fresh = plan_sessions(config, ServerEras.of(snap.eras), cases, live_by_name)
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
    runners: list[ProfileRunner] = []

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
        runner = ProfileRunner(config, profile, stop, breaker, sessions.connection(profile))
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


class ProfileRunner:
    """One profile's session: each case through ``mcp_matrix.run.deliver`` to the live server."""

    def __init__(
        self,
        config: CallsConfig,
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


__all__ = ["ProfileRunner", "call_profiles", "longest_first", "once_notes", "sessions_opened"]
