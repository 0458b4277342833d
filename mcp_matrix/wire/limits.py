"""Caps on what a server can make us hold: line and message size, decompressed bodies, buffers.

A server is untrusted input (docs/security.md). Without caps a 1 GB stdout line reached 3.8 GB
of memory and a 1 MB gzip body 2.1 GB. Every byte a transport reads goes through
``split_lines`` (stdio lines, SSE lines) or ``capped_body`` (an HTTP JSON body, counted after
decompression); anything longer than ``MAX_MESSAGE_BYTES`` is dropped as it streams in, never
held, and comes back as an ``Oversize`` value the transport turns into a protocol error.

An HTTP body is decompressed here, not by httpx (``decoded``): at most ``DECODE_STEP`` bytes come
out of each layer at a time, so a ``gzip, gzip`` body (1 GiB from 1,827 bytes, which httpx
inflated in one piece: 2.1 GB) is counted against the cap as it inflates.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MiB = 1024 * 1024
MAX_MESSAGE_BYTES = 32 * MiB  # one JSON-RPC message (a stdio line, an SSE event, an HTTP body)
MAX_PENDING_WRITE_BYTES = 4 * MiB  # written to a server that does not read its stdin
MAX_STDERR_LINE_BYTES = 64 * 1024  # longer stderr lines are cut (only the tail is kept anyway)
INBOX_MESSAGES = 1000  # decoded messages waiting for the session; readers wait beyond that
MAX_RECORDED = 1000  # notifications and server requests kept per session (the rest are counted)
DECODE_STEP = 64 * 1024  # the most one layer of Content-Encoding inflates at a time
MAX_ENCODINGS = 4  # Content-Encoding layers we undo (``gzip, gzip`` is two)
ACCEPT_ENCODING = "gzip, deflate"  # what we offer, so what we decode; anything else is refused


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
    """A whole body (decompressed chunks, see ``decoded``), or ``Oversize`` as soon as it passes
    ``cap``."""
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


class UnsupportedEncoding(ValueError):
    """A Content-Encoding we did not offer (``br``, ``zstd``) or too many layers of them."""


def decoded(chunks: Iterable[bytes], content_encoding: str) -> Iterator[bytes]:
    """The body ``chunks`` (raw, as on the wire) with every ``Content-Encoding`` layer undone,
    in pieces of at most ``DECODE_STEP`` bytes, however much a piece of input inflates.

    Raises ``UnsupportedEncoding`` before reading anything for an encoding we did not offer
    (``ACCEPT_ENCODING``), and ``zlib.error`` for a corrupt body."""
    layers = [e.strip().lower() for e in content_encoding.split(",") if e.strip()]
    layers = [e for e in layers if e != "identity"]
    if len(layers) > MAX_ENCODINGS:
        raise UnsupportedEncoding(
            f"{len(layers)} layers of Content-Encoding ({content_encoding[:100]!r}); at most "
            f"{MAX_ENCODINGS} are undone"
        )
    unknown = [e for e in layers if e not in _WBITS]
    if unknown:
        raise UnsupportedEncoding(
            f"Content-Encoding {unknown[0][:40]!r}, which we did not offer "
            f"(Accept-Encoding: {ACCEPT_ENCODING})"
        )
    out: Iterable[bytes] = chunks
    for layer in reversed(layers):  # the last encoding applied is the first undone
        out = _inflate(out, _WBITS[layer])
    return iter(out)


_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def _inflate(chunks: Iterable[bytes], wbits: int) -> Iterator[bytes]:
    """One layer undone, at most ``DECODE_STEP`` bytes a piece (``max_length`` keeps the rest
    of the input in ``unconsumed_tail``); gzip members one after another; deflate with or
    without its zlib header (as httpx accepts it)."""
    d = zlib.decompressobj(wbits)
    first = True
    for chunk in chunks:
        data = chunk
        while data:
            try:
                piece = d.decompress(data, DECODE_STEP)
            except zlib.error:
                if not (first and wbits == zlib.MAX_WBITS):
                    raise
                wbits, first = -zlib.MAX_WBITS, False  # raw deflate, no zlib header
                d = zlib.decompressobj(wbits)
                continue
            first = False
            if piece:
                yield piece
            if d.eof and d.unused_data:  # another gzip member follows
                data, d = d.unused_data, zlib.decompressobj(wbits)
                continue
            data = d.unconsumed_tail
            while not data and len(piece) == DECODE_STEP:  # output still pending in zlib
                piece = d.decompress(b"", DECODE_STEP)
                if piece:
                    yield piece
                data = d.unconsumed_tail
    rest = d.flush(DECODE_STEP)
    while rest:
        yield rest
        rest = d.flush(DECODE_STEP) if len(rest) == DECODE_STEP else b""
