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
objects, notification parameters) is kept only up to a bound per field (``bounded``): every
report echoes it, once per cell, and 1.5 MB of protocol versions became 144 MB of results.
Tools and call results are kept exactly as sent.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.wire.errors import Problems, ProtocolError, RpcError, WireError, WireTimeout
from mcp_matrix.wire.limits import MAX_RECORDED
from mcp_matrix.wire.transport import Transport

LATEST_PROTOCOL = "2025-11-25"  # the newest handshake-era version
MODERN_PROTOCOL = "2026-07-28"  # the stateless era (per-request _meta, no initialize)
HANDSHAKE_PROTOCOLS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_PROTOCOLS = (MODERN_PROTOCOL,)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28: data {supported: [...], requested}
MAX_INPUT_ROUNDS = 4  # multi round-trip retries of one call before we stop answering
# What one field a server sends about itself keeps (``bounded``, docs/security.md).
ECHO_CHARS = 8192  # characters in all, strings and keys
ECHO_STRING = 4096  # characters of one string
ECHO_ITEMS = 100  # items of one list, keys of one object
ECHO_DEPTH = 16  # levels of nesting
VERSION_LISTS = ("supportedVersions", "supported")  # lists of protocol versions, by key


@dataclass(frozen=True)
class Timeouts:
    """Every wait is bounded (seconds). Defaults are documented in docs/wire.md."""

    initialize: float = 10.0  # Codex's own startup bound is 10 s (docs/clients/openai.md#codex)
    list: float = 10.0
    call: float = 30.0
    ping: float = 5.0
    shutdown: float = 2.0
    # time.monotonic() by which every wait of the session ends whatever its own bound (the run's
    # deadline, mcp_matrix/run/bounds.py); None: no such end. Pages of tools/list each get ``list``
    # seconds, but all of them together end here.
    until: float | None = None


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
class DiscoverResult:
    """A ``server/discover`` answer (2026-07-28): versions, capabilities, identity, cache hints."""

    supported_versions: tuple[Any, ...]
    capabilities: Any
    server_info: Any
    instructions: Any
    ttl_ms: Any
    cache_scope: Any
    raw: Any
    elapsed: float

    @classmethod
    def from_result(cls, result: Any, elapsed: float) -> DiscoverResult:
        r = result if isinstance(result, dict) else {}
        versions = r.get("supportedVersions")
        sent = r.get("_meta")
        meta = sent if isinstance(sent, dict) else {}
        return cls(
            supported_versions=tuple(versions) if isinstance(versions, list) else (),
            capabilities=r.get("capabilities"),
            server_info=r.get("serverInfo", meta.get(META_SERVER_INFO)),
            instructions=r.get("instructions"),
            ttl_ms=r.get("ttlMs"),
            cache_scope=r.get("cacheScope"),
            raw=result,
            elapsed=elapsed,
        )


@dataclass(frozen=True)
class Listen:
    """What ``subscriptions/listen`` got: the acknowledged filter, or why not."""

    acknowledged: Any = None  # the ``notifications`` filter the server agreed to honour
    error: RpcError | None = None
    ended: bool = False  # the server answered the listen request (ended the stream) at once


