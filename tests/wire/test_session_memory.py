"""The wire against the memory reference server (official SDK), over stdio and HTTP."""

from __future__ import annotations

import pytest

from mcp_matrix.wire.session import Session, Timeouts
from tests.conftest import bundled


def open_session(spec: str, transport: str, **kw) -> Session:
    session = Session(
        bundled(spec, transport).open(), timeouts=Timeouts(initialize=20, list=10, call=10), **kw
    )
    return session


@pytest.fixture(scope="module", params=["stdio", "http"])
def memory(request) -> Session:
    """One initialized session per transport, shared by the tests that only send requests on
    it (none depends on what another sent): one server start each instead of one per test."""
    with open_session("memory", request.param) as s:
        s.initialize()
        yield s


def test_initialize_negotiates_the_requested_protocol_and_reports_the_server(transport):
    with open_session("memory", transport, protocol_version="2025-06-18") as s:
        init = s.initialize()
        assert init.protocol_version == "2025-06-18"
        assert isinstance(init.server_info, dict) and init.server_info.get("name")
        assert "tools" in init.capabilities


def test_tools_list_follows_every_page_and_records_page_boundaries(transport):
    with open_session("memory --page-size 3", transport) as s:
        s.initialize()
        listing = s.list_tools()
    assert [len(p.tools) for p in listing.pages] == [3, 3, 1]
    assert (
        listing.pages[0].cursor is None and listing.pages[1].cursor == listing.pages[0].next_cursor
    )
    assert listing.pages[-1].next_cursor is None
    names = [t["name"] for _, t in listing.tools]
    assert "memory_reflect" in names and len(set(names)) == 7


def test_first_page_only_stops_after_one_page(transport):
    with open_session("memory --page-size 3", transport) as s:
        s.initialize()
        listing = s.list_tools(first_page_only=True)
    assert len(listing.pages) == 1 and len(listing.tools) == 3


def test_a_valid_call_returns_its_result(memory):
    r = memory.call_tool(
        "memory_reflect", {"action": "summarize", "agent_id": "alice", "text": "hello"}
    )
    assert r.error is None
    assert r.result.get("isError") is not True


def test_a_tool_error_is_a_result_with_is_error_not_an_rpc_error(memory):
    r = memory.call_tool("memory_reflect", {"action": "summarize", "agent_id": "   "})
    assert r.error is None
    assert r.result["isError"] is True


def test_an_unknown_method_comes_back_as_an_rpc_error_value(memory):
    r = memory.request("no/such-method", {}, 5)
    assert r.error is not None and r.error.code == -32601


def test_arguments_are_sent_exactly_as_given_even_when_invalid(memory):
    # A stringified array must reach the server as a string: the wire never coerces.
    r = memory.call_tool(
        "memory_reflect", {"action": "summarize", "agent_id": "a", "confidence": "0.5"}
    )
    text = " ".join(c.get("text", "") for c in r.result.get("content", []))
    assert r.result.get("isError") is True and "confidence" in text


def test_ping_is_answered(memory):
    assert memory.ping().error is None


def connections_to(port: int) -> int:
    """TCP connections to ``port`` on this machine the kernel still lists (open, or closed and
    waiting in TIME_WAIT): one per connection a client opened, for a minute after it closed."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table, encoding="ascii").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            remote = line.split()[2]
            if int(remote.rsplit(":", 1)[1], 16) == port:
                count += 1
    return count


def test_calls_over_http_reuse_the_connection_instead_of_opening_one_each():
    # A response closed with unread body (the end of the SSE stream after the answer, a 202's
    # empty body) drops its connection: 40 calls opened 40-odd connections before the drain.
    from urllib.parse import urlsplit

    with open_session("memory", "http") as s:
        s.initialize()
        port = urlsplit(s.transport.url).port
        assert port is not None
        for n in range(40):
            r = s.call_tool(
                "memory_reflect", {"action": "summarize", "agent_id": "alice", "text": f"t{n}"}
            )
            assert r.error is None
        opened = connections_to(port)
    assert opened <= 5, f"{opened} connections for 40 calls"
