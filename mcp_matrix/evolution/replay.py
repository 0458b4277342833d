"""Replay: recorded calls through each client profile against the live server, counted per population.

Each frozen call (mcp_matrix.evolution.calls_file) goes through the same steps as a case of the
matrix: discovery of the live snapshot, the tool list the client holds (the baseline's for a
caching profile, when a baseline is given), ``plan_call``, the live server through one session
per profile presenting that profile's identity, and ``classify`` with an expected success.
Then, by population of frozen callers (docs/design.md#rename-additively):

- every population: the outcome of each call, as counts of ``delivered`` (intact or tolerated),
  ``loud`` (refused with an error a model can read), ``silent`` (success reported for a mutated
  call), ``unreachable`` (the client does not show the tool) and ``broken`` (no usable answer);
- ``retry``: a call that fails is sent again ``retries`` times when repeating it is safe
  (read-only or ``idempotentHint``, ``mcp_matrix.core.tools.retry_safe``: the same arguments again change nothing more);
  otherwise "fails on every attempt" is decided from the first failure when that failure is
  deterministic (the client's own validation, an unreachable tool, a JSON-RPC invalid-params or
  unknown-method error, or wire arguments the server's own ``inputSchema`` rejects). A call that
  fails on every attempt is a permanent loss;
- every call with a recorded ``result`` (live and transcript files): does the replayed result
  differ from the recorded one (``diverges``); for transcripts, the first diverging call of each.

Rates are always a percentage with its count and denominator, ``2.5% (1 of 40)``.

Memory is bounded: files are read a line at a time and each (profile, file) keeps counters,
the first ``examples`` calls of each outcome, and one small record per transcript; never the
calls or results themselves (the counts and the report: mcp_matrix.evolution.replay_report). ``prepare_and_classify`` is the offline part of one call
(prepare, client-side validation, mutations) with no server, for throughput measurements.

The engine prints nothing; ``emit`` receives one typed event per call (``ReplayCall``, ``--results``).
"""

from __future__ import annotations

import gc
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.registry import freeze
from mcp_matrix.behaviours.rewrite import fingerprint
from mcp_matrix.core.events import CellMutation, CellViolation, ReplayCall
from mcp_matrix.core.model import CallContext, ClientView
from mcp_matrix.core.tools import read_only, retry_safe, tools_by_name
from mcp_matrix.core.verdicts import SHOWN
from mcp_matrix.evolution.calls_file import CallsFile, RecordedCall, iter_calls
from mcp_matrix.evolution.effects import schema_server
from mcp_matrix.evolution.replay_report import (
    CATEGORIES,
    CATEGORY_OF,
    FORMAT,
    MEASURES,
    VERSION,
    VOLATILE_KEYS,
    ReplayReport,
    Tally,
    TranscriptTally,
    add_numbers,
    divergence,
    measure_of,
    rate,
    rate_text,
)
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.classify import Answer, Verdict
from mcp_matrix.run.connection import Connection  # a session that reopens after a failure
from mcp_matrix.run.deliver import (
    Held,
    Intended,
    LiveServer,
    SchemaServer,
    decide,
    hold,
    listed_violations,
    prepare,
)
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.simulate.calls import ReadsContext, Variant
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot, take_snapshot
from mcp_matrix.wire.session import Timeouts

DETERMINISTIC_RPC_CODES = (
    -32601,
    -32602,
)  # unknown method, invalid params: the same call fails the same way


# -- what a client holds, and one call without the server -------------------------------------


class Prepared(NamedTuple):
    """One call made ready to send, and what can be decided without the server.

    ``verdict`` is set when no server is needed: ``unreachable`` (the client does not show the
    tool) or ``loud`` (the client's own validation refuses to send). ``primary`` is the variant
    replay sends: the client's usual behaviour, without its intermittent (``sometimes``) ones.
    ``risk`` is what the mutations would mean if the server accepted the call: ``silent-loss``
    (data removed or nulled), ``silent-corruption`` (values changed), or None (sent intact).
    """

    variants: list[Variant]
    verdict: Verdict | None
    primary: Variant | None
    context: CallContext | None
    risk: str | None


def _to_send(prepared: Prepared) -> tuple[CallContext, Variant]:
    """The context and variant of a call not decided before the server (``verdict`` None)."""
    assert prepared.context is not None and prepared.primary is not None
    return prepared.context, prepared.primary


_WRAPPED: dict[int, tuple[ClientView, Held]] = {}


def _as_held(profile: Profile, held: Held | ClientView) -> Held:
    if isinstance(held, Held):
        return held
    hit = _WRAPPED.get(id(held))
    if hit is None or hit[0] is not held or hit[1].profile is not profile:
        hit = (held, hold(profile, held, None, {}))  # no baseline: not a stale cache
        if len(_WRAPPED) > 64:
            _WRAPPED.clear()
        _WRAPPED[id(held)] = hit
    return hit[1]


