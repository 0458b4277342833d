"""The cyclic garbage collector paused around work whose values make no cycles.

Large runs build hundreds of thousands of values that live to the end of a step; each gen-2
collection they set off walks everything read before them. Reference counting still frees what
these steps drop; the collector runs again afterwards, if it was on."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, then back as it was (a caller that had it off keeps it off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
