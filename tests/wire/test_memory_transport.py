"""Protocol edge cases against the fault server's handler in process (no subprocess, no socket).

The session code is the same one that talks to real servers; only the bytes' carrier differs.
Faults whose point is the process boundary (crashes with stderr, noise on stdout, pipes held
open) stay in ``test_session_faults.py`` over stdio and HTTP.
"""

from __future__ import annotations

import json
import time

import pytest
from matrix_servers.faulty.in_memory import handler

from mcp_matrix.wire.errors import ProtocolError, ServerExited, WireTimeout
from mcp_matrix.wire.limits import INBOX_MESSAGES
from mcp_matrix.wire.memory import InMemoryTransport
from mcp_matrix.wire.session import Session, Timeouts

FAST = Timeouts(initialize=5, list=3, call=2, ping=2, shutdown=1)


def memory(mode: str, **kw) -> Session:
    return Session(InMemoryTransport(handler(mode)), timeouts=FAST, **kw)


def test_a_well_behaved_server_answers_initialize_list_and_call_in_process():
    with memory("ok") as s:
        init = s.initialize()
        listing = s.list_tools()
        result = s.call_tool("echo", {"x": 1})
    assert init.server_info["name"] == "faulty"
    assert "echo" in {tool["name"] for _, tool in listing.tools}
    assert result.error is None


def test_a_crash_mid_call_is_a_typed_error_in_process_too():
    with memory("crash-on-call") as s:
        s.initialize()
        with pytest.raises(ServerExited):
            s.call_tool("echo", {"x": 1})


def test_modes_that_need_a_process_are_refused_by_the_adapter():
    with pytest.raises(ValueError, match="real process"):
        handler("request-flood")


def test_a_server_that_never_answers_times_out_within_its_bound():
    with memory("hang") as s:
        started = time.monotonic()
        with pytest.raises(WireTimeout) as info:
            s.initialize()
        assert time.monotonic() - started < FAST.initialize + 2
    assert "initialize" in str(info.value)


def test_invalid_json_is_a_protocol_error_naming_the_line():
    with memory("invalid-json") as s:
        s.initialize()
        with pytest.raises(ProtocolError) as info:
            s.list_tools()
    assert info.value.detail.startswith("{")


def test_a_response_with_the_wrong_id_is_recorded_and_the_wait_still_ends():
    with memory("wrong-id") as s:
        s.initialize()
        with pytest.raises(WireTimeout):
            s.call_tool("echo", {"x": 1})
        assert any(p["kind"] == "unexpected-id" for p in s.problems.items)


def test_a_json_rpc_error_on_tools_list_keeps_code_message_and_data():
    with memory("list-error") as s:
        s.initialize()
        listing = s.list_tools()
    assert listing.error is not None
    assert (listing.error.code, listing.error.message, listing.error.data) == (
        -32603,
        "database unavailable",
        {"retry": False},
    )


def test_a_looping_cursor_is_stopped_by_the_repeated_cursor_guard():
    with memory("cursor-loop") as s:
        s.initialize()
        listing = s.list_tools(page_cap=50)
    assert listing.stopped == "repeated-cursor" and len(listing.pages) <= 3


def test_a_list_changed_notification_after_initialize_is_recorded():
    with memory("list-changed") as s:
        s.initialize()
        s.list_tools()
        s.ping()
    assert any(n["method"] == "notifications/tools/list_changed" for n in s.notifications)


def test_a_server_request_gets_a_json_rpc_error_when_the_capability_was_not_declared():
    with memory("server-request") as s:
        s.initialize()
        r = s.call_tool("echo", {"x": 1})
    assert r.error is None
    assert s.server_requests and s.server_requests[0]["method"] == "roots/list"


def test_a_full_inbox_holds_the_in_memory_server_until_the_session_reads_as_stdio_does():
    """The base class waits while the inbox is full unless the transport is closed; the memory
    transport once kept an Event in the base's ``_closed`` flag, always true there, so a reader
    slower than the half-second retry lost every message past the inbox's bound."""
    flood = INBOX_MESSAGES + 5

    def flooding(text: str):
        for n in range(flood):
            yield (
                "line",
                json.dumps(
                    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}}
                ),
            )

    t = InMemoryTransport(flooding)
    t.start()
    try:
        t.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        time.sleep(1.5)  # the session is busy: the server fills the inbox and must wait
        received = [t.receive(timeout=5)["params"]["n"] for _ in range(flood)]
    finally:
        t.close()
    assert received == list(range(flood))