def prepare_and_classify(
    profile: Profile, held: Held | ClientView, call: RecordedCall | Mapping[str, Any]
) -> Prepared:
    """Prepare, client-side validation and mutation classification of one call, without a server.

    ``held`` is a ``Held`` (``hold``) or a plain ``ClientView`` (wrapped once and memoised);
    ``call`` a ``RecordedCall`` or a mapping with ``tool`` and ``arguments``. Pure apart from
    the validators' compile cache: safe to call in a loop to measure throughput.
    """
    h = _as_held(profile, held)
    tool, arguments = (
        (call.tool, call.arguments)
        if isinstance(call, RecordedCall)
        else (call["tool"], call.get("arguments", {}))
    )
    intended = Intended(tool, arguments)
    ready = prepare(profile, h, intended)
    if ready.verdict is not None:
        return Prepared([], ready.verdict, None, None, None)
    context = ready.context
    assert context is not None  # prepare gives a context whenever it gives no verdict
    variants = list(ready.variants)
    primary = variants[-1]  # plan_call lists the all-intermittent variant first, the usual one last
    risk = None
    if primary.mutations:
        risk = (
            "silent-loss"
            if any(m.kind in ("removed", "nulled") for m in primary.mutations)
            else "silent-corruption"
        )
    verdict = None
    if primary.plan.refused is not None:  # the client's own validation: decided without a server
        verdict, _ = decide(profile, h, context, intended, primary, None)
    return Prepared(variants, verdict, primary, context, risk)


# -- frozen-call aliases --------------------------------------------------------------------


@dataclass(frozen=True)
class Alias:
    """A deprecated parameter name: calls using ``old`` on ``tool`` are probed with ``new`` on failure."""

    tool: str
    old: str
    new: str

    def used_by(self, call: RecordedCall) -> bool:
        return (
            call.tool == self.tool
            and isinstance(call.arguments, dict)
            and self.old in call.arguments
        )

    def renamed(self, arguments: dict) -> dict:
        out = {k: v for k, v in arguments.items() if k != self.old}
        out.setdefault(self.new, arguments[self.old])
        return out


# -- the run ----------------------------------------------------------------------------------


@dataclass
class ReplayConfig:
    """What to replay, through which profiles, against what.

    ``target`` None means offline against ``snapshot`` (the new version): only what the clients
    do before the server sees a call is measured. Live, the snapshot is taken from the target.
    ``baseline`` is what caching profiles hold (the list from before the deploy).
    ``read_after`` names read-only tools called with no arguments at the end of each session.
    ``only`` keeps some calls (the checklist's old-name calls); ``alias`` probes their failures.
    ``on_progress`` receives the bytes read; ``emit`` one typed event per replayed call.
    """

    files: list[CallsFile]
    profiles: list[Profile]
    target: Target | None = None
    snapshot: Snapshot | None = None
    baseline: Snapshot | None = None
    retries: int = 3
    jobs: int = 4
    timeouts: Timeouts = field(default_factory=Timeouts)
    examples: int = 3
    ignore_keys: frozenset[str] = VOLATILE_KEYS
    read_after: tuple[str, ...] = ()
    only: Callable[[RecordedCall], bool] | None = None
    alias: Alias | None = None
    on_progress: Callable[[int], None] | None = None
    emit: Callable[[ReplayCall], None] | None = None


def replay(config: ReplayConfig) -> ReplayReport:
    """Replay every file through every profile; live when ``config.target`` is set, else offline."""
    registry.load_all()
    offline = config.target is None
    snap = config.snapshot
    if snap is None:
        if config.target is None:
            raise ValueError("replay needs a target or a snapshot")
        snap = Snapshot(take_snapshot(config.target, timeouts=config.timeouts), source="live")
    files = [
        {"file": f.name, "population": f.population, "population_from": f.population_from}
        for f in config.files
    ]
    report = ReplayReport(
        measured=not snap.error,
        offline=offline,
        target=config.target.describe() if config.target else snap.doc.get("target"),
        server=snap.doc.get("serverInfo"),
        baseline=config.baseline.source if config.baseline else None,
        files=files,
        profiles=[p.name for p in config.profiles],
        retries=config.retries,
        tallies=[],
        ignore_keys=sorted(config.ignore_keys),
        error=snap.error,
    )
    if snap.error:
        return report
    live_tools = tools_by_name(t for _, t in snap.tools)
    base_tools = tools_by_name(t for _, t in config.baseline.tools) if config.baseline else None
    live_views = discover_all(snap, config.profiles)
    base_views = (
        discover_all(config.baseline, config.profiles, server=snap.server_name)
        if config.baseline
        else None
    )
    helds = [
        hold(
            p,
            live_views[i],
            base_views[i] if base_views else None,
            live_tools,
            base_tools,
            config.baseline,
            snap,
        )
        for i, p in enumerate(config.profiles)
    ]
    for tool in config.read_after:
        if not read_only(live_tools.get(tool)):
            from mcp_matrix.core.errors import InputError

            raise InputError(
                f"{tool!r} is not a read-only tool of this server (readOnlyHint: true and not "
                "destructiveHint: true); "
                "only a read may be called after a replay",
                where="--read-after",
            )
    stop = threading.Event()
    if offline:
        done: list[Tally] = []
        try:
            with _young_collections_only():
                _play_offline(config, helds, stop, done)
        except KeyboardInterrupt:
            stop.set()
            report.interrupted = True
        report.tallies = done
        return report
    # file order, then profile order
    units = [(f, i) for f in config.files for i in range(len(config.profiles))]
    jobs = max(1, config.jobs)
    unit_pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="replay")
    segment_pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="transcript")
    futures = [
        unit_pool.submit(_replay_file, config, helds[i], f, segment_pool, stop) for f, i in units
    ]
    try:
        report.tallies = [f.result() for f in futures]
    except KeyboardInterrupt:
        stop.set()
        report.interrupted = True
        unit_pool.shutdown(wait=True, cancel_futures=True)
        report.tallies = [
            f.result() for f in futures if f.done() and not f.cancelled() and f.exception() is None
        ]
    finally:
        unit_pool.shutdown(wait=True)
        segment_pool.shutdown(wait=True)
    return report


