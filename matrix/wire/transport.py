"""The transport seam: something that sends JSON-RPC messages and yields what the server says.

A transport knows nothing of MCP. ``send`` writes one message; ``receive`` returns the next
item from the server within a timeout: a decoded message (dict or list), or a ``WireError``
value when the transport itself failed (the session raises it for the pending request).
Stdout noise and stderr are collected on the side for reports.
"""

from __future__ import annotations

import json
import queue
import time
from typing import Any

from matrix.wire.errors import Noise, ProtocolError, ServerExited, WireError, WireTimeout

NOISE_KEEP = 200
NOISE_LINE_MAX = 500


class Transport:
    """Base: a thread-safe inbox fed by reader threads; subclasses implement I/O."""

    name = "transport"

    def __init__(self) -> None:
        self._inbox: queue.Queue[Any] = queue.Queue()
        self.noise: list[Noise] = []
        self.started_at = time.monotonic()

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
        try:
            return self._inbox.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            raise WireTimeout(
                f"no message from the server within {timeout:.1f}s", stderr_tail=self.stderr_tail()
            ) from None

    def interrupt(self, reason: str) -> None:
        """Fail the request being waited for now (safe from any thread), e.g. on Ctrl-C."""
        self._fail(ServerExited(reason, stderr_tail=self.stderr_tail()))

    def _deliver(self, item: Any) -> None:
        self._inbox.put(item)

    def _deliver_text(self, text: str, source: str = "stdout") -> None:
        """Decode one framed message; undecodable text becomes noise or a protocol problem."""
        stripped = text.strip()
        if not stripped:
            return
        try:
            message = json.loads(stripped)
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
