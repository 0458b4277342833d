"""The launcher's wait for the run's first session of a command (``targets.launcher``): while
that session finds out what the launcher started, the others wait for it, the main thread in
slices (``mcp_matrix.wire.waits``) so that a Ctrl-C the kernel handed to another thread stops it.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

from mcp_matrix.targets.launcher import _Resolution


class Interrupted(Exception):
    pass


class Announced(threading.Event):
    """An event that says when a thread starts waiting on it."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait(timeout)


def _asleep(tid: int) -> bool:
    """Thread ``tid`` of this process has been asleep for five looks in a row (in a wait, not
    on its way to one)."""
    for _ in range(5):
        time.sleep(0.05)
        stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] != "S":
            return False
    return True


def test_a_signal_handled_on_another_thread_stops_the_main_threads_wait_for_the_first_session():
    assert threading.current_thread() is threading.main_thread()
    resolution = _Resolution(("npx", "-y", "pkg"), "npx")
    prober, waiter = object(), object()
    assert resolution.take(prober, 600) is True  # the first session finds out
    done = resolution.done = Announced()
    main = threading.get_native_id()
    interrupted, released = threading.Event(), []

    def other_thread() -> None:
        done.waiting.wait(60)
        while not _asleep(main):
            pass
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)  # handled on this thread
        # a main thread asleep in one long wait runs its handler only once that wait ends:
        # here when the first session finishes, which it does after a minute at the latest
        released.append(not interrupted.wait(60))
        resolution.finish(prober, "found out")

    def handler(signum, frame):
        raise Interrupted

    previous = signal.signal(signal.SIGUSR1, handler)
    helper = threading.Thread(target=other_thread)
    try:
        helper.start()
        try:
            resolution.take(waiter, 600)
        except Interrupted:
            interrupted.set()
        helper.join()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert interrupted.is_set() and released == [False]