def _replay_file(
    config: ReplayConfig,
    held: Held,
    source: CallsFile,
    segments: ThreadPoolExecutor,
    stop: threading.Event,
) -> Tally:
    """One profile over one file: one session for a live or retry file; one per transcript, in parallel."""
    tally = Tally(held.profile.name, source.name, source.population, config.examples)
    calls = _reading(config, source, stop)
    if source.population != "transcript":
        _Segment(config, held, tally).play(calls)
        return tally
    bound = threading.Semaphore(2 * max(1, config.jobs))  # transcripts read ahead: bounded
    pending: deque[Future] = deque()
    for group in _transcripts(calls, tally):
        bound.acquire()
        future = segments.submit(_play_group, config, held, source, group)
        future.add_done_callback(lambda _: bound.release())
        pending.append(future)
        while pending and pending[0].done():
            tally.merge(pending.popleft().result())
    while pending:
        tally.merge(pending.popleft().result())
    return tally


FULL_COLLECTIONS_HELD = 1_000_000  # the collector's third threshold while replaying offline


@contextmanager
def _young_collections_only() -> Iterator[None]:
    """Hold off the cyclic collector's full collections while an offline replay runs.

    The replay builds a large long-lived heap as it goes (compiled validators, the shared
    outcomes), and every full collection walked all of it: 11 of them were 4.3 of 16 s of CPU
    at 10,000 calls x 52 profiles. The young collections still run and free the short-lived
    cycles (a validation error and its context); nothing cyclic was left at the end of that
    replay. The thresholds are set back after."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTIONS_HELD)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)


def _play_offline(
    config: ReplayConfig, helds: list[Held], stop: threading.Event, done: list[Tally]
) -> None:
    """Offline, every file is read once and each call goes through every profile in turn.

    The work is CPU alone (no server to wait for), so there is nothing for threads to overlap;
    profiles that cannot tell a call apart share its outcome (``_Outcomes``). Tallies go to
    ``done`` file by file, in file order then profile order (an interrupted replay keeps the
    files it finished)."""
    outcomes = _Outcomes()
    server = schema_server(helds[0].live_raw) if helds else None
    for source in config.files:
        tallies = [
            Tally(h.profile.name, source.name, source.population, config.examples) for h in helds
        ]
        calls = _reading(config, source, stop, weight=len(helds))
        if source.population != "transcript":
            together = _Together(
                [_Segment(config, h, t, outcomes, server) for h, t in zip(helds, tallies)]
            )
            for call in calls:
                together.play(call)
            together.flush()
        else:
            for group in _transcripts(calls, _Notes(tallies)):
                for held, tally in zip(helds, tallies):
                    part = Tally(held.profile.name, source.name, source.population, config.examples)
                    _Segment(config, held, part, outcomes, server).play(group)
                    tally.merge(part)
        if stop.is_set():
            return
        done.extend(tallies)


class _Together:
    """Offline, one file's segments (one a profile) fed each call in turn: judged once for each
    group of profiles of one kind for the call's tool (``_Segment._kind``: they look the
    outcome up under the same key, so they get the same one), and counted in every profile's
    tally, in profile order (the events of a call come out in profile order, as they did).
    A group that does not show the tool gets one outcome for every call of it, kept (unless
    an alias is probed: whether a call uses it depends on its arguments)."""

    def __init__(self, segments: list[_Segment]) -> None:
        self.segments = segments
        self._groups: dict[str, tuple[list[_Segment], list[int], list[bool]]] = {}
        self._kept: dict[tuple[str, int], _Effect] = {}  # (tool, group) -> its one outcome
        self._keeps = bool(segments) and segments[0].config.alias is None
        # counted in bulk: nothing of a call but its example differs between two tallies
        # (no event, no alias, no recorded result compared, no transcript, no live retry)
        self._bulk = (
            bool(segments)
            and self._keeps
            and segments[0].config.emit is None
            and segments[0].tally.population in ("retry", "live")
        )
        self._pending: list[dict[tuple, int]] = [{} for _ in segments]

    def groups(self, tool: str) -> tuple[list[_Segment], list[int], list[bool]]:
        """One segment judging for each group of ``tool``, each segment's group, and whether
        a group's outcome is the same for every call (kept once judged)."""
        known = self._groups.get(tool)
        if known is None:
            first: dict[tuple, int] = {}
            judges: list[_Segment] = []
            of = []
            for segment in self.segments:
                kind = segment._kind(tool)
                group = first.setdefault(kind, len(judges))
                if group == len(judges):
                    judges.append(segment)
                of.append(group)
            # a group that does not show the tool: the same outcome whatever the arguments
            keeps = [self._keeps and judge._kind(tool)[2] for judge in judges]
            known = self._groups[tool] = (judges, of, keeps)
        return known

    def play(self, call: RecordedCall) -> None:
        tool = call.tool
        judges, of, keeps = self.groups(tool)
        effects = []
        for group, segment in enumerate(judges):
            if keeps[group]:
                effect = self._kept.get((tool, group))
                if effect is None:
                    effect = self._kept[tool, group] = segment._judge(call)
            else:
                effect = segment._judge(call)
            effects.append(effect)
        if not self._bulk:
            for segment, group in zip(self.segments, of):
                segment._count(call, effects[group], segment.tally)
            return
        keys = [e.counted() for e in effects]
        for segment, group, pending in zip(self.segments, of, self._pending):
            key = keys[group]
            pending[key] = pending.get(key, 0) + 1
            tally = segment.tally
            if key[0] != "delivered" and tally.wants_example(key[0]):
                tally.example(key[0], effects[group].example(call))

    def flush(self) -> None:
        """The calls counted in bulk added to each tally (``_Segment._count``'s counters)."""
        for segment, pending in zip(self.segments, self._pending):
            tally = segment.tally
            for (category, verdict, sometimes, retry), n in pending.items():
                tally.calls += n
                for behaviours in sometimes:
                    tally.sometimes[behaviours] += n
                tally.categories[category] += n
                tally.verdicts[verdict] += n
                if retry is not None:
                    tally.retry[retry] += n
            pending.clear()


