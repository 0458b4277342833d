"""JSON-RPC over a transport: send one request, wait (bounded) for the answer with its id, and
record everything else the server says on the way.

Notifications (e.g. ``notifications/tools/list_changed``), server-to-client requests (answered
as ``wire.server_requests`` says), responses with ids nobody asked for, and stdout noise are
recorded, up to ``MAX_RECORDED`` each. Transport failures raise ``WireError``; JSON-RPC error
responses come back as ``RpcError`` values. ``wire.session.Session`` adds the MCP operations.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.wire.answers import Response
from mcp_matrix.wire.echo import bounded, bounded_fields, short
from mcp_matrix.wire.errors import Problems, ProtocolError, RpcError, WireError, WireTimeout
from mcp_matrix.wire.limits import MAX_RECORDED
from mcp_matrix.wire.server_requests import reply
from mcp_matrix.wire.transport import Transport


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


# What a timed-out request's message tells the user to raise: the option bounding that wait
# (every command that talks to a server takes these). A bound of ours, not the server's fault.
_BOUNDS = {
    "initialize": "; a server slow to start needs a longer --timeout-initialize",
    "server/discover": "; a server slow to start needs a longer --timeout-initialize",
    "tools/list": "; a long tool list or a slow server needs a longer --timeout-list (each page)",
    "tools/call": "; a slow tool needs a longer --timeout-call",
}


def _raise_bound(method: str) -> str:
    """The option to raise after ``method`` timed out ('' for a request with no option)."""
    return _BOUNDS.get(method, "")


@dataclass
class RpcEndpoint:
    """The client's end of one JSON-RPC connection, and what it heard there."""

    transport: Transport
    capabilities: Mapping[str, object] = field(default_factory=dict)
    timeouts: Timeouts = field(default_factory=Timeouts)
    notifications: list[dict] = field(default_factory=list)
    server_requests: list[dict] = field(default_factory=list)
    problems: Problems = field(default_factory=Problems)

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        # ids of responses nobody asked for, during the current request
        self._stray_ids: list[Any] = []
        self._sent_at = 0.0  # when the current request was handed to the transport
        self.dropped = 0  # notifications and server requests over MAX_RECORDED, counted only
        # long-lived requests (subscriptions/listen) we no longer wait for
        self._open_ids: set[Any] = set()

    def notify(self, method: str, params: Mapping[str, object] | None = None) -> None:
        message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.transport.send(message)

    def _exchange(self, method: str, params: object, timeout: float) -> Response:
        request_id = next(self._ids)
        answer = self._wait(request_id, method, params, timeout)
        assert answer is not None  # no ``until``: only the answer ends the wait
        if method in ("initialize", "server/discover"):  # the server about itself: bounded
            return Response(bounded_fields(answer.result), answer.error, answer.elapsed)
        return answer

    def _wait(
        self, request_id: int, method: str, params: object, timeout: float, until=None
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
                slow = "" if cut else _raise_bound(method)
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

    def _handle(self, message: object, request_id: int) -> Response | None:
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
                f"response with id {short(message.get('id'))} while waiting for {request_id}",
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

    def _answer_server_request(self, message: dict) -> None:
        method = message.get("method")
        if len(self.server_requests) < MAX_RECORDED:
            self.server_requests.append(
                {"method": bounded(method), "id": bounded(message.get("id"))}
            )
        else:
            self.dropped += 1
        try:
            self.transport.send(reply(message, self.capabilities))
        except WireError:
            self.problems.add("reply-failed", f"could not answer the server's {method} request")


def same_id(got: object, wanted: int) -> bool:
    """Whether ``got`` is the id ``wanted`` as a JSON client compares them: the same number
    (``1`` or ``1.0``), never ``true`` (which Python's ``True == 1`` would accept)."""
    return isinstance(got, (int, float)) and not isinstance(got, bool) and got == wanted