@dataclass(frozen=True)
class Page:
    index: int
    cursor: Any
    next_cursor: Any
    tools: tuple[Any, ...]
    elapsed: float
    ttl_ms: Any = None  # 2026-07-28 cache hints, as sent (None when absent)
    cache_scope: Any = None


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
    client_info: Mapping[str, Any] = field(
        default_factory=lambda: {"name": "mcp-matrix", "version": "0"}
    )
    protocol_version: str = LATEST_PROTOCOL
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    timeouts: Timeouts = field(default_factory=Timeouts)
    notifications: list[dict] = field(default_factory=list)
    server_requests: list[dict] = field(default_factory=list)
    problems: Problems = field(default_factory=Problems)
    initialized: InitializeResult | None = None
    era: str = "handshake"  # "handshake" (initialize) or "modern" (per-request _meta, 2026-07-28)
    modern_version: str = MODERN_PROTOCOL
    discovered: DiscoverResult | None = None
    input_requests: list[dict] = field(
        default_factory=list
    )  # multi round-trip requests the server made

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._stray_ids: list[
            Any
        ] = []  # ids of responses nobody asked for, during the current request
        self._sent_at = 0.0  # when the current request was handed to the transport
        self.dropped = 0  # notifications and server requests over MAX_RECORDED, counted only
        self._open_ids: set[Any] = (
            set()
        )  # long-lived requests (subscriptions/listen) we no longer wait for

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

    def adopt_handshake(self, response: Response, negotiated: Any) -> InitializeResult:
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

    def envelope(self, version: str | None = None) -> dict[str, Any]:
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

    def _transport_era(self) -> tuple[Any, bool]:
        return getattr(self.transport, "protocol_version", None), bool(
            getattr(self.transport, "modern", False)
        )

    def _set_transport_era(self, version: Any, modern: bool) -> None:
        """What an HTTP transport puts in its headers (other transports have no such state)."""
        if hasattr(self.transport, "protocol_version"):
            self.transport.protocol_version = version  # type: ignore[attr-defined]
        if hasattr(self.transport, "modern"):
            self.transport.modern = modern  # type: ignore[attr-defined]

    def listen(self, notifications: Mapping[str, Any], timeout: float | None = None) -> Listen:
        """Open ``subscriptions/listen`` and wait (bounded) for its acknowledgement.

        The stream stays open until the session closes; its eventual answer is expected, not a problem.
        """
        request_id = next(self._ids)
        self._open_ids.add(request_id)
        params = {"_meta": self.envelope(), "notifications": dict(notifications)}
        found: list[Any] = []

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
        cursor: Any = None
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
                    "repeated-cursor", f"nextCursor {_short(next_cursor)} was already followed"
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
        arguments: Any = None,
        meta: Mapping[str, Any] | None = None,
        omit_arguments: bool = False,
        timeout: float | None = None,
    ) -> Response:
        """``tools/call`` with ``arguments`` sent exactly as given (``omit_arguments`` leaves the key out)."""
        params: dict[str, Any] = {"name": name}
        if not omit_arguments:
            params["arguments"] = arguments
        if meta is not None:
            params["_meta"] = dict(meta)
        timeout = self.timeouts.call if timeout is None else timeout
        response = self.request("tools/call", params, timeout)
        for _ in range(MAX_INPUT_ROUNDS):
            if self.era != "modern" or not _input_required(response.result):
                break
            retry = self._answer_input(params, response.result)
            if retry is None:  # a request we cannot fulfil: the input_required result is the answer
                break
            response = self.request("tools/call", retry, timeout)
        else:
            if _input_required(response.result):
                self.problems.add(
                    "input-rounds", f"tools/call still needed input after {MAX_INPUT_ROUNDS} rounds"
                )
        return response

    def ping(self) -> Response:
        return self.request("ping", {}, self.timeouts.ping)

    # -- JSON-RPC ---------------------------------------------------------------------
    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.transport.send(message)

    def begin_handshake(self) -> None:
        """Before ``initialize``: no 2026-07-28 headers (an HTTP server would route it modern)."""
        self.era = "handshake"
        self._set_transport_era(None, False)

    def request(self, method: str, params: Any, timeout: float) -> Response:
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

    def _exchange(self, method: str, params: Any, timeout: float) -> Response:
        request_id = next(self._ids)
        answer = self._wait(request_id, method, params, timeout)
        assert answer is not None  # no ``until``: only the answer ends the wait
        if method in ("initialize", "server/discover"):  # the server about itself: bounded
            return Response(bounded_fields(answer.result), answer.error, answer.elapsed)
        return answer

    def _wait(
        self, request_id: int, method: str, params: Any, timeout: float, until=None
    ) -> Response | None:
        """Send and read until the answer (or a message ``until`` accepts: then None), bounded."""
        started = time.monotonic()
        deadline = started + timeout
        ends = self.timeouts.until
        if ends is not None and ends < deadline:  # the run's deadline comes first
            deadline, timeout = ends, max(0.0, ends - started)
        self._stray_ids = []
        self._sent_at = time.monotonic()
        self.transport.send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise WireTimeout("")
                item = self.transport.receive(remaining)
            except WireTimeout:
                cut = " (the run's deadline)" if deadline == ends else ""
                slow = (
                    "; a server slow to start needs a longer --timeout-initialize"
                    if method == "initialize" and not cut
                    else ""
                )
                raise WireTimeout(
                    f"{method} got no answer within {timeout:.1f}s{cut}"
                    f"{self._stray_note(request_id)}{slow}",
                    stderr_tail=self.transport.stderr_tail(),
                ) from None
            if isinstance(item, WireError):
                raise item
            for message in item if isinstance(item, list) else [item]:
                if until is not None and isinstance(message, dict) and until(message):
                    return None
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
                    {
                        "method": bounded(message.get("method")),
                        "params": bounded(message.get("params")),
                        "before_request": request_id,
                    }
                )
            else:
                self.dropped += 1
            return None
        if "id" not in message:
            self.problems.add(
                "malformed-message",
                f"neither request, notification nor response: {str(message)[:200]}",
            )
            return None
        if not same_id(message.get("id"), request_id):
            if any(
                same_id(message.get("id"), i) for i in self._open_ids
            ):  # a listen stream ending: expected
                self._open_ids.discard(message.get("id"))
                return None
            self.problems.add(
                "unexpected-id",
                f"response with id {_short(message.get('id'))} while waiting for {request_id}",
            )
            if len(self._stray_ids) < 5:
                self._stray_ids.append(message.get("id"))
            return None
        if self.transport.arrived_before(request_id, self._sent_at):
            self.problems.add(
                "response-before-request",
                f"a response with id {request_id} was sent before request {request_id} was: "
                "ignored, not taken for its answer",
            )
            return None
        if "error" in message:
            return Response(error=RpcError.from_message(bounded_fields(message["error"])))
        if "result" not in message:
            raise ProtocolError(
                f"response {request_id} has neither result nor error",
                detail=str(message)[:200],
                stderr_tail=self.transport.stderr_tail(),
            )
        return Response(result=message["result"])

    def _stray_note(self, request_id: int) -> str:
        """Why a timeout happened although the server spoke: it answered with the wrong id, or
        it never read all of the request (stdio)."""
        unread = self.transport.unread_note(request_id)
        if not self._stray_ids:
            return unread
        ids = ", ".join(repr(i)[:40] for i in self._stray_ids)
        return f"; a response with id {ids} arrived instead of id {request_id} (the server answered with the wrong id){unread}"

    def _answer_input(self, params: dict, result: dict) -> dict | None:
        """The retried call's params, answering each input request as ``_answer_server_request``
        answers the same request in the handshake era; None when one cannot be answered."""
        requests = result.get("inputRequests")
        responses: dict[str, Any] = {}
        for key, req in requests.items() if isinstance(requests, dict) else ():
            method = req.get("method") if isinstance(req, dict) else None
            self.input_requests.append({"method": method, "key": key})
            answer = _input_answer(str(method), self.capabilities)
            if answer is None:
                self.problems.add(
                    "input-unanswered",
                    f"the server asked for {method} input, which this client cannot give",
                )
                return None
            responses[key] = answer
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        if responses:
            retry["inputResponses"] = responses
        if result.get("requestState") is not None:
            retry["requestState"] = result["requestState"]
        return retry

    def _answer_server_request(self, message: dict) -> None:
        method = message.get("method")
        if len(self.server_requests) < MAX_RECORDED:
            self.server_requests.append(
                {"method": bounded(method), "id": bounded(message.get("id"))}
            )
        else:
            self.dropped += 1
        capability = {
            "roots/list": "roots",
            "sampling/createMessage": "sampling",
            "elicitation/create": "elicitation",
        }.get(str(method))
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


