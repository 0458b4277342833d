"""stdin and stdout for the SDK's ``stdio_server`` when both are pipes, read and written by the
event loop instead of a worker thread.

The SDK wraps each standard stream in ``anyio.wrap_file``: every line read and every write and
flush is a hand-off to a worker thread and back (about 35 a session of ten calls, and two
threads started), a good part of the CPU a forked server costs (docs/wire.md). ``stdio_server``
takes explicit streams; these read a pipe when the event loop says it is readable and write it
with ``RWF_NOWAIT`` (waiting for it to be writable when it is full), so no thread is involved.
What crosses the wire is the same: lines decoded as the SDK's text wrapper decodes them (UTF-8,
malformed bytes replaced, ``\\r`` and ``\\r\\n`` read as line ends, a last line without one kept),
each message written whole as UTF-8 (a string UTF-8 cannot encode fails as it did). The standard
descriptors are diverted while serving, as the SDK does for its own streams: fd 0 reads the null
device and fd 1 writes to stderr, so stray output never reaches the wire.

``usable()`` says when this applies: fd 0 and fd 1 are pipes and the kernel takes ``RWF_NOWAIT``
on a pipe (Linux 5.x and later); anything else (a terminal, a file, a socket) is served by the
SDK's own streams.
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import io
import os
import stat
from collections.abc import Iterator
from typing import Any

import anyio

READ_SIZE = 65536


def _nowait_on_pipes() -> bool:
    """Whether a write to a pipe may be asked not to block (``RWF_NOWAIT``), tried on one."""
    flag = getattr(os, "RWF_NOWAIT", None)
    if flag is None or not hasattr(os, "pwritev"):
        return False
    r, w = os.pipe()
    try:
        return os.pwritev(w, [b"\n"], -1, flag) == 1
    except OSError:
        return False
    finally:
        os.close(r)
        os.close(w)


NOWAIT_ON_PIPES = _nowait_on_pipes()  # once per interpreter (a warm template's servers share it)


def usable() -> bool:
    """fd 0 and fd 1 are pipes and this kernel writes to a pipe without blocking when asked."""
    if not NOWAIT_ON_PIPES:
        return False
    try:
        return all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (0, 1))
    except OSError:
        return False


class PipeLines:
    """Lines of a pipe as ``async for line in anyio.wrap_file(TextIOWrapper(..., encoding="utf-8",
    errors="replace"))`` yields them, each line read once the event loop says the pipe holds
    bytes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._decoder = io.IncrementalNewlineDecoder(utf8, translate=True)
        self._lines: collections.deque[str] = collections.deque()
        self._partial: list[str] = []  # the line being read, in pieces (joined once: linear)
        self._ended = False

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            if self._ended:
                raise StopAsyncIteration
            await anyio.wait_readable(self.fd)
            data = os.read(self.fd, READ_SIZE)  # readable: returns what is there, or b"" at its end
            self._take(self._decoder.decode(data, final=not data))
            if not data:
                self._ended = True
                if self._partial:
                    self._lines.append("".join(self._partial))
                    self._partial = []
        return self._lines.popleft()

    def _take(self, text: str) -> None:
        first, *whole = text.split("\n")
        if first:
            self._partial.append(first)
        if not whole:
            return
        last = whole.pop()
        self._lines.append("".join(self._partial) + "\n")
        self._lines.extend(line + "\n" for line in whole)
        self._partial = [last] if last else []


class PipeWriter:
    """``write`` and ``flush`` of ``anyio.wrap_file(TextIOWrapper(..., encoding="utf-8"))`` on a
    pipe: each write goes out whole before it returns, so ``flush`` has nothing left to do."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> int:
        view = memoryview(text.encode("utf-8"))
        while view:
            try:
                sent = os.pwritev(self.fd, [view], -1, os.RWF_NOWAIT)
            except BlockingIOError:  # full: the client has not read yet
                await anyio.wait_writable(self.fd)
                continue
            view = view[sent:]
        return len(text)

    async def flush(self) -> None:
        return None


@contextlib.contextmanager
def diverted() -> Iterator[tuple[int, int]]:
    """Private duplicates of fd 0 and fd 1 (the wire) while fd 0 reads the null device and fd 1
    writes to stderr, as the SDK's ``stdio_server`` diverts them; put back at the end."""
    import fcntl  # POSIX only, as usable() is

    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)
        os.close(wire_out)
        os.close(wire_in)


def streams(wire_in: int, wire_out: int) -> tuple[Any, Any]:
    """What ``stdio_server(stdin, stdout)`` is given: typed as anyio's ``AsyncFile``, which the
    SDK uses for iteration, ``write`` and ``flush`` only."""
    return PipeLines(wire_in), PipeWriter(wire_out)
