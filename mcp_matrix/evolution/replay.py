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
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from mcp_matrix.behaviours import registry
from mcp_matrix.core.collector import collector_paused
from mcp_matrix.core.tools import read_only, retry_safe, tools_by_name  # noqa: F401 -- retry_safe: the segments' (one function for every command)
from mcp_matrix.evolution.calls_file import CallsFile, RecordedCall, iter_calls
from mcp_matrix.evolution.effects import schema_server
from mcp_matrix.evolution.replay_config import Alias, ReplayConfig
from mcp_matrix.evolution.replay_prepare import Prepared, prepare_and_classify
from mcp_matrix.evolution.replay_report import (
    CATEGORIES,
    FORMAT,
    MEASURES,
    VERSION,
    VOLATILE_KEYS,
    ReplayReport,
    Tally,
    divergence,
    measure_of,
    rate,
    rate_text,
)
from mcp_matrix.evolution.replay_segment import ReplaySegment
from mcp_matrix.evolution.replay_shared import SharedOutcomes
from mcp_matrix.evolution.replay_together import SegmentsTogether
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.run.held import Held, hold
from mcp_matrix.targets.snapshot import Snapshot, take_snapshot

# -- the run ----------------------------------------------------------------------------------


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
    for tool in config.read_after:
        if not read_only(live_tools.get(tool)):
            from mcp_matrix.core.errors import InputError

            raise InputError(
                f"{tool!r} is not a read-only tool of this server (readOnlyHint: true and not "
                "destructiveHint: true); "
                "only a read may be called after a replay",
                where="--read-after",
            )
    with collector_paused():
        helds = _held_lists(config, snap, live_tools, base_tools)
        if offline:
            # The views and held lists live to the end of the replay: set apart from the
            # collector before it runs again, so no collection walks them (the first one
            # after discovery walked all of them, and each full one after: ~1 s of 15 at
            # 10,000 calls x 52 profiles). Nothing built here is garbage before the end.
            gc.freeze()
    stop = threading.Event()
    if offline:
        done: list[Tally] = []
        try:
            with _young_collections_only():
                _play_offline(config, helds, stop, done)
        except KeyboardInterrupt:
            stop.set()
            report.interrupted = True
        finally:
            gc.unfreeze()  # a caller in the same process (a test, the API) collects as before
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


def _held_lists(
    config: ReplayConfig, snap: Snapshot, live_tools: dict, base_tools: dict | None
) -> list[Held]:
    """Each profile's discovery of the snapshot (and of the baseline), as the list it holds."""
    live_views = discover_all(snap, config.profiles)
    base_views = (
        discover_all(config.baseline, config.profiles, server=snap.server_name)
        if config.baseline
        else None
    )
    return [
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
        ReplaySegment(config, held, tally).play(calls)
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
YOUNG_COLLECTIONS_EVERY = 1_000_000  # its first (objects allocated between young collections)


@contextmanager
def _young_collections_only() -> Iterator[None]:
    """Hold off the cyclic collector's full collections while an offline replay runs, and
    make its young collections rare.

    The replay builds a large long-lived heap as it goes (compiled validators, the shared
    outcomes), and every full collection walked all of it: 11 of them were 4.3 of 16 s of CPU
    at 10,000 calls x 52 profiles. Young collections walked the outcomes kept for the calls
    just played: 3,250 of them (a threshold of 700) took ~2.5 s, and 7 (50,000) still 0.23 s,
    for ~7,000 objects freed in the whole replay (a validation error and its context: the
    replay makes few cycles; reference counting frees the rest). So one runs only every
    ``YOUNG_COLLECTIONS_EVERY`` objects (the cycles wait that long), and what the replay
    built is set apart (``gc.freeze``) before the thresholds are set back, so their return
    does not set off one walk of it all (0.07 s); the caller's ``gc.unfreeze`` hands it to the
    oldest generation."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTIONS_EVERY), middle, FULL_COLLECTIONS_HELD)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(young, middle, old)


def _play_offline(
    config: ReplayConfig, helds: list[Held], stop: threading.Event, done: list[Tally]
) -> None:
    """Offline, every file is read once and each call goes through every profile in turn.

    The work is CPU alone (no server to wait for), so there is nothing for threads to overlap;
    profiles that cannot tell a call apart share its outcome (``SharedOutcomes``). Tallies go to
    ``done`` file by file, in file order then profile order (an interrupted replay keeps the
    files it finished)."""
    outcomes = SharedOutcomes()
    server = schema_server(helds[0].live_raw) if helds else None
    for source in config.files:
        tallies = [
            Tally(h.profile.name, source.name, source.population, config.examples) for h in helds
        ]
        calls = _reading(config, source, stop, weight=len(helds))
        if source.population != "transcript":
            together = SegmentsTogether(
                [ReplaySegment(config, h, t, outcomes, server) for h, t in zip(helds, tallies)]
            )
            for call in calls:
                together.play(call)
            together.flush()
        else:
            for group in _transcripts(calls, _Notes(tallies)):
                for held, tally in zip(helds, tallies):
                    part = Tally(held.profile.name, source.name, source.population, config.examples)
                    ReplaySegment(config, held, part, outcomes, server).play(group)
                    tally.merge(part)
        if stop.is_set():
            return
        done.extend(tallies)


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
    ReplaySegment(config, held, tally).play(group)
    return tally


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
