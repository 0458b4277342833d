"""SIGTERM is handled like Ctrl-C (docs/security.md): a CI runner or ``timeout`` that sends it
gets the same ending as a user pressing Ctrl-C: the calls in flight are cut short, servers are
ended, the results file ends with ``run-finished`` (``interrupted: true``), reports are written,
and the exit code says which signal it was (130 for SIGINT, 143 for SIGTERM)."""

from __future__ import annotations

import signal
import threading

_received: list[int] = []


def _as_interrupt(signum: int, frame: object) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def install() -> None:
    """Turn SIGTERM into KeyboardInterrupt in the main thread (where every interrupt path is)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _as_interrupt)


def interrupted_exit_code() -> int:
    """128 + the signal that interrupted the command (SIGINT when none was recorded)."""
    return 128 + (_received[-1] if _received else signal.SIGINT)
