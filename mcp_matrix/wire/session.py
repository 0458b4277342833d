"""An MCP client session over any transport, in either protocol era.

- The handshake era (2024-11-05 .. 2025-11-25): ``initialize`` then ``notifications/initialized``.
- The stateless era (2026-07-28): no handshake; every request carries the protocol version,
  client capabilities and client identity in ``params._meta`` (``envelope()``); ``discover()``
  asks ``server/discover``; list results carry ``ttlMs``/``cacheScope``; a ``tools/call``
  answered ``resultType: input_required`` is retried with ``inputResponses`` (multi round-trip,
  bounded by ``MAX_INPUT_ROUNDS``) instead of the server sending requests; ``listen()`` opens
  ``subscriptions/listen`` and waits (bounded) for its acknowledgement.
  https://modelcontextprotocol.io/specification/2026-07-28/changelog

It sends exactly what it is given (no validation, no coercion: a client profile's mangled
arguments must reach the server as a real client would send them) and reads until the
answer with the matching id, recording everything else the server says on the way:
notifications (e.g. ``notifications/tools/list_changed``), server-to-client requests
(answered with a JSON-RPC error unless the session declared the capability), responses
with ids nobody asked for, and stdout noise. Transport failures raise ``WireError``;
JSON-RPC error responses come back as ``RpcError`` values.

What a server says about itself (the ``initialize`` and ``server/discover`` results, error
objects, notification parameters) is kept only up to a bound per field (``wire.echo``); tools
and call results are kept exactly as sent. The answers are values of ``wire.answers``; what the
client replies to the server's own requests is ``wire.server_requests``'; the versions and
``_meta`` keys are ``wire.versions``'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp_matrix.wire.answers import (
    DiscoverResult,
    InitializeResult,
    Listen,
    Page,
    Response,
    ToolListing,
)
from mcp_matrix.wire.echo import bounded, short
from mcp_matrix.wire.errors import ProtocolError, WireTimeout
from mcp_matrix.wire.rpc import RpcEndpoint, Timeouts
from mcp_matrix.wire.server_requests import input_answer, input_required, retry
from mcp_matrix.wire.versions import (
    LATEST_PROTOCOL,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_VERSION,
    MODERN_PROTOCOL,
)

# The names callers take from here (the session's own, and the values it answers with).
__all__ = [
    "LATEST_PROTOCOL",
    "MAX_INPUT_ROUNDS",
    "MODERN_PROTOCOL",
    "Response",
    "Session",
    "Timeouts",
]

MAX_INPUT_ROUNDS = 4  # multi round-trip retries of one call before we stop answering


@dataclass
class Session(RpcEndpoint):
    """An MCP client session: the handshake or the stateless era, and the operations of either."""

    client_info: Mapping[str, object] = field(
        default_factory=lambda: {"name": "mcp-matrix", "version": "0"}
    )
    protocol_version: str = LATEST_PROTOCOL
    initialized: InitializeResult | None = None
    era: str = "handshake"  # "handshake" (initialize) or "modern" (per-request _meta, 2026-07-28)
    modern_version: str = MODERN_PROTOCOL
    discovered: DiscoverResult | None = None
    # multi round-trip requests the server made
    input_requests: list[dict] = field(default_factory=list)

    # -- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> Session:
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
        return self.adopt_handshake(response, result.get("protocolVersion"))

    def adopt_handshake(self, response: Response, negotiated: object) -> InitializeResult:
        """Finish the handshake ``initialize`` answered: headers, ``notifications/initialized``."""
        self.era = "handshake"
        result = response.result if isinstance(response.result, dict) else {}
        if not isinstance(response.result, dict):
            self.problems.add("malformed-initialize", "initialize result is not an object")
        if isinstance(negotiated, str) and hasattr(self.transport, "protocol_version"):
            self.transport.protocol_version = negotiated  # type: ignore[attr-defined]
        if hasattr(self.transport, "modern"):
            self.transport.modern = False  # type: ignore[attr-defined]
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

    def envelope(self, version: str | None = None) -> dict[str, object]:
        """The per-request ``_meta`` of the stateless era: protocol version, capabilities, identity."""
        return {
            META_VERSION: version or self.modern_version,
            META_CAPABILITIES: dict(self.capabilities),
            META_CLIENT_INFO: dict(self.client_info),
        }

    def discover(self, version: str | None = None) -> Response:
        """``server/discover`` with the envelope (whatever the era); the answer is a value."""
        params = {"_meta": self.envelope(version)}
        before = self._transport_era()
        self._set_transport_era(
            version or self.modern_version, True
        )  # HTTP: the 2026-07-28 headers
        try:
            response = self._exchange("server/discover", params, self.timeouts.initialize)
        finally:
            if self.era != "modern":
                self._set_transport_era(*before)
        if response.error is None:
            self.discovered = DiscoverResult.from_result(response.result, response.elapsed)
        return response

    def adopt_modern(self, version: str | None = None) -> None:
        """From now on every request carries the envelope; HTTP sends the 2026-07-28 headers."""
        self.era = "modern"
        self.modern_version = version or self.modern_version
        self._set_transport_era(self.modern_version, True)

    def _transport_era(self) -> tuple[object, bool]:
        return getattr(self.transport, "protocol_version", None), bool(
            getattr(self.transport, "modern", False)
        )

    def _set_transport_era(self, version: object, modern: bool) -> None:
        """What an HTTP transport puts in its headers (other transports have no such state)."""
        if hasattr(self.transport, "protocol_version"):
            self.transport.protocol_version = version  # type: ignore[attr-defined]
        if hasattr(self.transport, "modern"):
            self.transport.modern = modern  # type: ignore[attr-defined]

    def listen(self, notifications: Mapping[str, object], timeout: float | None = None) -> Listen:
        """Open ``subscriptions/listen`` and wait (bounded) for its acknowledgement.

        The stream stays open until the session closes; its eventual answer is expected, not a problem.
        """
        request_id = next(self._ids)
        self._open_ids.add(request_id)
        params = {"_meta": self.envelope(), "notifications": dict(notifications)}
        found: list[object] = []

        def acknowledged(message: dict) -> bool:
            if message.get("method") == "notifications/subscriptions/acknowledged":
                p = message.get("params")
                found.append(bounded(p.get("notifications")) if isinstance(p, dict) else None)
                return True
            return False

        try:
            answer = self._wait(
                request_id,
                "subscriptions/listen",
                params,
                self.timeouts.ping if timeout is None else timeout,
                until=acknowledged,
            )
        except WireTimeout:
            return Listen()
        if answer is None:
            return Listen(acknowledged=found[0] if found else None)
        return Listen(error=answer.error, ended=True)

    def list_tools(self, page_cap: int = 100, first_page_only: bool = False) -> ToolListing:
        """Follow ``nextCursor`` page by page, guarding against caps and repeated cursors."""
        pages: list[Page] = []
        seen: set[str] = set()
        cursor: object = None
        while True:
            params = {} if cursor is None else {"cursor": cursor}
            response = self.request("tools/list", params, self.timeouts.list)
            if response.error is not None:
                return ToolListing(tuple(pages), error=response.error)
            result = response.result
            tools = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(tools, list):
                self.problems.add(
                    "malformed-tools-list",
                    "tools/list result has no 'tools' array",
                    page=len(pages),
                )
                return ToolListing(tuple(pages), stopped="malformed")
            next_cursor = result.get("nextCursor")
            pages.append(
                Page(
                    len(pages),
                    cursor,
                    next_cursor,
                    tuple(tools),
                    response.elapsed,
                    result.get("ttlMs"),
                    result.get("cacheScope"),
                )
            )
            if next_cursor is None or first_page_only:
                return ToolListing(tuple(pages))
            key = repr(next_cursor)
            if key in seen or next_cursor == cursor:
                self.problems.add(
                    "repeated-cursor", f"nextCursor {short(next_cursor)} was already followed"
                )
                return ToolListing(tuple(pages), stopped="repeated-cursor")
            if len(pages) >= page_cap:
                self.problems.add("page-cap", f"stopped after {page_cap} pages of tools/list")
                return ToolListing(tuple(pages), stopped="page-cap")
            seen.add(key)
            cursor = next_cursor

    def call_tool(
        self,
        name: str,
        arguments: object = None,
        meta: Mapping[str, object] | None = None,
        omit_arguments: bool = False,
        timeout: float | None = None,
    ) -> Response:
        """``tools/call`` with ``arguments`` sent exactly as given (``omit_arguments`` leaves the key out)."""
        params: dict[str, object] = {"name": name}
        if not omit_arguments:
            params["arguments"] = arguments
        if meta is not None:
            params["_meta"] = dict(meta)
        timeout = self.timeouts.call if timeout is None else timeout
        response = self.request("tools/call", params, timeout)
        for _ in range(MAX_INPUT_ROUNDS):
            if self.era != "modern" or not input_required(response.result):
                break
            again = self._answer_input(params, response.result)
            if again is None:  # a request we cannot fulfil: the input_required result is the answer
                break
            response = self.request("tools/call", again, timeout)
        else:
            if input_required(response.result):
                self.problems.add(
                    "input-rounds", f"tools/call still needed input after {MAX_INPUT_ROUNDS} rounds"
                )
        return response

    def ping(self) -> Response:
        return self.request("ping", {}, self.timeouts.ping)

    # -- JSON-RPC ---------------------------------------------------------------------
    def begin_handshake(self) -> None:
        """Before ``initialize``: no 2026-07-28 headers (an HTTP server would route it modern)."""
        self.era = "handshake"
        self._set_transport_era(None, False)

    def request(self, method: str, params: object, timeout: float) -> Response:
        """Send one request and wait (bounded) for its answer, handling all else that arrives.

        In the stateless era the envelope is merged into ``params._meta`` (the caller's own
        ``_meta`` keys follow it), except for ``initialize``, which has no envelope."""
        if (
            self.era == "modern"
            and method != "initialize"
            and (params is None or isinstance(params, dict))
        ):
            params = dict(params or {})
            own = params.get("_meta")
            params["_meta"] = {**self.envelope(), **(own if isinstance(own, dict) else {})}
        return self._exchange(method, params, timeout)

    def _answer_input(self, params: dict, result: dict) -> dict | None:
        """The retried call's params, answering each input request as a handshake-era client
        answers the same request (``server_requests``); None when one cannot be answered."""
        requests = result.get("inputRequests")
        responses: dict[str, object] = {}
        for key, req in requests.items() if isinstance(requests, dict) else ():
            method = req.get("method") if isinstance(req, dict) else None
            self.input_requests.append({"method": method, "key": key})
            answer = input_answer(str(method), self.capabilities)
            if answer is None:
                self.problems.add(
                    "input-unanswered",
                    f"the server asked for {method} input, which this client cannot give",
                )
                return None
            responses[key] = answer
        return retry(params, result, responses)
