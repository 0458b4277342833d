"""Waits the main thread can be interrupted out of, whichever thread the signal landed on.

Python runs signal handlers in the main thread, but the kernel may hand a process's SIGINT or
SIGTERM to any of its threads: to another one whenever the main thread has it blocked (it does,
briefly, inside every ``subprocess.Popen``, which blocks all signals around its ``vfork``), and
``raise()`` from another thread targets that thread. The handler then waits until the main thread
next takes the interpreter lock; a main thread asleep in one long lock or queue wait does not take
it until the wait ends: a Ctrl-C pressed while a server was being started stopped the run only when
the 30 s ``initialize`` wait ran out (1 time in 10 on a loaded machine). The main thread therefore
waits in slices of at most ``SLICE`` seconds; every other thread waits in one piece.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")
SLICE = 0.2  # seconds: how late a Ctrl-C handled by another thread may reach the main thread


def slices(timeout: float) -> Iterator[float]:
    """The waits a wait of ``timeout`` seconds is made of: one, except in the main thread."""
    if threading.current_thread() is not threading.main_thread() or timeout <= SLICE:
        yield max(timeout, 0.0)
        return
    end = time.monotonic() + timeout
    while (left := end - time.monotonic()) > SLICE:
        yield SLICE
    yield max(left, 0.0)


def get(inbox: queue.Queue[T], timeout: float) -> T:
    """``inbox.get(timeout=timeout)``, in slices in the main thread; ``queue.Empty`` at the end."""
    for part in slices(timeout):
        try:
            return inbox.get(timeout=part)
        except queue.Empty:
            continue
    raise queue.Empty


def wait(event: threading.Event, timeout: float) -> bool:
    """``event.wait(timeout)``, in slices in the main thread."""
    return any(event.wait(part) for part in slices(timeout))
