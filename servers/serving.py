"""Serving a reference server over stdio or Streamable HTTP: shared by memory, gateway and billing.

Over HTTP the socket is bound first (port 0 resolves to a real port) and one line,
``MCP_MATRIX_LISTENING <url>``, is printed once uvicorn accepts connections.
"""

from __future__ import annotations

import socket
import sys
from typing import Any, TextIO

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LISTENING_PREFIX = "MCP_MATRIX_LISTENING"
HTTP_PATH = "/mcp"


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on stdin/stdout; the SDK diverts fd 1 so only protocol reaches it."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def bind_socket(host: str, port: int) -> socket.socket:
    """Bind (not yet listen) a TCP socket, so port 0 resolves to a real port up front."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    return sock


def listening_url(sock: socket.socket) -> str:
    """The URL a local client should use for the socket's real address."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}{HTTP_PATH}"


class _AnnouncingServer(uvicorn.Server):
    """uvicorn server that prints the listening line once it accepts connections."""

    def __init__(self, config: uvicorn.Config, line: str, out: TextIO) -> None:
        super().__init__(config)
        self._line = line
        self._out = out

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._out.write(self._line + "\n")
            self._out.flush()


async def serve_http(
    server: Server[Any], host: str = "127.0.0.1", port: int = 0, out: TextIO = sys.stdout
) -> None:
    """Serve Streamable HTTP at ``/mcp``; print ``MCP_MATRIX_LISTENING <url>`` when ready."""
    sock = bind_socket(host, port)
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uv = _AnnouncingServer(config, f"{LISTENING_PREFIX} {listening_url(sock)}", out)
    try:
        await uv.serve(sockets=[sock])
    finally:
        sock.close()
