"""A bundled server started on 127.0.0.1 over Streamable HTTP or legacy HTTP+SSE for a run.

Apart from ``mcp_matrix.targets.kinds`` because it needs httpx (``mcp_matrix.wire.http``): a run against a
stdio server never imports it.
"""

from __future__ import annotations

import queue
import subprocess
import threading

from mcp_matrix.wire import waits
from mcp_matrix.wire.errors import ServerExited, WireTimeout
from mcp_matrix.wire.http import HttpTransport
from mcp_matrix.wire.process import ServerProcess, interrupt_held
from mcp_matrix.wire.sse import SseTransport
from mcp_matrix.wire.transport import Transport

LISTENING = "MCP_MATRIX_LISTENING "


def bundled_http_server(argv: list[str], transport: str, connect_timeout: float) -> Transport:
    """The bundled server ``argv`` started with ``--transport`` ``http`` or ``sse``, not yet started."""
    cls = BundledHttpServer if transport == "http" else BundledSseServer
    return cls(argv + ["--transport", transport, "--port", "0"], connect_timeout)


def _start_listening(process: ServerProcess, connect_timeout: float) -> str:
    """Start a bundled server that prints ``MCP_MATRIX_LISTENING <url>``; the URL it listens on.

    Its stderr is kept (``ServerProcess``): a server that exits before listening says why."""
    proc = process.start()
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", errors="replace"))
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    try:
        while True:
            line = waits.get(lines, connect_timeout)
            if not line:
                code = proc.wait()
                process.stderr_read(timeout=1.0)
                raise ServerExited(
                    f"the bundled server exited before listening (code {code})",
                    stderr_tail=process.stderr_tail(),
                )
            if line.startswith(LISTENING):
                return line[len(LISTENING) :].strip()
    except queue.Empty:
        process.end()
        raise WireTimeout(
            f"the bundled server did not listen within {connect_timeout:.0f}s",
            stderr_tail=process.stderr_tail(),
        ) from None


def _process(argv: list[str]) -> ServerProcess:
    return ServerProcess(argv, stdout=subprocess.PIPE)


class BundledHttpServer(HttpTransport):
    """A bundled server started over Streamable HTTP on 127.0.0.1 for the run."""

    name = "http"

    def __init__(self, argv: list[str], connect_timeout: float) -> None:
        self.argv = argv
        self.connect_timeout = connect_timeout
        super().__init__("http://127.0.0.1:0/mcp")
        self.process = _process(argv)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def start(self) -> None:
        if self.process.popen is not None:  # idempotent, like every transport
            return
        self.url = _start_listening(self.process, self.connect_timeout)

    def stderr_tail(self, lines: int = 20) -> tuple[str, ...]:
        return self.process.stderr_tail(lines)

    def close(self) -> None:
        with interrupt_held():  # Ctrl-C or SIGTERM while closing must not leave the server running
            self._close_server()

    def _close_server(self) -> None:
        super().close()
        self.process.end()

    def describe(self) -> dict:
        return {"transport": "http", "url": self.url, "bundled": True}


class BundledSseServer(SseTransport):
    """A bundled server started on the legacy HTTP+SSE transport on 127.0.0.1 for the run."""

    def __init__(self, argv: list[str], connect_timeout: float) -> None:
        self.argv = argv
        super().__init__("http://127.0.0.1:0/sse", connect_timeout=connect_timeout)
        self.process = _process(argv)

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def start(self) -> None:
        if self.process.popen is not None:
            return
        self.url = _start_listening(self.process, self.connect_timeout)
        super().start()

    def stderr_tail(self, lines: int = 20) -> tuple[str, ...]:
        return self.process.stderr_tail(lines)

    def close(self) -> None:
        with interrupt_held():  # Ctrl-C or SIGTERM while closing must not leave the server running
            super().close()
            self.process.end()

    def describe(self) -> dict:
        return {"transport": "sse", "url": self.url, "bundled": True}
