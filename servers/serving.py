"""Serving a reference server over stdio, Streamable HTTP or legacy HTTP+SSE: shared by memory,
gateway and billing.

Over HTTP the socket is bound first (port 0 resolves to a real port) and one line,
``MCP_MATRIX_LISTENING <url>``, is printed once uvicorn accepts connections (for ``sse`` the
URL is the GET stream, ``/sse``).

``gate_protocol`` narrows the SDK's dual-era serving to one era, as real servers do:
``modern-only`` refuses ``initialize`` with -32022 naming 2026-07-28 (what fastmcp >= 4 does,
claude-code#96183); ``legacy-only`` answers ``server/discover`` with -32601 and any other
request carrying the 2026-07-28 envelope with -32600, as a handshake-era server does.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any, NoReturn, TextIO

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from . import pipes

LISTENING_PREFIX = "MCP_MATRIX_LISTENING"
HTTP_PATH = "/mcp"
SSE_PATH = "/sse"
PROTOCOLS = ("both", "modern-only", "legacy-only")


def exit_now(code: int = 0) -> NoReturn:
    """End a server process that has finished serving, skipping the interpreter's teardown.

    Tearing down the SDK's modules (thousands of pydantic models) costs about 0.6 s of CPU, a
    third of what a stdio server process costs in all, paid again for every session a client
    opens. ``main`` has closed the backend and removed its temporary files by then, and the
    SDK flushes each message it writes, so only the interpreter's own cleanup is skipped."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the client closed the pipe, or it is closed already
            pass
    os._exit(code)


class _EraGate:
    """Server middleware that refuses the era a one-era server does not speak."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.request_id is not None:  # notifications pass
            if self.protocol == "modern-only" and ctx.method == "initialize":
                requested = (ctx.params or {}).get("protocolVersion")
                raise MCPError(
                    code=UNSUPPORTED_PROTOCOL_VERSION,
                    message="this server speaks only the 2026-07-28 protocol; the initialize handshake is not accepted",
                    data={
                        "supported": list(MODERN_PROTOCOL_VERSIONS),
                        "requested": requested if isinstance(requested, str) else "",
                    },
                )
            if (
                self.protocol == "legacy-only"
                and ctx.method != "initialize"
                and (
                    ctx.method == "server/discover"
                    or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
                )
            ):
                if ctx.method == "server/discover":
                    raise MCPError(code=METHOD_NOT_FOUND, message="Method not found")
                raise MCPError(
                    code=INVALID_REQUEST,
                    message="Invalid request: send initialize first "
                    f"(this server speaks {', '.join(HANDSHAKE_PROTOCOL_VERSIONS)})",
                )
        return await call_next(ctx)


def gate_protocol(server: Server[Any], protocol: str) -> Server[Any]:
    """Serve only the era ``protocol`` names (``both``: the SDK's dual-era default)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if protocol != "both":
        server.middleware.insert(0, _EraGate(protocol))
    return server


async def serve_stdio(server: Server[Any], protocol: str = "both") -> None:
    """Serve one client on stdin/stdout; fd 1 is diverted so only protocol reaches it. Pipes are
    read and written by the event loop (``pipes``), anything else by the SDK's worker threads."""
    if not pipes.usable():
        async with stdio_server() as (read_stream, write_stream):
            await serve_streams(server, read_stream, write_stream, protocol)
        return
    with pipes.diverted() as (wire_in, wire_out):
        stdin, stdout = pipes.streams(wire_in, wire_out)
        async with stdio_server(stdin, stdout) as (read_stream, write_stream):
            await serve_streams(server, read_stream, write_stream, protocol)


async def serve_streams(
    server: Server[Any], read_stream: Any, write_stream: Any, protocol: str = "both"
) -> None:
    """One connection: the SDK's dual-era loop, or its handshake-only loop for ``legacy-only``
    (a handshake-era server never locks a connection to 2026-07-28, so ``initialize`` after a
    refused ``server/discover`` still works, as the spec's stdio fallback expects)."""
    if protocol != "legacy-only":
        await server.run(read_stream, write_stream, server.create_initialization_options())
        return
    async with server.lifespan(server) as state:
        await serve_loop(
            server,
            read_stream,
            write_stream,
            lifespan_state=state,
            init_options=server.create_initialization_options(),
        )


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


async def serve_sse(
    server: Server[Any],
    host: str = "127.0.0.1",
    port: int = 0,
    out: TextIO = sys.stdout,
    protocol: str = "both",
) -> None:
    """Serve the legacy HTTP+SSE transport (2024-11-05): GET ``/sse``, POST ``/messages/``."""
    sock = bind_socket(host, port)
    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await serve_streams(server, read, write, protocol)
        return Response()

    app = Starlette(
        routes=[
            Route(SSE_PATH, endpoint=handle_sse, methods=["GET"]),
            Mount("/messages/", app=sse.handle_post_message),
        ]
    )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    url = listening_url(sock).removesuffix(HTTP_PATH) + SSE_PATH
    uv = _AnnouncingServer(config, f"{LISTENING_PREFIX} {url}", out)
    try:
        await uv.serve(sockets=[sock])
    finally:
        sock.close()