def bounded(value: Any, key: str = "", budget: int = ECHO_CHARS) -> Any:
    """``value`` as a server sent it, cut to a bounded prefix that says how much there was:
    a string to ``ECHO_STRING`` characters plus ``… (N characters in all)``, a list or object
    to ``ECHO_ITEMS`` entries plus a last ``… (N items in all)`` item (``"…"`` key), nesting to
    ``ECHO_DEPTH``, all of it to ``budget`` characters. A list of protocol versions (under a
    ``VERSION_LISTS`` key) also keeps every version mcp-matrix speaks, wherever it stands, so
    no verdict changes. Values within the bounds are returned unchanged."""
    return _Echo(budget).keep(value, key, 0)


def bounded_fields(value: Any) -> Any:
    """``bounded`` with a budget per top-level field, so one huge field starves no other."""
    if not isinstance(value, dict) or len(value) > ECHO_ITEMS:
        return bounded(value)
    return {k: bounded(v, k) for k, v in value.items()}


class _Echo:
    """One ``bounded`` walk: the characters it may still keep."""

    def __init__(self, budget: int) -> None:
        self.left = budget

    def keep(self, value: Any, key: str, depth: int) -> Any:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, int) and not isinstance(value, bool):
            self.left -= max(8, value.bit_length() // 3)  # about its digits
            return value
        if not isinstance(value, (list, dict)):
            self.left -= 8
            return value
        if depth >= ECHO_DEPTH:
            return f"… (nested deeper than {ECHO_DEPTH} levels)"
        if isinstance(value, list):
            return self._items(value, key, depth)
        out: dict[str, Any] = {}
        for k, v in value.items():
            if len(out) >= ECHO_ITEMS or self.left <= 0:
                out["…"] = f"{len(value):,} keys in all"
                break
            out[self._text(k)] = self.keep(v, k, depth + 1)
        return out

    def _items(self, value: list, key: str, depth: int) -> list:
        speaks = (*HANDSHAKE_PROTOCOLS, *MODERN_PROTOCOLS) if key in VERSION_LISTS else ()
        out: list[Any] = []
        for item in value:
            if len(out) < ECHO_ITEMS and self.left > 0:
                out.append(self.keep(item, "", depth + 1))
            elif isinstance(item, str) and item in speaks and item not in out:
                out.append(item)
        if len(out) < len(value):
            out.append(f"… ({len(value):,} items in all)")
        return out

    def _text(self, text: str) -> str:
        n = max(0, min(len(text), ECHO_STRING, self.left))
        self.left -= n
        return text if n == len(text) else f"{text[:n]}… ({len(text):,} characters in all)"


def _short(value: Any) -> str:
    """A value a server chose (an id, a cursor) as a problem message quotes it."""
    text = repr(value)
    return text if len(text) <= 100 else f"{text[:100]}… ({len(text):,} characters)"


def same_id(got: Any, wanted: int) -> bool:
    """Whether ``got`` is the id ``wanted`` as a JSON client compares them: the same number
    (``1`` or ``1.0``), never ``true`` (which Python's ``True == 1`` would accept)."""
    return isinstance(got, (int, float)) and not isinstance(got, bool) and got == wanted


def _input_required(result: Any) -> bool:
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _input_answer(method: str, capabilities: Mapping[str, Any]) -> Any:
    """What a client with these capabilities answers to one input request (None: it cannot)."""
    if method == "roots/list" and "roots" in capabilities:
        return {"roots": []}
    if method == "elicitation/create" and "elicitation" in capabilities:
        return {"action": "decline"}
    return None
