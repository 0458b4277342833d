"""How a live run reports its progress (``Progress``, counted from every profile's thread by
``ProgressCounter``) and its events (``Emit``): shared by the matrix (``mcp_matrix.run.matrix``),
the profiles' calls (``mcp_matrix.run.profile_calls``), the api and the ``run`` command.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from mcp_matrix.core.events import Event

Emit = Callable[[Event], None]


@dataclass(frozen=True)
class Progress:
    """How far a run is, for a progress line: calls made or explained of those planned."""

    done: int
    total: int  # 0 until the calls are planned (connecting, discovery)
    elapsed: float  # seconds since the calls began
    label: str  # what is happening, or the last (profile, case) done

    @property
    def eta(self) -> float | None:
        """Seconds left at the pace so far; None before the first call or after the last."""
        if not self.done or self.done >= self.total:
            return None
        return self.elapsed / self.done * (self.total - self.done)


class ProgressCounter:
    """Counts the calls of a run from every profile's thread and reports each step."""

    def __init__(self, report: Callable[[Progress], None] | None) -> None:
        self.report = report
        self.total = 0
        self.done = 0
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def phase(self, label: str, total: int = 0) -> None:
        self.total, self.started = total, time.monotonic()
        if self.report:
            self.report(Progress(0, total, 0.0, label))

    def step(self, label: str) -> None:
        if not self.report:
            return
        with self.lock:
            self.done += 1
            now = Progress(self.done, self.total, time.monotonic() - self.started, label)
        self.report(now)


__all__ = ["Emit", "Progress", "ProgressCounter"]
