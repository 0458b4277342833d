"""The matrix: profiles x tools x cases against a live server, events out.

One session per profile, presenting that profile's identity, profiles in parallel
(``jobs``); a reference session makes each case's intact call once where calling twice is
safe, so a mutated call that got the same answer is ``tolerated`` rather than ``silent-*``.
Each session lists tools (first page) after initialize, as every client does before calling,
so a server that breaks the session on tools/list (an expired session id) is caught.
The runner prints nothing: it emits events (matrix.results) that writers consume.
A crash or Ctrl-C keeps every event emitted so far: on Ctrl-C the calls in flight are cut
short (their cells are not recorded, since the run, not the server, ended them) and the
run ends with ``run-finished`` and ``interrupted: true``.
"""

from __future__ import annotations

import datetime as _dt
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from matrix import __version__
from matrix.behaviours import registry
from matrix.cases import Case, plan_cases, repeat_safe, tools_by_name
from matrix.classify import Answer, Verdict, classify
from matrix.discovery import discover_all
from matrix.model import CallContext, ClientView
from matrix.profiles.model import Profile
from matrix.results import FORMAT, VERSION
from matrix.simulate.calls import evidence_for, held_view, plan_call
from matrix.snapshot import Snapshot, take_snapshot
from matrix.targets import Target
from matrix.verdicts import rank
from matrix.wire.errors import ServerExited, WireError
from matrix.wire.session import Session, Timeouts

Emit = Callable[[dict], None]


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
    on_progress: Callable[[str], None] | None = None


@dataclass
class RunOutcome:
    measured: bool
    interrupted: bool = False
    counts: dict[str, int] = field(default_factory=dict)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class Interrupted(Exception):
    """A call cut short because the user interrupted the run: its cell is not recorded."""


def run_matrix(config: RunConfig, emit: Emit) -> RunOutcome:
    """Run everything; returns whether the target could be measured and the verdict counts.

    Ctrl-C (KeyboardInterrupt in the calling thread) at any point after start still ends the
    stream with ``run-finished`` (``interrupted: true``) and returns; it is not re-raised.
    """
    registry.load_all()
    run_id = uuid.uuid4().hex[:12]
    try:
        doc = take_snapshot(config.target, timeouts=config.timeouts)
    except KeyboardInterrupt:  # take_snapshot closed the server on its way out
        doc = None
    snap = Snapshot(doc or {})
    emit({
        "event": "run-started", "format": FORMAT, "version": VERSION, "run_id": run_id, "started_at": now(),
        "mcp_matrix": __version__, "target": config.target.describe(), "server": snap.doc.get("serverInfo"),
        "protocolVersion": snap.doc.get("protocolVersion"), "cases": config.cases_source,
        "baseline": config.baseline.source if config.baseline else None,
        "profiles": [
            {"name": p.name, "client": p.client, "versions": p.versions, "models": p.models,
             "weakest_evidence": p.weakest_evidence} for p in config.profiles
        ],
    })
    counts: dict[str, int] = {}
    if doc is None:
        error = {"kind": "interrupted", "message": "interrupted while connecting to the server", "detail": "",
                 "stderr_tail": []}
        emit({"event": "run-finished", "finished_at": now(), "measured": False, "counts": counts,
              "error": error, "interrupted": True})
        return RunOutcome(False, True, counts)
    emit({"event": "snapshot", "snapshot": dict(snap.doc)})
    lock = threading.Lock()

    def count(event: dict) -> None:
        with lock:  # profiles count from several threads
            counts[event["verdict"]] = counts.get(event["verdict"], 0) + 1
        emit(event)

    error = snap.error or _list_failure(snap.doc)
    if error:
        emit({"event": "run-finished", "finished_at": now(), "measured": False, "counts": counts,
              "error": error, "interrupted": False})
        return RunOutcome(False, counts=counts)

    try:
        _run_cells(config, snap, count, emit)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    emit({"event": "run-finished", "finished_at": now(), "measured": True, "counts": counts, "interrupted": interrupted})
    return RunOutcome(True, interrupted, counts)


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


