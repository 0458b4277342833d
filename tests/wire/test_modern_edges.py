"""Pure protocol edges of the 2026-07-28 era with a scripted peer (no server can be made to do these).

The scripted transport records every message the session sends and answers from a script, so the
exact bytes of the envelope, the multi round-trip retry and the listen wait can be checked.
"""

from __future__ import annotations

import http.server
import threading

import pytest

from mcp_matrix.wire.errors import ProtocolError
from mcp_matrix.wire.http import routing_headers
from mcp_matrix.wire.session import Session, Timeouts
from mcp_matrix.wire.sse import SseTransport
from mcp_matrix.wire.transport import Transport
from mcp_matrix.wire.versions import META_CAPABILITIES, META_CLIENT_INFO, META_VERSION


class Scripted(Transport):
    """Answers each request with the next scripted reply (a function of the request)."""

    def __init__(self, *replies) -> None:
        super().__init__()
        self.sent: list[dict] = []
        self.replies = list(replies)

    def start(self) -> None:
        pass

    def send(self, message: dict) -> None:
        self.sent.append(message)
        if "id" in message and "method" in message and self.replies:
            for item in self.replies.pop(0)(message):
                self._deliver(item)

    def close(self) -> None:
        pass


def result(value):
    return lambda m: [{"jsonrpc": "2.0", "id": m["id"], "result": value}]


FAST = Timeouts(initialize=2, list=2, call=2, ping=2)


def test_every_modern_request_carries_the_envelope_before_the_callers_own_meta():
    t = Scripted(result({"content": [], "resultType": "complete"}))
    s = Session(
        t, client_info={"name": "c", "version": "1"}, capabilities={"roots": {}}, timeouts=FAST
    )
    s.adopt_modern()
    s.call_tool("t", {"a": 1}, meta={"progressToken": 7})
    meta = t.sent[0]["params"]["_meta"]
    assert list(meta) == [META_VERSION, META_CAPABILITIES, META_CLIENT_INFO, "progressToken"]
    assert meta[META_VERSION] == "2026-07-28" and meta[META_CAPABILITIES] == {"roots": {}}
    assert t.sent[0]["params"]["arguments"] == {"a": 1}


def test_an_input_required_call_is_retried_with_the_answers_and_the_request_state():
    asked = {
        "resultType": "input_required",
        "requestState": "opaque-1",
        "inputRequests": {"e1": {"method": "elicitation/create", "params": {"message": "ok?"}}},
    }
    done = {"content": [{"type": "text", "text": "done"}], "resultType": "complete"}
    t = Scripted(result(asked), result(done))
    s = Session(t, capabilities={"elicitation": {}}, timeouts=FAST)
    s.adopt_modern()
    r = s.call_tool("t", {"a": 1})
    retry = t.sent[1]["params"]
    assert r.result == done
    assert (
        retry["inputResponses"] == {"e1": {"action": "decline"}}
        and retry["requestState"] == "opaque-1"
    )
    assert retry["arguments"] == {"a": 1} and retry["name"] == "t"


def test_an_input_request_the_client_cannot_answer_ends_the_call_with_the_input_required_result():
    asked = {
        "resultType": "input_required",
        "inputRequests": {"s1": {"method": "sampling/createMessage", "params": {}}},
    }
    t = Scripted(result(asked))
    s = Session(t, capabilities={}, timeouts=FAST)
    s.adopt_modern()
    r = s.call_tool("t", {})
    assert r.result == asked and len(t.sent) == 1
    assert [p["kind"] for p in s.problems.items] == ["input-unanswered"]


def test_multi_round_trips_are_bounded():
    asked = {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}}
    t = Scripted(*[result(asked)] * 10)
    s = Session(t, capabilities={"roots": {}}, timeouts=FAST)
    s.adopt_modern()
    s.call_tool("t", {})
    assert len(t.sent) == 5 and s.problems.items[-1]["kind"] == "input-rounds"


def test_listen_returns_the_acknowledged_filter_and_its_late_answer_is_not_a_problem():
    ack = lambda m: [
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": True}},
        }
    ]
    t = Scripted(ack)
    s = Session(t, timeouts=FAST)
    s.adopt_modern()
    heard = s.listen({"toolsListChanged": True})
    listen_id = t.sent[0]["id"]
    t.replies.append(
        lambda m: [
            {"jsonrpc": "2.0", "id": listen_id, "result": {"resultType": "complete"}},
            {"jsonrpc": "2.0", "id": m["id"], "result": {"tools": []}},
        ]
    )
    s.list_tools()
    assert heard.acknowledged == {"toolsListChanged": True}
    assert t.sent[0]["params"]["notifications"] == {"toolsListChanged": True}
    assert s.problems.items == []


def test_routing_headers_mirror_the_method_and_the_name_and_encode_what_http_cannot_carry():
    assert routing_headers({"id": 1, "method": "tools/call", "params": {"name": "get_time"}}) == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "get_time",
    }
    assert (
        routing_headers({"id": 1, "method": "resources/read", "params": {"uri": "file:///a"}})[
            "Mcp-Name"
        ]
        == "file:///a"
    )
    assert routing_headers({"id": 1, "method": "tools/list", "params": {}}) == {
        "Mcp-Method": "tools/list"
    }
    assert (
        routing_headers({"id": 1, "method": "tools/call", "params": {"name": "héllo"}})["Mcp-Name"]
        == "=?base64?aMOpbGxv?="
    )
    assert routing_headers({"id": 1, "result": {}}) == {}


class _ForeignEndpoint(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"event: endpoint\ndata: http://other.invalid/messages\n\n")
        self.wfile.flush()

    def log_message(self, *args):
        pass


def test_an_sse_endpoint_on_another_origin_is_refused_before_anything_is_posted():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ForeignEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        t = SseTransport(f"http://127.0.0.1:{server.server_port}/sse", connect_timeout=10)
        with pytest.raises(ProtocolError, match="refusing to post there"):
            t.start()
    finally:
        server.shutdown()
        server.server_close()