class _Notes:
    """One note to every profile's tally of a file (a file read once for all of them)."""

    def __init__(self, tallies: list[Tally]) -> None:
        self.tallies = tallies

    def note(self, text: str) -> None:
        for tally in self.tallies:
            tally.note(text)


def _reading(
    config: ReplayConfig, source: CallsFile, stop: threading.Event, weight: int = 1
) -> Iterator[RecordedCall]:
    last = 0
    for call, done in iter_calls(source):
        if config.on_progress:
            config.on_progress((done - last) * weight)
        last = done
        if stop.is_set():
            return
        if config.only is None or config.only(call):
            yield call


def _transcripts(
    calls: Iterable[RecordedCall], tally: Tally | _Notes
) -> Iterator[list[RecordedCall]]:
    """Contiguous runs of one transcript's calls (each replayed against a fresh session)."""
    group: list[RecordedCall] = []
    seen: set[str | None] = set()
    for call in calls:
        if group and call.transcript != group[0].transcript:
            seen.add(group[0].transcript)
            yield group
            group = []
            if call.transcript in seen:
                tally.note(
                    f"transcript {call.transcript} is not contiguous in the file: "
                    "its parts were replayed in separate sessions"
                )
        group.append(call)
    if group:
        yield group


def _play_group(
    config: ReplayConfig, held: Held, source: CallsFile, group: list[RecordedCall]
) -> Tally:
    tally = Tally(held.profile.name, source.name, source.population, config.examples)
    _Segment(config, held, tally).play(group)
    return tally


