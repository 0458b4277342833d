"""A bundled server started on 127.0.0.1 over Streamable HTTP or legacy HTTP+SSE for a run.

Apart from ``mcp_matrix.targets`` because it needs httpx (``mcp_matrix.wire.http``): a run against a
stdio server never imports it.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from typing import Any

from mcp_matrix.wire.errors import ServerExited, WireTimeout
from mcp_matrix.wire.http import HttpTransport
from mcp_matrix.wire.sse import SseTransport
from mcp_matrix.wire.stdio import StdioTransport, interrupt_held
from mcp_matrix.wire.transport import Transport

LISTENING = "MCP_MATRIX_LISTENING "


def bundled_http_server(argv: list[str], transport: str, connect_timeout: float) -> Transport:
    """The bundled server ``argv`` started with ``--transport`` ``http`` or ``sse``, not yet started."""
    cls = BundledHttpServer if transport == "http" else BundledSseServer
    return cls(argv + ["--transport", transport, "--port", "0"], connect_timeout)


def _start_listening(argv: list[str], connect_timeout: float, holder: Any) -> str:
    """Start a bundled server that prints ``MCP_MATRIX_LISTENING <url>``; the URL it listens on.

    The process is kept on ``holder._proc`` before Ctrl-C can end this, so ``close`` ends it."""
    with interrupt_held():  # the handle is kept before Ctrl-C can end start()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        holder._proc = proc
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout
        for raw in proc.stdout:
            lines.put(raw.decode("utf-8", errors="replace"))
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    threading.Thread(target=lambda: proc.stderr and proc.stderr.read(), daemon=True).start()
    try:
        while True:
            line = lines.get(timeout=connect_timeout)
            if not line:
                raise ServerExited(
                    f"the bundled server exited before listening (code {proc.wait()})"
                )
            if line.startswith(LISTENING):
                return line[len(LISTENING) :].strip()
    except queue.Empty:
        holder.close()
        raise WireTimeout(
            f"the bundled server did not listen within {connect_timeout:.0f}s"
        ) from None


def _end_process(holder: Any) -> None:
    proc = getattr(holder, "_proc", None)
    if proc and proc.poll() is None:
        StdioTransport._signal(proc, 15)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            StdioTransport._signal(proc, 9)
            proc.wait(timeout=3)


class BundledHttpServer(HttpTransport):
    """A bundled server started over Streamable HTTP on 127.0.0.1 for the run."""

    name = "http"

    def __init__(self, argv: list[str], connect_timeout: float) -> None:
        self.argv = argv
        self.connect_timeout = connect_timeout
        super().__init__("http://127.0.0.1:0/mcp")

    def start(self) -> None:
        if getattr(self, "_proc", None) is not None:  # idempotent, like every transport
            return
        self.url = _start_listening(self.argv, self.connect_timeout, self)

    def close(self) -> None:
        with interrupt_held():  # Ctrl-C or SIGTERM while closing must not leave the server running
            self._close_server()

    def _close_server(self) -> None:
        super().close()
        _end_process(self)

    def describe(self) -> dict:
        return {"transport": "http", "url": self.url, "bundled": True}


class BundledSseServer(SseTransport):
    """A bundled server started on the legacy HTTP+SSE transport on 127.0.0.1 for the run."""

    def __init__(self, argv: list[str], connect_timeout: float) -> None:
        self.argv = argv
        super().__init__("http://127.0.0.1:0/sse", connect_timeout=connect_timeout)

    def start(self) -> None:
        if getattr(self, "_proc", None) is not None:
            return
        self.url = _start_listening(self.argv, self.connect_timeout, self)
        super().start()

    def close(self) -> None:
        super().close()
        _end_process(self)

    def describe(self) -> dict:
        return {"transport": "sse", "url": self.url, "bundled": True}
