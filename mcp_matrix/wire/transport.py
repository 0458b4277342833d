"""The transport seam: something that sends JSON-RPC messages and yields what the server says.

A transport knows nothing of MCP. ``send`` writes one message; ``receive`` returns the next
item from the server within a timeout: a decoded message (dict or list), or a ``WireError``
value when the transport itself failed (the session raises it for the pending request).
Stdout noise and stderr are collected on the side for reports.

The inbox holds at most ``INBOX_MESSAGES`` messages: a server that floods us waits for the
session to catch up (docs/security.md). Each message keeps the time it arrived
(``received_at``) and, over stdio, where it stood in the pipes (``received_stamp``), so a
session can refuse a "response" that was on its way before its request was sent
(``arrived_before``).

Integers decode to ``int`` exactly, up to the number of digits the process converts
(``sys.get_int_max_str_digits()``, which ``mcp_matrix/__init__.py`` raises to 10,000 so that such
numbers are also written back exactly); a message holding a longer one is a protocol error
naming the bound, never a number turned into a string (docs/security.md).
"""

from __future__ import annotations

import json
import math
import queue
import sys
import time
from typing import Any

from mcp_matrix.wire import waits
from mcp_matrix.wire.errors import Noise, ProtocolError, ServerExited, WireError, WireTimeout
from mcp_matrix.wire.limits import INBOX_MESSAGES, Oversize

NOISE_KEEP = 200
NOISE_LINE_MAX = 500


class IntegerOverCap(ValueError):
    """A JSON integer longer than the process converts: the message cannot be kept exactly."""

    def __init__(self, digits: int, cap: int) -> None:
        super().__init__(
            f"a message holds an integer of {digits:,} digits, over the {cap:,}-digit bound "
            "(docs/security.md); it was dropped rather than changed"
        )

    def at(self, source: str) -> str:
        return f"{self} on {source}"


class NotJsonNumber(ValueError):
    """``NaN`` or ``Infinity`` (not JSON: RFC 8259 section 6; Python's reader takes them and a
    client on ``JSON.parse`` refuses the message), or a number beyond a double's range such as
    ``1e999`` (JSON, which ``JSON.parse`` reads as Infinity): either, kept, would be written back
    as ``Infinity`` and make every JSON output of the run invalid."""

    def __init__(self, word: str, valid: bool) -> None:
        super().__init__(word)
        self.word, self.valid = word, valid

    def at(self, source: str) -> str:
        if self.valid:
            return (
                f"a message on {source} holds the number {self.word[:40]}, beyond a double's "
                "range: JSON.parse reads it as Infinity, which no JSON output can hold; the "
                "bound is ours (docs/security.md), and the message was dropped rather than changed"
            )
        return (
            f"a message on {source} holds {self.word}, which is not a JSON number (RFC 8259 "
            "section 6): a client on JSON.parse refuses the whole message"
        )


def _refuse_constant(word: str) -> Any:
    raise NotJsonNumber(word, valid=False)


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NotJsonNumber(text, valid=True)
    return value


def _parse_int(text: str) -> int:
    cap = sys.get_int_max_str_digits()
    digits = len(text.lstrip("-"))
    if cap and digits > cap:
        raise IntegerOverCap(digits, cap)
    return int(text)


# Made once: json.loads with hooks builds a decoder and its scanner for every message (every
# message a server sends is decoded here), which made decoding about twice as slow.
_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_refuse_constant
)


def decode_json(text: str) -> Any:
    """``json.loads`` whose integers are exact ``int`` values; ``IntegerOverCap`` for one over
    the process's bound (a plain ValueError would call valid JSON invalid); ``NotJsonNumber``
    for ``NaN``, ``Infinity`` or a number beyond a double's range."""
    if text.startswith("\ufeff"):
        return json.loads(text)  # raises: JSON text has no byte order mark (json.loads' words)
    return _DECODER.decode(text)


class Transport:
    """Base: a thread-safe inbox fed by reader threads; subclasses implement I/O."""

    name = "transport"

    def __init__(self) -> None:
        self._inbox: queue.Queue[Any] = queue.Queue(maxsize=INBOX_MESSAGES)
        self.noise: list[Noise] = []
        self.started_at = time.monotonic()
        self.received_at = 0.0  # when the message last returned by receive() arrived
        self.received_stamp: Any = None  # where the transport placed it (stdio), if it can
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
    def receive(self, timeout: float) -> object:
        """The next message (dict/list) or WireError value; raises WireTimeout after ``timeout``."""
        if self._interrupted is not None:
            return self._interrupted
        try:
            self.received_at, self.received_stamp, item = waits.get(self._inbox, timeout)
        except queue.Empty:
            raise WireTimeout(
                f"no message from the server within {timeout:.1f}s", stderr_tail=self.stderr_tail()
            ) from None
        return self._interrupted or item

    def arrived_before(self, request_id: object, sent_at: float) -> bool:
        """Whether the message ``receive`` last returned was on its way before request
        ``request_id`` was sent (handed to the transport at ``sent_at``): then it cannot be
        that request's answer. Here by time; stdio tells by its pipes (``stdio.Ledger``)."""
        return self.received_at < sent_at

    def unread_note(self, request_id: object) -> str:
        """``; the server read N of the request's M bytes ...`` when the transport can tell that
        the server has not read all of request ``request_id``, else ``""``."""
        return ""

    def interrupt(self, reason: str) -> None:
        """Fail the request being waited for now (safe from any thread), e.g. on Ctrl-C."""
        self._interrupted = ServerExited(reason, stderr_tail=self.stderr_tail())
        try:
            self._inbox.put_nowait(
                (time.monotonic(), None, self._interrupted)
            )  # wakes a waiting receive()
        except queue.Full:
            pass  # receive() returns at once anyway: the inbox is not empty

    def _deliver(self, item: object, stamp: object = None) -> None:
        """Queue one item for the session; waits while the inbox is full, gives up once closed.
        ``stamp``: where the item stood in the transport's streams, for ``arrived_before``."""
        stamped = (time.monotonic(), stamp, item)
        while True:
            try:
                self._inbox.put(stamped, timeout=0.5)
                return
            except queue.Full:
                if self._closed:
                    return

    def _deliver_text(
        self, text: str | Oversize, source: str = "stdout", stamp: object = None
    ) -> None:
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
        except (IntegerOverCap, NotJsonNumber) as exc:  # a number we cannot keep as it is
            self._deliver(
                ProtocolError(exc.at(source), detail=stripped[:200], stderr_tail=self.stderr_tail())
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
        self._deliver(message, stamp)

    def _record_noise(self, line: str) -> None:
        if len(self.noise) < NOISE_KEEP:
            self.noise.append(Noise(line[:NOISE_LINE_MAX], time.monotonic() - self.started_at))

    def _fail(self, error: WireError) -> None:
        self._deliver(error)
