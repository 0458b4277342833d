"""Bounds that make every run end: a deadline for the whole run and a circuit breaker.

Without them a server that never answers ``tools/call`` kept ``run`` busy for one call
timeout per call per profile (over 10 minutes for the faulty server), and a CI job was
killed before it reported anything. With them:

- the **deadline** (``--timeout-run``) caps every wait by the time left; when it passes,
  the calls in flight are cut short and every call not made is reported, with the reason;
- the **circuit breaker** stops waiting on what already failed to answer: after a call of a
  tool times out, that tool's remaining calls (every profile) are reported instead of made;
  after a handshake times out twice, or calls of two different tools time out with no
  answer in between, the server counts as stopped and no further call is made
  (``--no-circuit-breaker`` keeps calling).

Our own timeouts are not the server's fault on a slow machine: ``timeout_note`` says so,
with the load, in every timeout we report.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import final

from mcp_matrix.wire.session import Timeouts

# Each wait keeps at least this much, so a nearly spent deadline still lets a call be sent
# and answered by a fast server rather than failing before it starts.
MIN_WAIT = 0.05
# How long past ``--timeout-run`` a run may take to end: calls stop ``shutdown`` seconds before
# the deadline, then the sessions close (each bounded, about 4 s at worst, in parallel) and the
# results and reports are written (docs/security.md).
DEADLINE_GRACE = 10.0
# A session's waits end this long after the calls' stop time (``Timeouts.until``): a call in
# flight then is cut short by the run (``not called``/``cut short``, polled every 0.2 s), not
# reported ``broken`` by a timeout of its own at the same instant.
UNTIL_MARGIN = 1.0


class Deadline:
    """The time left for the run; ``None`` seconds means no deadline.

    Calls stop ``reserve`` seconds early: ending the servers (each bounded by the shutdown
    timeout, in parallel) and writing the reports then fit inside the deadline."""

    def __init__(
        self,
        seconds: float | None,
        reserve: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self._clock = clock
        self._ends = None if seconds is None else clock() + max(0.0, seconds - reserve)

    def remaining(self) -> float | None:
        return None if self._ends is None else max(0.0, self._ends - self._clock())

    def passed(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0

    def cap(self, timeouts: Timeouts) -> Timeouts:
        """``timeouts`` with every wait bounded by the time left (unchanged without a deadline),
        and ``until`` set to the deadline itself: a session made with them ends every later wait
        there too (every page of a slow ``tools/list``, not only the first)."""
        left = self.remaining()
        if left is None:
            return timeouts
        bound = max(MIN_WAIT, left)
        return replace(
            timeouts,
            initialize=min(timeouts.initialize, bound),
            list=min(timeouts.list, bound),
            call=min(timeouts.call, bound),
            ping=min(timeouts.ping, bound),
            until=None if self._ends is None else self._ends + UNTIL_MARGIN,
        )

    def reason(self) -> str:
        return f"not called: the run's deadline (--timeout-run {self.seconds:g} s) passed first"


class CircuitBreaker:
    """Which calls are no longer worth waiting for, and why (thread-safe: profiles run in parallel)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._tools: dict[str, str] = {}
        self._server: str | None = None
        self._timed_out_since_answer: dict[str, str] = {}  # tool -> profile, since the last answer

    def reason(self, tool: str) -> str | None:
        """Why a call of ``tool`` is not made, or None to make it."""
        with self._lock:
            return self._server or self._tools.get(tool)

    def answered(self) -> None:
        """A call got an answer of any kind: the server is still there."""
        with self._lock:
            self._timed_out_since_answer.clear()

    def call_timed_out(self, tool: str, profile: str, seconds: float) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._tools.setdefault(
                tool,
                f"not called: tools/call {tool!r} timed out after {seconds:g} s for "
                f"{profile} (circuit breaker; --no-circuit-breaker calls anyway)",
            )
            self._timed_out_since_answer.setdefault(tool, profile)
            if len(self._timed_out_since_answer) >= 2 and self._server is None:
                names = ", ".join(repr(t) for t in self._timed_out_since_answer)
                self._server = (
                    f"not called: the server stopped answering tools/call (calls of {names} timed out with no answer "
                    f"in between; circuit breaker; --no-circuit-breaker calls anyway)"
                )

    def handshake_timed_out(self, profile: str, seconds: float) -> None:
        """The handshake timed out even when retried with a longer bound."""
        if not self.enabled:
            return
        with self._lock:
            if self._server is None:
                self._server = (
                    f"not called: the server stopped answering (initialize timed out twice for {profile}, "
                    f"the second time after {seconds:g} s; circuit breaker; --no-circuit-breaker calls anyway)"
                )


@final
class Watchdog:
    """The run's last bound: ``grace`` seconds past its deadline, a run that has not ended is
    stopped as Ctrl-C stops it (SIGINT to the main thread: calls cut short, servers ended,
    results ending with ``run-finished``, reports written); if even that has not ended it
    ``final`` seconds later, ``last_words`` runs (it ends the results file) and the process
    exits with ``EXIT_CODE``. No wire wait should ever need it (each is bounded, docs/wire.md):
    it is what keeps a CI job's budget when one does."""

    EXIT_CODE = 3  # the run could not measure everything: as a passed deadline

    def __init__(
        self,
        seconds: float | None,
        grace: float = DEADLINE_GRACE,
        final: float = 30.0,
        last_words: Callable[[], None] | None = None,
    ) -> None:
        self.seconds = seconds
        self.grace = grace
        self.final = final
        self.last_words = last_words
        self.fired = False
        self._timers: list[threading.Timer] = []

    def __enter__(self) -> Watchdog:
        if self.seconds is not None and threading.current_thread() is threading.main_thread():
            for after, action in (
                (self.seconds + self.grace, self._stop),
                (self.seconds + self.grace + self.final, self._exit),
            ):
                timer = threading.Timer(after, action)
                timer.daemon = True
                timer.start()
                self._timers.append(timer)
        return self

    def __exit__(self, *exc: object) -> None:
        for timer in self._timers:
            timer.cancel()

    def _stop(self) -> None:
        self.fired = True
        main = threading.main_thread().ident
        if main is not None:
            signal.pthread_kill(main, signal.SIGINT)

    def _exit(self) -> None:
        try:
            if self.last_words is not None:
                self.last_words()
        finally:
            os._exit(self.EXIT_CODE)


def timeout_note() -> str:
    """What to say with every timeout we report: the bound is ours, the machine may be the cause.
    The timeout's own message names the option that sets the bound (mcp_matrix.wire.rpc)."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # not every platform has a load average
        return "the timeout is ours: a slow or loaded machine can cause it"
    cores = os.cpu_count() or 1
    busy = " (busy)" if load > cores else ""
    return (
        f"the timeout is ours: a slow or loaded machine can cause it (load average {load:.1f} on {cores} "
        f"cores{busy})"
    )


__all__ = ["DEADLINE_GRACE", "MIN_WAIT", "CircuitBreaker", "Deadline", "Watchdog", "timeout_note"]
