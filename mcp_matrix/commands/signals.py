"""SIGTERM is handled like Ctrl-C (docs/security.md): a CI runner or ``timeout`` that sends it
gets the same ending as a user pressing Ctrl-C: the calls in flight are cut short, servers are
ended, the results file ends with ``run-finished`` (``interrupted: true``), reports are written,
and the exit code says which signal it was (130 for SIGINT, 143 for SIGTERM).

The first signal stops the command; one more within ``STOPPING_GRACE`` seconds (an impatient
user pressing Ctrl-C twice) is counted and dropped, so it cannot cut short the bounded stop
path itself: the servers being ended, the finished snapshot being written, the results ending,
the reports. After the grace a signal interrupts again, in case the stop path itself hangs.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

STOPPING_GRACE = (
    30.0  # seconds; closing servers is bounded at about 4 s each, probes at 15 s in all
)
# What signal.signal takes and returns: a function, SIG_DFL or SIG_IGN, or None (a handler set
# outside Python).
Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
_received: list[int] = []
_first_at: list[float] = []


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    if _first_at and time.monotonic() - _first_at[0] < STOPPING_GRACE:
        return  # stopping already
    _first_at[:] = [time.monotonic()]
    raise KeyboardInterrupt


def install() -> dict[int, Handler]:
    """Turn SIGINT and SIGTERM into one KeyboardInterrupt in the main thread (where every
    interrupt path is); the previous handlers, for ``restore``."""
    _received.clear()
    _first_at.clear()
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}


def restore(previous: dict[int, Handler]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def interrupted_exit_code() -> int:
    """128 + the signal that interrupted the command (SIGINT when none was recorded)."""
    return 128 + (_received[0] if _received else signal.SIGINT)
