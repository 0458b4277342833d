"""The transport seam: something that sends JSON-RPC messages and yields what the server says.

A transport knows nothing of MCP. ``send`` writes one message; ``receive`` returns the next
item from the server within a timeout: a decoded message (dict or list), or a ``WireError``
value when the transport itself failed (the session raises it for the pending request).
Stdout noise and stderr are collected on the side for reports.

The inbox holds at most ``INBOX_MESSAGES`` messages: a server that floods us waits for the
session to catch up (docs/security.md). Each message keeps the time it arrived
(``received_at``), so a session can refuse a "response" that came before its request.
Integers longer than Python's 4,300-digit limit decode to ``HugeInt`` (their digits), so a
valid message is never called invalid JSON.
"""

from __future__ import annotations

import json
import queue
import time
from typing import Any

from matrix.wire.errors import Noise, ProtocolError, ServerExited, WireError, WireTimeout
from matrix.wire.limits import INBOX_MESSAGES, Oversize

NOISE_KEEP = 200
NOISE_LINE_MAX = 500
INT_DIGITS_MAX = 4300  # Python's default int_max_str_digits


class HugeInt(str):
    """A JSON integer too long for ``int()`` (its digits): equal to no request id."""


def _parse_int(text: str) -> int | HugeInt:
    return int(text) if len(text) <= INT_DIGITS_MAX else HugeInt(text)


def decode_json(text: str) -> Any:
    """``json.loads`` that keeps integers of any length (see ``HugeInt``)."""
    return json.loads(text, parse_int=_parse_int)


class Transport:
    """Base: a thread-safe inbox fed by reader threads; subclasses implement I/O."""

    name = "transport"

    def __init__(self) -> None:
        self._inbox: queue.Queue[Any] = queue.Queue(maxsize=INBOX_MESSAGES)
        self.noise: list[Noise] = []
        self.started_at = time.monotonic()
        self.received_at = 0.0  # when the message last returned by receive() arrived
        self._interrupted: WireError | None = None
        self._closed = False

    # -- to implement -------------------------------------------------------------
    def start(self) -> None:
        raise NotImplementedError

    def send(self, message: dict) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def stderr_tail(self) -> tuple[str, ...]:
        return ()

    def describe(self) -> dict:
        return {"transport": self.name}

    # -- shared -------------------------------------------------------------------
    def receive(self, timeout: float) -> Any:
        """The next message (dict/list) or WireError value; raises WireTimeout after ``timeout``."""
        if self._interrupted is not None:
            return self._interrupted
        try:
            self.received_at, item = self._inbox.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            raise WireTimeout(
                f"no message from the server within {timeout:.1f}s", stderr_tail=self.stderr_tail()
            ) from None
        return self._interrupted or item

    def interrupt(self, reason: str) -> None:
        """Fail the request being waited for now (safe from any thread), e.g. on Ctrl-C."""
        self._interrupted = ServerExited(reason, stderr_tail=self.stderr_tail())
        try:
            self._inbox.put_nowait(
                (time.monotonic(), self._interrupted)
            )  # wakes a waiting receive()
        except queue.Full:
            pass  # receive() returns at once anyway: the inbox is not empty

    def _deliver(self, item: Any) -> None:
        """Queue one item for the session; waits while the inbox is full, gives up once closed."""
        stamped = (time.monotonic(), item)
        while True:
            try:
                self._inbox.put(stamped, timeout=0.5)
                return
            except queue.Full:
                if self._closed:
                    return

    def _deliver_text(self, text: str, source: str = "stdout") -> None:
        """Decode one framed message; undecodable text becomes noise or a protocol problem."""
        if isinstance(text, Oversize):
            self._deliver(ProtocolError(text.describe(source), stderr_tail=self.stderr_tail()))
            return
        stripped = text.strip()
        if not stripped:
            return
        try:
            message = decode_json(stripped)
        except RecursionError:
            self._deliver(
                ProtocolError(
                    f"a message on {source} is nested too deeply to decode",
                    detail=stripped[:200],
                    stderr_tail=self.stderr_tail(),
                )
            )
            return
        except ValueError:
            self._record_noise(stripped)
            if stripped.startswith(("{", "[")):
                # Looks like JSON-RPC but is broken: a client reading it fails the pending request.
                self._deliver(
                    ProtocolError(
                        f"invalid JSON on {source}",
                        detail=stripped[:NOISE_LINE_MAX],
                        stderr_tail=self.stderr_tail(),
                    )
                )
            return
        if not isinstance(message, (dict, list)):
            self._record_noise(stripped)
            return
        self._deliver(message)

    def _record_noise(self, line: str) -> None:
        if len(self.noise) < NOISE_KEEP:
            self.noise.append(Noise(line[:NOISE_LINE_MAX], time.monotonic() - self.started_at))

    def _fail(self, error: WireError) -> None:
        self._deliver(error)