def _run_cells(config: RunConfig, snap: Snapshot, count: Emit, emit: Emit) -> None:
    """Discovery, then calls through every profile; KeyboardInterrupt stops the calls in flight and propagates."""
    live_views = discover_all(snap, config.profiles)
    base_views = discover_all(config.baseline, config.profiles, server=snap.server_name) if config.baseline else None
    for view in live_views:
        for t in view.tools:
            count({"event": "discovery", "profile": view.profile, **t.to_json()})

    live_tools = [tool for _, tool in snap.tools]
    cases, skips = plan_cases(live_tools, config.cases, config.allow_writes, config.auto_cases)
    for s in skips:
        emit({"event": "skipped", "tool": s.tool, "case": s.case, "reason": s.reason})
    # The first tool of a name stands for it (a server may list a name twice; plan_cases skips
    # such a name unless every one of them is safe to call).
    live_by_name = {name: same[0] for name, same in tools_by_name(live_tools).items()}
    base_tools = (
        {name: same[0] for name, same in tools_by_name(t for _, t in config.baseline.tools).items()}
        if config.baseline else {}
    )

    stop = threading.Event()
    reference = _reference_answers(config, cases, live_by_name, stop)
    runners: list[_ProfileRunner] = []

    def run_profile(i: int) -> None:
        profile = config.profiles[i]
        held, cache_note = held_view(profile, live_views[i], base_views[i] if base_views else None)
        held_raw = base_tools if held is not live_views[i] else live_by_name
        runner = _ProfileRunner(config, profile, stop)
        runners.append(runner)  # before the first stop check: an interrupt sees every runner in flight
        try:
            for case in cases:
                if stop.is_set():
                    return
                try:
                    event = runner.run_case(case, held, held_raw, live_by_name, reference.get(case.id), cache_note)
                except Interrupted:
                    return
                count(event)
                if config.on_progress:
                    config.on_progress(f"{profile.name} {case.id}")
        finally:
            runner.close()

    pool = ThreadPoolExecutor(max_workers=max(1, config.jobs), thread_name_prefix="profile")
    futures = {pool.submit(run_profile, i): i for i in range(len(config.profiles))}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                if f.exception() is not None:
                    emit({"event": "profile-error", "profile": config.profiles[futures[f]].name,
                          "error": f"{type(f.exception()).__name__}: {f.exception()}"})
    except KeyboardInterrupt:
        stop.set()
        for runner in runners:
            runner.conn.abort()  # a call waiting on a hung server ends now, not at its timeout
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


def _reference_answers(config: RunConfig, cases: list[Case], tools: dict, stop: threading.Event) -> dict[str, Answer]:
    """The intact call's answer for each case where calling twice is safe."""
    wanted = [c for c in cases if c.expect.outcome != "error" and repeat_safe(tools.get(c.tool), c)]
    out: dict[str, Answer] = {}
    if not wanted:
        return out
    runner = Connection(config.target, config.timeouts, None)
    try:
        for case in wanted:
            if stop.is_set():
                break
            out[case.id] = runner.call(case.tool, case.arguments, None, case.omit_arguments, new_session=False)
    finally:
        runner.close()
    return out


class Connection:
    """A session to the target that reopens after a failure (a crashed server is restarted)."""

    def __init__(self, target: Target, timeouts: Timeouts, profile: Profile | None) -> None:
        self.target = target
        self.timeouts = timeouts
        self.profile = profile
        self.session: Session | None = None
        self._transport: Any = None  # the one in use, so abort() can reach it from another thread
        self._aborted = False

    def _open(self, list_first: bool = True) -> Session:
        """Connect as a client does: initialize, then list tools (the first page) before any call.

        ``list_first=False`` for a session opened per call: such clients (langchain-mcp-adapters)
        list tools once, elsewhere, and go straight to the call."""
        identity = self.profile.identity if self.profile else None
        transport = self.target.transport(connect_timeout=self.timeouts.initialize)
        self._transport = transport  # held before its server starts: close() ends it whatever happens
        kwargs: dict[str, Any] = {"timeouts": self.timeouts}
        if identity is not None:
            kwargs.update(client_info=dict(identity.client_info), protocol_version=identity.protocol_version,
                          capabilities=dict(identity.capabilities))
        session = Session(transport, **kwargs)
        try:
            if self._aborted:
                raise ServerExited("the run was interrupted")
            transport.start()
            session.initialize()
            if list_first:
                session.list_tools(first_page_only=True)  # an error answer is the server's; the call decides
        except BaseException:  # a failure or Ctrl-C: never leave a server running
            session.close()
            raise
        return session

    def abort(self) -> None:
        """From another thread: end the call in flight now and make no more (the user interrupted)."""
        self._aborted = True
        transport = self._transport
        if transport is not None:
            transport.interrupt("the run was interrupted")

    def call(self, tool: str, arguments: Any, meta: Any, omit: bool, new_session: bool) -> Answer:
        """One tools/call; a failure of the wire is the answer (``broken``), an abort raises ``Interrupted``."""
        if self._aborted:
            raise Interrupted()
        started = time.monotonic()
        try:
            if new_session:
                session = self._open(list_first=False)
                try:
                    r = session.call_tool(tool, arguments, meta=meta, omit_arguments=omit)
                finally:
                    session.close()
            else:
                if self.session is None:
                    self.session = self._open()
                r = self.session.call_tool(tool, arguments, meta=meta, omit_arguments=omit)
        except WireError as exc:
            self.close()  # the next call starts afresh
            if self._aborted:
                raise Interrupted() from None
            return Answer(wire_error=exc.to_json(), elapsed=time.monotonic() - started)
        return Answer(result=r.result, error=r.error.to_json() if r.error else None, elapsed=r.elapsed)

    def close(self) -> None:
        """End the session and the server last started (closing twice is harmless)."""
        session, transport = self.session, self._transport
        self.session = self._transport = None
        try:
            if session is not None:
                session.close()
        finally:
            if transport is not None:
                transport.close()