class _Segment:
    """Calls replayed in one session (a fresh process for a stdio server): a live or retry file, or one transcript."""

    def __init__(
        self,
        config: ReplayConfig,
        held: Held,
        tally: Tally,
        shared: _Outcomes | None = None,
        server: SchemaServer | None = None,
    ) -> None:
        self.config = config
        self.held = held
        self.profile = held.profile
        self.tally = tally
        self.conn = (
            Connection(config.target, config.timeouts, held.profile) if config.target else None
        )
        # offline, the server is modelled: it validates against the inputSchema it lists (as diff's)
        self.server: LiveServer | SchemaServer = (
            LiveServer(
                self.conn,
                held.live_raw,
                reference=self._reference,
                repeat_safe=lambda call: read_only(held.live_raw.get(call.tool)),
            )
            if self.conn is not None
            else server
            if server is not None and server.tools is held.live_raw
            else schema_server(held.live_raw)
        )
        self._offline: dict[tuple[str, str], tuple[Verdict, Answer | None, Prepared]] = {}
        self.shared = shared if self.conn is None else None
        # tool -> what this profile's outcome of a call depends on (``_kind``)
        self._kinds: dict[str, tuple[int, tuple | None, bool]] = {}
        self._base: int | None = None  # the kind's number of a tool this profile shows

    def _reference(self, call: Intended) -> Answer | None:
        """The intact call, on the same session, for a read-only tool (calling it twice changes nothing)."""
        if self.conn is None or not read_only(self.held.live_raw.get(call.tool)):
            return None
        if isinstance(self.server, LiveServer):  # always, with a connection
            self.server.used = True
        return self.conn.call(
            call.tool, call.arguments, None, call.omit_arguments, new_session=False
        )

    def play(self, calls: Iterable[RecordedCall]) -> None:
        try:
            for call in calls:
                self._call(call, self.tally)
            self._reads(self.tally)
        finally:
            if self.conn is not None:
                self.conn.close()

    # -- sessions -------------------------------------------------------------------------

    def _reads(self, tally: Tally) -> None:
        """The ``read_after`` tools, called once the segment's calls are done (counters summed over sessions)."""
        if self.conn is None or not (isinstance(self.server, LiveServer) and self.server.used):
            return
        for tool in self.config.read_after:
            answer = self.conn.call(tool, {}, None, False, new_session=False)
            sc = answer.result.get("structuredContent") if answer.ok else None
            if isinstance(sc, dict):
                tally.reads[tool] = add_numbers(tally.reads.get(tool), sc)
            else:
                tally.note(f"the read {tool} after the replay gave no structuredContent")

    # -- one call -------------------------------------------------------------------------

    def _attempt(
        self, call: RecordedCall, arguments: dict | None = None
    ) -> tuple[Verdict, Answer | None, Prepared]:
        """Prepare, send (to the live server, or offline to the modelled one) and classify one call."""
        target = call if arguments is None else replace(call, arguments=arguments)
        if self.shared is not None:
            return self._shared(target, self.shared)
        key = _memo_key(target) if self.conn is None else None
        if key is not None and key in self._offline:
            return self._offline[key]
        prepared = prepare_and_classify(self.profile, self.held, target)
        if prepared.verdict is not None:
            done: tuple[Verdict, Answer | None, Prepared] = (prepared.verdict, None, prepared)
        else:
            intended = Intended(call.tool, target.arguments, id=call.id)
            ctx, primary = _to_send(prepared)
            verdict, answer = decide(self.profile, self.held, ctx, intended, primary, self.server)
            done = (verdict, answer, prepared)
        if (
            key is not None
        ):  # offline the outcome is a pure function of the call: remember the last few
            if len(self._offline) >= OFFLINE_MEMO:
                self._offline.clear()
            self._offline[key] = done
        return done

    def _compute(self, call: RecordedCall) -> tuple[Verdict, Answer | None, Prepared]:
        """One call through this profile and the modelled server (offline), not remembered."""
        prepared = prepare_and_classify(self.profile, self.held, call)
        if prepared.verdict is not None:
            return prepared.verdict, None, prepared
        sent = self._sent(call, prepared)
        hit = self.shared.decided.get(sent) if sent is not None and self.shared else None
        if hit is not None:
            return hit[0], hit[1], prepared
        intended = Intended(call.tool, call.arguments, id=call.id)
        ctx, primary = _to_send(prepared)
        verdict, answer = decide(self.profile, self.held, ctx, intended, primary, self.server)
        if sent is not None and self.shared is not None:
            self.shared.decide(sent, (verdict, answer))
        return verdict, answer, prepared

    def _sent(self, call: RecordedCall, prepared: Prepared) -> tuple | None:
        """What replay reports of ``decide``'s verdict on a call the client sends, offline (its
        name, words, answer and violations), depends on: the intended and the wire arguments
        (the mutations follow from the two) and the cache state. The modelled server reads
        neither ``_meta`` nor the session, and the behaviours that made the call and the
        intermittent ones only name the verdict's evidence, which replay does not report.
        Profiles of other kinds often send a call alike (a behaviour that changes nothing here,
        or only ``_meta``): they share the modelled server's verdict."""
        if self.shared is None or prepared.primary is None:
            return None
        words = self.shared.key(-1, call)
        plan = prepared.primary.plan
        if words is None or plan.omit_arguments:
            return None
        if plan.arguments is call.arguments:
            wire = ""
        else:
            try:
                wire = json.dumps(plan.arguments, sort_keys=True)
            except (TypeError, ValueError):
                return None
        held = self.held
        return (
            words,
            wire,
            held.stale,
            held.note is not None,
            id(held.live_raw),
        )

    def _kind(self, tool: str) -> tuple[int, tuple | None, bool]:
        """What this profile's offline outcome of a call of ``tool`` depends on besides the arguments.

        A tool the client does not show: why it does not (the arguments do not matter; the
        outcome is kept for good, one per tool and reason: ``_Outcomes.unseen``). Otherwise the call behaviours with their parameters and the cache state (as a
        number: kinds are compared for every call and profile), and, apart, what the behaviours
        may read (``CallContext``: the held schema and tool) when there are any. ``decide``
        reads the modelled server's tools and the cache note. Two profiles of one kind plan and
        send the call alike when the behaviours read nothing held or the same held schema and
        tool, so its outcome differs only in the evidence behind its verdict, which replay
        does not report: the outcome is shared as it is."""
        kind = self._kinds.get(tool)
        if kind is None:
            held = self.held
            view = held.tools.get(tool)
            assert self.shared is not None
            if view is None or view.verdict not in SHOWN:
                unseen = prepare_and_classify(self.profile, held, {"tool": tool})
                assert unseen.verdict is not None  # a tool not shown is unreachable
                why = (unseen.verdict.reason, unseen.verdict.behaviours)
                kind = (self.shared.number(("hidden", why)), None, True)
                self.shared.unseen.setdefault((kind[0], tool), (unseen.verdict, None, unseen))
            else:
                if self._base is None:  # the same for every tool this profile shows
                    uses = tuple(
                        (u.name, u.id, u.frequency, freeze(u.params)) for u in self.profile.call
                    )
                    base = (uses, held.stale, held.note is not None, id(held.live_raw))
                    self._base = self.shared.number(base)
                reads = None
                if (
                    self.profile.call
                ):  # planned with a context that says whether it read what is held
                    reads = (fingerprint(view.model_schema), id(held.raw.get(tool)))
                    held.contexts.setdefault(
                        tool, ReadsContext(tool, view.model_schema, held.raw.get(tool), held.stale)
                    )
                kind = (self._base, reads, False)
            self._kinds[tool] = kind
        return kind

    def _shared(
        self, call: RecordedCall, shared: _Outcomes
    ) -> tuple[Verdict, Answer | None, Prepared]:
        """The offline outcome of ``call``, computed once for the profiles of one kind (``_kind``):
        once for all of them when their behaviours read nothing held, else once per held copy."""
        base, reads, hidden = self._kind(call.tool)
        if hidden:
            return shared.unseen[base, call.tool]
        key = shared.key(base, call)
        if key is None:
            return self._compute(call)
        for needs, done in shared.memo.get(key, ()):
            if needs is None or needs == reads:
                return done
        ctx = self.held.contexts.get(call.tool)
        if isinstance(ctx, ReadsContext):
            ctx.fresh()
        done = self._compute(call)
        read = reads is not None and (not isinstance(ctx, ReadsContext) or ctx.read_held)
        shared.remember(key, (reads if read else None, done))
        return done

    def _call(self, call: RecordedCall, tally: Tally) -> None:
        self._count(call, self._judge(call), tally)

    def _judge(self, call: RecordedCall) -> _Effect:
        """The outcome of ``call`` through this profile, and what it adds to a tally that does
        not depend on which profile's tally it is (offline, every part: ``_Together``)."""
        verdict, answer, prepared = self._attempt(call)
        category = CATEGORY_OF[verdict.verdict]
        retry = (
            _retry_decided(category, prepared, self.conn is None)
            if self.tally.population == "retry"
            else None
        )
        alias = self.config.alias
        aliased = None
        if alias is not None and alias.used_by(call):
            unprobed = self.conn is None or not retry_safe(self.held.live_raw.get(call.tool))
            aliased = _alias_decided(category, unprobed) or ("", "")
        return _Effect(verdict, answer, prepared, category, _changed_by(prepared), retry, aliased)

    def _count(self, call: RecordedCall, e: _Effect, tally: Tally) -> None:
        """``e`` counted in ``tally`` (this profile's), its example kept, its event emitted."""
        tally.calls += 1
        for behaviours in e.sometimes:
            tally.sometimes[behaviours] += 1
        category = e.category
        tally.categories[category] += 1
        tally.verdicts[e.verdict.verdict] += 1
        if category != "delivered" and tally.wants_example(category):
            tally.example(category, e.example(call))
        retry = diverged = alias = None
        if tally.population == "retry":
            if e.retry is not None:
                tally.retry[e.retry[0]] += 1
                retry = e.retry[1]
            else:
                retry = self._retry(call, e.answer, e.prepared, tally)
        t = None
        if tally.population == "transcript" and call.transcript is not None:
            t = tally.transcripts.setdefault(call.transcript, TranscriptTally())
            t.calls += 1
        if (
            call.has_result and self.conn is not None
        ):  # a modelled answer is not the server's result
            failed = category in ("loud", "unreachable", "broken")
            why = divergence(call.result, e.answer, self.config.ignore_keys, failed=failed)
            self._diverged(call, why, tally, t)
            diverged = why is not None
        if e.alias is not None:
            tally.alias["uses"] += 1
            if e.alias[0]:
                tally.alias[e.alias[0]] += 1
                alias = e.alias[1]
            else:
                assert self.config.alias is not None  # an effect with an alias comes from one
                alias = self._alias(call, tally, self.config.alias)
        if self.config.emit is not None:
            self.config.emit(
                ReplayCall(
                    profile=self.profile.name,
                    file=tally.file,
                    line=call.line,
                    id=call.id,
                    tool=call.tool,
                    population=tally.population,
                    category=category,
                    verdict=e.verdict.verdict,
                    reason=e.reason(),
                    retry=retry,
                    diverged=diverged,
                    alias=alias,
                    mutations=e.cell_mutations(),
                    answer=e.verdict.answer,
                    violations=tuple(CellViolation.build(v.to_json()) for v in e.verdict.violations)
                    or None,
                )
            )

    def _retry(
        self, call: RecordedCall, answer: Answer | None, prepared: Prepared, tally: Tally
    ) -> str:
        """A failed queued retry that the failure alone does not decide (``_retry_decided``),
        live: sent again when that is safe, else judged by whether the failure is deterministic."""
        r = tally.retry
        if retry_safe(self.held.live_raw.get(call.tool)):
            for _ in range(self.config.retries):
                r["attempts"] += 1
                again, _, _ = self._attempt(call)
                if CATEGORY_OF[again.verdict] == "delivered":
                    r["recovered"] += 1
                    return "recovered on retry"
            r["measured"] += 1
            return f"failed on every attempt ({1 + self.config.retries})"
        if _validation_failure(answer, prepared, self.held.live_raw.get(call.tool)):
            r["deterministic"] += 1
            return (
                "would fail on every attempt (a validation error is deterministic; "
                "not retried: the tool is not repeat-safe)"
            )
        r["unknown"] += 1
        tally.note(
            "some failed retries were not sent again: the tool is neither read-only nor idempotent, "
            "and the failure is not a validation error, so whether a retry recovers is not measured"
        )
        return "undecided (not repeat-safe, not a validation error)"

    def _diverged(
        self, call: RecordedCall, why: str | None, tally: Tally, t: TranscriptTally | None
    ) -> None:
        """Count a compared call; remember the first diverging one, of the file and of its transcript."""
        tally.compared += 1
        if t is not None:
            t.compared += 1
        if why is None:
            return
        tally.diverged += 1
        where = {"id": call.id, "line": call.line, "why": why}
        turn = call.turn if call.turn is not None else t.calls if t is not None else None
        if turn is not None:
            where["turn"] = turn
        if tally.first_divergence is None:
            tally.first_divergence = {
                **where,
                **({"transcript": call.transcript} if call.transcript else {}),
            }
        if t is not None:
            t.diverged += 1
            if t.first is None:
                t.first = where

    def _alias(self, call: RecordedCall, tally: Tally, alias: Alias) -> str:
        """An old-name call refused loudly, live, by a repeat-safe tool: was it refused because
        of the name? Probed with the new name (``_alias_decided`` decides the other cases)."""
        a = tally.alias
        verdict, _, _ = self._attempt(call, alias.renamed(call.arguments))
        if CATEGORY_OF[verdict.verdict] == "delivered":
            a["name"] += 1
            tally.example(
                "alias-refused",
                {
                    "id": call.id,
                    "line": call.line,
                    "reason": f"refused with {alias.old}, delivered with {alias.new}",
                },
            )
            return f"refused for the old name: the same call with {alias.new} was delivered"
        a["both"] += 1
        return f"refused under both names (not about {alias.old})"


