"""The matrix: profiles x tools x cases against a live server, events out.

One session per profile, presenting that profile's identity, profiles in parallel
(``jobs``). Where calling twice is safe, a mutated call's intact twin is made on the same
session right after it (``mcp_matrix.run.deliver.compare``: the same server state), so a mutated call
that got the same answer is ``tolerated`` rather than ``silent-*``; a call that may not be
repeated (a write the cases file lists) reaches the server exactly once per profile.
Each session lists tools (first page) after initialize, as every client does before calling,
so a server that breaks the session on tools/list (an expired session id) is caught.
The runner prints nothing: it emits events (mcp_matrix.run.results) that writers consume.
Every profile's calls are ``mcp_matrix.run.profile_calls``'s; this module snapshots the server,
then runs them and ends the run.
A crash or Ctrl-C keeps every event emitted so far: on Ctrl-C the calls in flight are cut
short (their cells are not recorded, since the run, not the server, ended them) and the
run ends with ``run-finished`` and ``interrupted: true``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_matrix import __version__
from mcp_matrix.behaviours import registry
from mcp_matrix.core.errors import InputErrors
from mcp_matrix.core.events import (
    CallCell,
    DiscoveryCell,
    RunFinished,
    RunStarted,
    SnapshotTaken,
)
from mcp_matrix.core.text import redact
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.bounds import CircuitBreaker, Deadline, timeout_note
from mcp_matrix.run.cases import Case, unknown_tools
from mcp_matrix.run.discovery import listed_profile
from mcp_matrix.run.profile_calls import call_profiles
from mcp_matrix.run.progress import Emit, Progress, ProgressCounter
from mcp_matrix.run.session_pool import (
    Work,
)
from mcp_matrix.targets.kinds import Target, run_servers, server_starts
from mcp_matrix.targets.snapshot import OpenSnapshot, Snapshot, open_snapshot
from mcp_matrix.wire.session import Timeouts


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
        None  # what the calls cost the server against the least (mcp_matrix.run.session_pool)
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
    with run_servers():  # the user's warm templates and launcher resolutions end with the run
        return _run(config, emit)


def _run(config: RunConfig, emit: Emit) -> MatrixOutcome:
    deadline = Deadline(config.timeout_run, reserve=config.timeouts.shutdown)
    progress = ProgressCounter(config.on_progress)
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
    progress: ProgressCounter,
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
            server=snap.server_info,
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
        work = call_profiles(config, snap, count, emit, deadline, breaker, progress)
        if config.target.kind == "stdio":  # how its servers were started (--verbose)
            # the whole line masked: a reason may name a folder or module from the command
            starts = redact(server_starts(config.target), config.target.secrets())
            work = replace(work, starts=starts)
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
    if error.get("kind") != "timeout" or deadline.passed():
        return held
    if held.doc.get("serverInfo") is not None:  # the handshake went; the tool list timed out
        error["message"] = f"{error.get('message', '')} ({timeout_note()})"
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