class _ProfileRunner:
    def __init__(self, config: RunConfig, profile: Profile, stop: threading.Event) -> None:
        self.config = config
        self.profile = profile
        self.stop = stop
        self.conn = Connection(config.target, config.timeouts, profile)

    def close(self) -> None:
        self.conn.close()

    def run_case(self, case: Case, held: ClientView, held_raw: dict, live_raw: dict, reference: Answer | None,
                 cache_note) -> dict:
        base = {"event": "call", "profile": self.profile.name, "tool": case.tool, "case": case.name,
                "origin": case.origin, "expect": case.expect.outcome}
        view = held.by_tool().get(case.tool)
        stale = held_raw is not live_raw
        if view is None or view.verdict not in ("visible", "degraded"):
            why = f"not visible in this client ({view.verdict})" if view else "the client never saw this tool (not in its cached list)"
            if view and view.findings:
                why += f": {view.findings[-1].message}"
            names = tuple(f.behaviour for f in (view.findings if view else ()) if f.behaviour)
            verdict = classify(expect=case.expect, mutations=(), answer=None, hidden_reason=why, behaviours=names,
                               evidence=evidence_for(self.profile, names))
            return {**base, **_verdict_json(verdict), "stale": stale}
        ctx = CallContext(tool=case.tool, held_schema=view.model_schema, held_tool=held_raw.get(case.tool), stale=stale)
        verdicts: list[Verdict] = []
        notes: list = []
        for variant in plan_call(self.profile, ctx, case.arguments, case.omit_arguments):
            plan = variant.plan
            notes += plan.notes
            answer = None
            failure = None
            if plan.refused is None:
                answer = self.conn.call(plan.tool, plan.arguments, plan.meta, plan.omit_arguments, plan.new_session)
                if answer.wire_error is None and answer.error is None:
                    failure = self._result_failure(answer.result, ctx)
            names = tuple(dict.fromkeys(plan.applied + ((failure.behaviour,) if failure else ())
                                        + (("cache-tools",) if stale and cache_note else ())))
            verdicts.append(classify(
                expect=case.expect, mutations=variant.mutations, answer=answer, refused=plan.refused,
                client_failure=failure, reference=reference if repeat_safe(live_raw.get(case.tool), case) else None,
                behaviours=names, evidence=evidence_for(self.profile, names), sometimes=variant.sometimes,
            ))
        chosen = min(verdicts, key=lambda v: rank(v.verdict))
        event = {**base, **_verdict_json(chosen), "stale": stale}
        if notes:
            event["notes"] = [n.message for n in dict.fromkeys(notes)]
        if len(verdicts) > 1:
            event["variants"] = [{"verdict": v.verdict, "sometimes": list(v.sometimes)} for v in verdicts]
            if chosen.sometimes:
                event["frequency"] = "sometimes"
        return event

    def _result_failure(self, result: Any, ctx: CallContext):
        for use in self.profile.result:
            finding = registry.get(use.name).fn(result, ctx, **dict(use.params))
            if finding is not None:
                return replace(finding, behaviour=use.name, evidence=use.evidence)
        return None


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
    }
