"""Caps on what a server can make us hold: line and message size, decompressed bodies, buffers.

A server is untrusted input (docs/security.md). Without caps a 1 GB stdout line reached 3.8 GB
of memory and a 1 MB gzip body 2.1 GB. Every byte a transport reads goes through
``split_lines`` (stdio lines, SSE lines) or ``capped_body`` (an HTTP JSON body, counted after
decompression); anything longer than ``MAX_MESSAGE_BYTES`` is dropped as it streams in, never
held, and comes back as an ``Oversize`` value the transport turns into a protocol error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MiB = 1024 * 1024
MAX_MESSAGE_BYTES = 32 * MiB  # one JSON-RPC message (a stdio line, an SSE event, an HTTP body)
MAX_PENDING_WRITE_BYTES = 4 * MiB  # written to a server that does not read its stdin
MAX_STDERR_LINE_BYTES = 64 * 1024  # longer stderr lines are cut (only the tail is kept anyway)
INBOX_MESSAGES = 1000  # decoded messages waiting for the session; readers wait beyond that
MAX_RECORDED = 1000  # notifications and server requests kept per session (the rest are counted)


@dataclass(frozen=True)
class Oversize:
    """A message longer than the cap: how many bytes were dropped without being held."""

    size: int
    cap: int = MAX_MESSAGE_BYTES

    def describe(self, where: str) -> str:
        return (
            f"a message of {_size(self.size)} on {where} is over the {_size(self.cap)} cap "
            "(docs/security.md); it was dropped without being decoded"
        )


def _size(n: int) -> str:
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n} bytes"


def split_lines(
    chunks: Iterable[bytes], cap: int = MAX_MESSAGE_BYTES
) -> Iterator[bytes | Oversize]:
    """Lines (without ``\\n``) of a byte stream, each at most ``cap`` bytes; longer ones become
    ``Oversize`` once their end arrives (at most ``cap`` bytes are ever buffered)."""
    buf = bytearray()
    dropped = -1  # >= 0 while dropping an over-long line: bytes dropped so far
    for chunk in chunks:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if dropped >= 0:
                dropped += len(piece)
            elif len(buf) + len(piece) > cap:
                dropped = len(buf) + len(piece)
                buf = bytearray()
            else:
                buf += piece
            if nl < 0:
                break
            if dropped >= 0:
                yield Oversize(dropped, cap)
                dropped = -1
            else:
                yield bytes(buf)
                buf = bytearray()
            start = nl + 1
    if dropped >= 0:
        yield Oversize(dropped, cap)
    elif buf:
        yield bytes(buf)


def capped_body(chunks: Iterable[bytes], cap: int = MAX_MESSAGE_BYTES) -> bytes | Oversize:
    """A whole body (decompressed chunks), or ``Oversize`` as soon as it passes ``cap``."""
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > cap:
            return Oversize(len(out), cap)
    return bytes(out)


def sse_data(
    lines: Iterable[bytes | Oversize], cap: int = MAX_MESSAGE_BYTES
) -> Iterator[str | Oversize]:
    """The ``data`` of each server-sent event (see ``sse_events``), its name dropped."""
    for _, data in sse_events(lines, cap):
        yield data


def sse_events(
    lines: Iterable[bytes | Oversize], cap: int = MAX_MESSAGE_BYTES
) -> Iterator[tuple[str, str | Oversize]]:
    """``(event name, data)`` of each server-sent event (data lines joined by ``\n``; an event
    whose data passes ``cap`` is ``Oversize``); comments, ``id`` and ``retry`` are skipped; LF and
    CRLF framing. Events without data are skipped."""
    data: list[str] = []
    name = ""
    size = 0
    over = False
    for line in lines:
        if isinstance(line, Oversize):
            over, data, size = True, [], 0
            continue
        text = line.decode("utf-8", errors="replace").removesuffix("\r")
        if not text:  # the end of one event
            if over:
                yield name, Oversize(max(size, cap + 1), cap)
            elif data:
                yield name, "\n".join(data)
            data, size, over, name = [], 0, False, ""
            continue
        if text.startswith(":"):
            continue
        field, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        if field != "data" or over:
            continue
        size += len(value) + 1
        if size > cap:
            over, data = True, []
        else:
            data.append(value)
    if over:
        yield name, Oversize(max(size, cap + 1), cap)
    elif data:
        yield name, "\n".join(data)