# -- helpers ----------------------------------------------------------------------------------------


class _Effect(NamedTuple):
    """One call's outcome through a profile, and what it adds to any tally it is counted in:
    its replay category, the intermittent behaviours that change it (``sometimes``), and the
    retry and alias outcomes when the outcome alone decides them (a counter key and the
    event's words; an alias key "" is probed live, ``_Segment._alias``)."""

    verdict: Verdict
    answer: Answer | None
    prepared: Prepared
    category: str
    sometimes: tuple[str, ...]
    retry: tuple[str, str] | None
    alias: tuple[str, str] | None

    def reason(self) -> str:
        return _reason(self.verdict, self.answer)

    def counted(self) -> tuple[str, str, tuple[str, ...], str | None]:
        """What a tally counts of this outcome (``_Together.flush``)."""
        retry = self.retry[0] if self.retry is not None else None
        return self.category, self.verdict.verdict, self.sometimes, retry

    def mutations(self) -> list[dict]:
        return _mutations(self.prepared)

    def cell_mutations(self) -> tuple[CellMutation, ...]:
        """The mutations as the event's typed values (the same keys as ``mutations``)."""
        usual = self.prepared.primary
        return tuple(
            CellMutation(m.kind, m.pointer, m.before, m.after)
            for m in (usual.mutations if usual else ())
        )

    def example(self, call: RecordedCall) -> dict:
        return {
            "id": call.id,
            "line": call.line,
            "verdict": self.verdict.verdict,
            "reason": self.reason(),
            "mutations": self.mutations(),
        }


