"""An MCP client session over any transport: initialize, tools/list, tools/call, ping.

It sends exactly what it is given (no validation, no coercion: a client profile's mangled
arguments must reach the server as a real client would send them) and reads until the
answer with the matching id, recording everything else the server says on the way:
notifications (e.g. ``notifications/tools/list_changed``), server-to-client requests
(answered with a JSON-RPC error unless the session declared the capability), responses
with ids nobody asked for, and stdout noise. Transport failures raise ``WireError``;
JSON-RPC error responses come back as ``RpcError`` values.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from matrix.wire.errors import Problems, ProtocolError, RpcError, WireError, WireTimeout
from matrix.wire.limits import MAX_RECORDED
from matrix.wire.transport import Transport

LATEST_PROTOCOL = "2025-11-25"


@dataclass(frozen=True)
class Timeouts:
    """Every wait is bounded (seconds). Defaults are documented in docs/wire.md."""

    initialize: float = 10.0  # Codex's own startup bound is 10 s (client-quirks.md §4)
    list: float = 10.0
    call: float = 30.0
    ping: float = 5.0
    shutdown: float = 2.0


@dataclass(frozen=True)
class Response:
    """The answer to one request: ``result`` or ``error``, and how long it took."""

    result: Any = None
    error: RpcError | None = None
    elapsed: float = 0.0


@dataclass(frozen=True)
class InitializeResult:
    protocol_version: Any
    server_info: Any
    capabilities: Any
    instructions: Any
    raw: Any
    elapsed: float


@dataclass(frozen=True)
class Page:
    index: int
    cursor: Any
    next_cursor: Any
    tools: tuple[Any, ...]
    elapsed: float


@dataclass(frozen=True)
class ToolListing:
    """Every page read, and why reading stopped if it stopped early."""

    pages: tuple[Page, ...]
    error: RpcError | None = None
    stopped: str = ""  # "", "page-cap", "repeated-cursor", "malformed"

    @property
    def tools(self) -> list[tuple[int, Any]]:
        return [(p.index, t) for p in self.pages for t in p.tools]


@dataclass
class Session:
    transport: Transport
    client_info: Mapping[str, Any] = field(default_factory=lambda: {"name": "mcp-matrix", "version": "0"})
    protocol_version: str = LATEST_PROTOCOL
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    timeouts: Timeouts = field(default_factory=Timeouts)
    notifications: list[dict] = field(default_factory=list)
    server_requests: list[dict] = field(default_factory=list)
    problems: Problems = field(default_factory=Problems)
    initialized: InitializeResult | None = None

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._stray_ids: list[Any] = []  # ids of responses nobody asked for, during the current request
        self._sent_at = 0.0  # when the current request was handed to the transport
        self.dropped = 0  # notifications and server requests over MAX_RECORDED, counted only

    # -- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> "Session":
        self.transport.start()  # idempotent: Target.open() already started it
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()

    # -- operations -----------------------------------------------------------------
    def initialize(self) -> InitializeResult:
        """``initialize`` then ``notifications/initialized``; raises if the server refuses."""
        params = {
            "protocolVersion": self.protocol_version,
            "capabilities": dict(self.capabilities),
            "clientInfo": dict(self.client_info),
        }
        response = self.request("initialize", params, self.timeouts.initialize)
        if response.error is not None:
            raise ProtocolError(
                f"initialize was refused: {response.error.code} {response.error.message}",
                stderr_tail=self.transport.stderr_tail(),
            )
        result = response.result if isinstance(response.result, dict) else {}
        if not isinstance(response.result, dict):
            self.problems.add("malformed-initialize", "initialize result is not an object")
        negotiated = result.get("protocolVersion")
        if isinstance(negotiated, str) and hasattr(self.transport, "protocol_version"):
            self.transport.protocol_version = negotiated  # type: ignore[attr-defined]
        self.notify("notifications/initialized")
        self.initialized = InitializeResult(
            protocol_version=negotiated,
            server_info=result.get("serverInfo"),
            capabilities=result.get("capabilities"),
            instructions=result.get("instructions"),
            raw=response.result,
            elapsed=response.elapsed,
        )
        return self.initialized

    def list_tools(self, page_cap: int = 100, first_page_only: bool = False) -> ToolListing:
        """Follow ``nextCursor`` page by page, guarding against caps and repeated cursors."""
        pages: list[Page] = []
        seen: set[str] = set()
        cursor: Any = None
        while True:
            params = {} if cursor is None else {"cursor": cursor}
            response = self.request("tools/list", params, self.timeouts.list)
            if response.error is not None:
                return ToolListing(tuple(pages), error=response.error)
            result = response.result
            tools = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(tools, list):
                self.problems.add("malformed-tools-list", "tools/list result has no 'tools' array", page=len(pages))
                return ToolListing(tuple(pages), stopped="malformed")
            next_cursor = result.get("nextCursor")
            pages.append(Page(len(pages), cursor, next_cursor, tuple(tools), response.elapsed))
            if next_cursor is None or first_page_only:
                return ToolListing(tuple(pages))
            key = repr(next_cursor)
            if key in seen or next_cursor == cursor:
                self.problems.add("repeated-cursor", f"nextCursor {next_cursor!r} was already followed")
                return ToolListing(tuple(pages), stopped="repeated-cursor")
            if len(pages) >= page_cap:
                self.problems.add("page-cap", f"stopped after {page_cap} pages of tools/list")
                return ToolListing(tuple(pages), stopped="page-cap")
            seen.add(key)
            cursor = next_cursor

    def call_tool(self, name: str, arguments: Any = None, meta: Mapping[str, Any] | None = None,
                  omit_arguments: bool = False, timeout: float | None = None) -> Response:
        """``tools/call`` with ``arguments`` sent exactly as given (``omit_arguments`` leaves the key out)."""
        params: dict[str, Any] = {"name": name}
        if not omit_arguments:
            params["arguments"] = arguments
        if meta is not None:
            params["_meta"] = dict(meta)
        return self.request("tools/call", params, self.timeouts.call if timeout is None else timeout)

    def ping(self) -> Response:
        return self.request("ping", {}, self.timeouts.ping)

    # -- JSON-RPC ---------------------------------------------------------------------
    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.transport.send(message)

    def request(self, method: str, params: Any, timeout: float) -> Response:
        """Send one request and wait (bounded) for its answer, handling all else that arrives."""
        request_id = next(self._ids)
        started = time.monotonic()
        deadline = started + timeout
        self._stray_ids = []
        self._sent_at = time.monotonic()
        self.transport.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise WireTimeout("")
                item = self.transport.receive(remaining)
            except WireTimeout:
                raise WireTimeout(
                    f"{method} got no answer within {timeout:.1f}s{self._stray_note(request_id)}",
                    stderr_tail=self.transport.stderr_tail(),
                ) from None
            if isinstance(item, WireError):
                raise item
            for message in item if isinstance(item, list) else [item]:
                answer = self._handle(message, request_id)
                if answer is not None:
                    return Response(answer.result, answer.error, time.monotonic() - started)

    def _handle(self, message: Any, request_id: int) -> Response | None:
        if not isinstance(message, dict):
            self.problems.add("malformed-message", f"not a JSON-RPC object: {str(message)[:200]}")
            return None
        if "method" in message:
            if "id" in message:
                self._answer_server_request(message)
            elif len(self.notifications) < MAX_RECORDED:
                self.notifications.append(
                    {"method": message.get("method"), "params": message.get("params"), "before_request": request_id}
                )
            else:
                self.dropped += 1
            return None
        if "id" not in message:
            self.problems.add("malformed-message", f"neither request, notification nor response: {str(message)[:200]}")
            return None
        if not same_id(message.get("id"), request_id):
            self.problems.add(
                "unexpected-id", f"response with id {message.get('id')!r} while waiting for {request_id}"
            )
            if len(self._stray_ids) < 5:
                self._stray_ids.append(message.get("id"))
            return None
        if getattr(self.transport, "received_at", self._sent_at) < self._sent_at:
            self.problems.add(
                "response-before-request", f"a response with id {request_id} arrived before request {request_id} was sent"
            )
            return None
        if "error" in message:
            return Response(error=RpcError.from_message(message["error"]))
        if "result" not in message:
            raise ProtocolError(
                f"response {request_id} has neither result nor error", detail=str(message)[:200],
                stderr_tail=self.transport.stderr_tail(),
            )
        return Response(result=message["result"])

    def _stray_note(self, request_id: int) -> str:
        """Why a timeout happened when the server did answer, but with the wrong id."""
        if not self._stray_ids:
            return ""
        ids = ", ".join(repr(i)[:40] for i in self._stray_ids)
        return f"; a response with id {ids} arrived instead of id {request_id} (the server answered with the wrong id)"

    def _answer_server_request(self, message: dict) -> None:
        method = message.get("method")
        if len(self.server_requests) < MAX_RECORDED:
            self.server_requests.append({"method": method, "id": message.get("id")})
        else:
            self.dropped += 1
        capability = {"roots/list": "roots", "sampling/createMessage": "sampling",
                      "elicitation/create": "elicitation"}.get(str(method))
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
        if method == "ping":
            reply["result"] = {}
        elif capability and capability in self.capabilities:
            reply["result"] = {"roots": []} if capability == "roots" else None
            if capability == "elicitation":
                reply["result"] = {"action": "decline"}
            if reply["result"] is None:
                reply.pop("result")
                reply["error"] = {"code": -32603, "message": "mcp-matrix does not sample"}
        else:
            reply["error"] = {"code": -32601, "message": f"client does not support {method}"}
        try:
            self.transport.send(reply)
        except WireError:
            self.problems.add("reply-failed", f"could not answer the server's {method} request")


def same_id(got: Any, wanted: int) -> bool:
    """Whether ``got`` is the id ``wanted`` as a JSON client compares them: the same number
    (``1`` or ``1.0``), never ``true`` (which Python's ``True == 1`` would accept)."""
    return isinstance(got, (int, float)) and not isinstance(got, bool) and got == wanted
