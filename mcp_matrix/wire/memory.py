"""An in-process transport: JSON-RPC text to a handler function and back, no process, no socket.

For pure protocol edge cases (ids, framing, pagination, error objects) the same ``Session`` code
runs against a sans-I/O server handler, so those tests need no subprocess. Where the process
boundary is the point (crashes, stderr, pipes held open, signals), tests use stdio or HTTP.

The handler gets each message as the exact text a stdio server would read and returns steps:
``("line", text)`` writes one line (decoded like stdout, so invalid JSON and noise behave as they
do over stdio), ``("sleep", seconds)`` waits, ``("hang", None)`` never answers, and
``("exit", reason)`` ends the "server" (the pending request fails with ``ServerExited``).
Steps run on one worker thread in order, as a single-threaded server would.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterable

from mcp_matrix.wire.errors import ServerExited
from mcp_matrix.wire.transport import Transport

Step = tuple[str, object]
Handler = Callable[[str], Iterable[Step]]

_STOP = object()


class InMemoryTransport(Transport):
    """Feeds ``handler`` on a worker thread; what it writes arrives through the shared inbox."""

    name = "memory"

    def __init__(self, handler: Handler) -> None:
        super().__init__()
        self._handler = handler
        self._work: queue.Queue[object] = queue.Queue()
        self._thread: threading.Thread | None = None
        # Not the base's ``_closed`` flag: an Event there is always true, and the base then
        # drops messages instead of waiting while the inbox is full.
        self._stopped = threading.Event()
        self._exit_reason: str | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="memory-server", daemon=True)
            self._thread.start()

    def send(self, message: dict) -> None:
        if self._exit_reason is not None or self._stopped.is_set():
            raise ServerExited(self._exit_reason or "the in-memory server is closed")
        self._work.put(json.dumps(message, ensure_ascii=False, separators=(",", ":")))

    def close(self) -> None:
        self._closed = True
        self._stopped.set()
        self._work.put(_STOP)
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def _serve(self) -> None:
        while True:
            text = self._work.get()
            if text is _STOP:
                return
            for kind, value in self._handler(str(text)):
                if self._stopped.is_set():
                    return
                if kind == "line":
                    self._deliver_text(str(value))
                elif kind == "sleep":
                    self._stopped.wait(float(value))  # type: ignore[arg-type]
                elif kind == "hang":
                    break
                elif kind == "exit":
                    self._exit_reason = f"the in-memory server exited: {value}"
                    self._fail(ServerExited(self._exit_reason))
                    return
                else:
                    raise ValueError(f"unknown step {kind!r}")