def _changed_by(prepared: Prepared) -> tuple[str, ...]:
    """The intermittent behaviours (joined, a tally's key) whose variant the call changes:
    they are not sent (a write would be made twice), only counted."""
    if len(prepared.variants) < 2:
        return ()
    usual = prepared.variants[-1]
    return tuple(
        ", ".join(v.sometimes)
        for v in prepared.variants[:-1]  # plan_call tries the intermittent behaviours together
        if v.mutations != usual.mutations
        or (v.plan.refused is None) != (usual.plan.refused is None)
    )


def _retry_decided(category: str, prepared: Prepared, offline: bool) -> tuple[str, str] | None:
    """A queued retry's outcome when its first attempt decides it (a retry counter and the
    event's words); None when only sending it again tells (live, ``_Segment._retry``)."""
    if category == "delivered":
        return "first", "delivered"
    if category == "silent":
        return "silent", "silent"
    if prepared.verdict is not None:
        # unreachable, or refused by the client's own validation: the same on every attempt
        return "deterministic", "fails on every attempt (the client refuses it before sending)"
    if offline:
        # the modelled server answers the same call the same way every time
        return (
            "deterministic",
            "fails on every attempt (offline: the modelled server refuses it each time)",
        )
    return None


def _alias_decided(category: str, unprobed: bool) -> tuple[str, str] | None:
    """An old-name call's outcome when the first attempt decides it (an alias counter and the
    event's words); None when a loud refusal is probed with the new name."""
    if category == "delivered":
        return "accepted", "accepted"
    if category != "loud":
        return "other", category
    if unprobed:
        return "unprobed", "refused; not probed with the new name (the tool is not repeat-safe)"
    return None


