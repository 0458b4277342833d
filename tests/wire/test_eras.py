"""Both protocol eras against the real memory server run one-era or both-era, over stdio and HTTP.

Each case opens a session the way one kind of client does (mcp_matrix.wire.eras) and checks what the
server's real SDK answers: the 2026-07-28 era (server/discover, per-request _meta, Mcp-Method and
Mcp-Name headers, ttlMs) and the handshake era (initialize).
"""

from __future__ import annotations

import pytest

from mcp_matrix.wire.eras import SPEC_CORRECT, Handshake, start_session
from mcp_matrix.wire.session import MODERN_PROTOCOL, Session, Timeouts
from tests.conftest import bundled

BOUNDS = Timeouts(initialize=40, list=30, call=30)
INITIALIZE_ONLY = Handshake("initialize-only")
DISCOVER_ONLY = Handshake("discover-only")
LATE_INITIALIZE = Handshake("discover-then-initialize", initialize_after_discover=True)


def session(protocol: str, transport: str) -> Session:
    return Session(
        bundled(f"memory --protocol {protocol}", transport).open(40),
        timeouts=BOUNDS,
        capabilities={"elicitation": {}},
    )


def test_a_spec_client_speaks_2026_07_28_with_a_both_era_server_and_calls_a_tool(transport):
    with session("both", transport) as s:
        start = start_session(s, SPEC_CORRECT, "2025-11-25")
        assert (start.era, start.version) == ("modern", MODERN_PROTOCOL)
        assert s.discovered is not None and MODERN_PROTOCOL in s.discovered.supported_versions
        listing = s.list_tools()
        # Over HTTP the SDK checks Mcp-Method/Mcp-Name against the body and the _meta envelope on
        # every request: a modern call that succeeds proves both were sent right.
        r = s.call_tool("memory_recall", {"agent_id": "alice"})
    assert len(listing.tools) == 7
    assert listing.pages[0].ttl_ms == 0 and listing.pages[0].cache_scope == "private"
    assert r.error is None and r.result.get("resultType") == "complete"


def test_a_modern_only_server_refuses_initialize_with_32022_naming_2026_07_28(transport):
    with session("modern-only", transport) as s:
        start = start_session(s, INITIALIZE_ONLY, "2025-06-18")
    assert not start.started
    refusal = start.steps[-1].error
    assert refusal.code == -32022 and refusal.data["supported"] == [MODERN_PROTOCOL]
    assert "2025-06-18" in start.reason


def test_a_modern_only_server_serves_a_client_that_discovers(transport):
    with session("modern-only", transport) as s:
        start = start_session(s, SPEC_CORRECT, "2025-06-18")
        listing = s.list_tools()
    assert start.era == "modern" and len(listing.tools) == 7


def test_a_dual_era_client_falls_back_to_initialize_on_a_legacy_only_server(transport):
    with session("legacy-only", transport) as s:
        start = start_session(s, SPEC_CORRECT, "2025-06-18")
        listing = s.list_tools()
    assert (start.era, start.version) == ("handshake", "2025-06-18")
    assert start.steps[0].method == "server/discover" and start.steps[0].error.code == -32601
    assert len(listing.tools) == 7 and listing.pages[0].ttl_ms is None


def test_a_modern_only_client_gets_no_session_from_a_legacy_only_server(transport):
    with session("legacy-only", transport) as s:
        start = start_session(s, DISCOVER_ONLY, "2025-06-18")
    assert not start.started and "-32601" in start.reason


def test_a_late_initialize_after_discover_is_refused_on_stdio_and_accepted_over_http(transport):
    with session("both", transport) as s:
        start = start_session(s, LATE_INITIALIZE, "2025-11-25")
    if transport == "stdio":  # the SDK's dual-era loop locks a stdio connection to its first era
        assert not start.started and start.steps[-1].error.code == -32022
    else:  # each HTTP POST stands alone: the initialize POST opens a handshake session
        assert start.era == "handshake"


def test_the_legacy_sse_transport_carries_a_whole_session():
    with Session(bundled("memory --protocol legacy-only", "sse").open(40), timeouts=BOUNDS) as s:
        start = start_session(s, SPEC_CORRECT, "2024-11-05")
        listing = s.list_tools()
        r = s.call_tool("memory_recall", {"agent_id": "alice"})
    assert (start.era, start.version) == ("handshake", "2024-11-05")
    assert len(listing.tools) == 7 and r.error is None


@pytest.mark.parametrize("protocol", ["both", "modern-only"])
def test_the_memory_server_speaks_2026_07_28_over_legacy_sse_when_asked(protocol):
    with Session(bundled(f"memory --protocol {protocol}", "sse").open(40), timeouts=BOUNDS) as s:
        start = start_session(s, DISCOVER_ONLY, "")
        listing = s.list_tools()
    assert start.era == "modern" and len(listing.tools) == 7