def _validation_failure(answer: Answer | None, prepared: Prepared, live_tool: Any) -> bool:
    """Is the server's refusal a validation error, which the same call meets every time?

    A JSON-RPC invalid-params or unknown-method error, or wire arguments that the server's own
    ``inputSchema`` rejects. Anything else (a tool error on valid arguments, a timeout) may pass
    on another attempt.
    """
    if answer is None or answer.wire_error is not None:
        return False
    if answer.error is not None:
        return answer.error.get("code") in DETERMINISTIC_RPC_CODES
    if not isinstance(live_tool, dict) or prepared.primary is None:
        return False
    return bool(listed_violations(live_tool, prepared.primary.plan.arguments))


OFFLINE_MEMO = (
    4096  # distinct calls whose offline outcome a segment remembers (retry queues repeat)
)


class _Outcomes:
    """Offline outcomes shared across profiles: a pure function of (kind, tool, arguments).

    Each call's arguments are put into words once (for the first profile that asks), not once
    per profile; the last ``OFFLINE_SHARED`` outcomes are kept (a replay reads each call once
    for all profiles, and retry queues repeat their calls). An outcome is kept with the held
    schema and tool it read (None: it read neither, so it holds for every held copy)."""

    def __init__(self) -> None:
        self.memo: dict[
            tuple, list[tuple[tuple | None, tuple[Verdict, Answer | None, Prepared]]]
        ] = {}
        self.decided: dict[tuple, tuple[Verdict, Answer | None]] = {}  # by what is sent
        # (kind, tool) -> the outcome of every call of a tool the client does not show
        self.unseen: dict[tuple[int, str], tuple[Verdict, Answer | None, Prepared]] = {}
        self.kinds: dict[tuple, int] = {}
        self._last: tuple[RecordedCall | None, tuple[str, str] | None] = (None, None)

    def number(self, kind: tuple) -> int:
        """A kind as a small number (a kind's tuple of behaviours is hashed once, not per call)."""
        return self.kinds.setdefault(kind, len(self.kinds))

    def key(self, kind: int, call: RecordedCall) -> tuple | None:
        last, words = self._last
        if last is not call:
            words = _memo_key(call)
            self._last = (call, words)
        return None if words is None else (kind, words)

    def remember(self, key: tuple, value: tuple) -> None:
        """One more outcome of ``key`` (for another held copy), in ``memo``."""
        if key not in self.memo and len(self.memo) >= OFFLINE_SHARED:
            self.memo.clear()
        self.memo.setdefault(key, []).append(value)

    def decide(self, key: tuple, value: tuple) -> None:
        if len(self.decided) >= OFFLINE_SHARED:
            self.decided.clear()
        self.decided[key] = value


OFFLINE_SHARED = 16384  # outcomes kept across profiles (kinds x distinct calls)


def _memo_key(call: RecordedCall) -> tuple[str, str] | None:
    try:
        return call.tool, json.dumps(call.arguments, sort_keys=True)
    except (TypeError, ValueError):
        return None


def _mutations(prepared: Prepared) -> list[dict]:
    return [m.to_json() for m in (prepared.primary.mutations if prepared.primary else ())]


def _reason(verdict: Verdict, answer: Answer | None) -> str:
    if verdict.verdict == "failed" and answer is not None and not answer.ok:
        s = answer.summary()
        text = s.get("text") or s.get("message") or ""
        return f"refused by the server: {text[:200]}".rstrip(": ")
    return verdict.reason


__all__ = [
    "CATEGORIES",
    "FORMAT",
    "MEASURES",
    "VERSION",
    "VOLATILE_KEYS",
    "Alias",
    "Held",
    "Prepared",
    "ReplayConfig",
    "ReplayReport",
    "Tally",
    "divergence",
    "hold",
    "measure_of",
    "prepare_and_classify",
    "rate",
    "rate_text",
    "replay",
]
