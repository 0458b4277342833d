"""Misbehaving servers (written without the SDK) give typed errors or recorded problems, within bounds."""

from __future__ import annotations

import time

import pytest

from mcp_matrix.wire.errors import HttpError, ServerExited, WireTimeout
from mcp_matrix.wire.session import Session, Timeouts
from tests.conftest import bundled

FAST = Timeouts(initialize=5, list=3, call=2, ping=2, shutdown=1)


def faulty(mode: str, transport: str = "stdio", **kw) -> Session:
    return Session(bundled(f"faulty --mode {mode}", transport).open(), timeouts=FAST, **kw)


def test_stdout_noise_is_recorded_with_the_offending_line_and_the_session_still_works():
    with faulty("stdout-noise") as s:
        s.initialize()
        listing = s.list_tools()
        noise = [n.line for n in s.transport.noise]
    assert listing.tools
    assert noise and not any(line.startswith("{") for line in noise)


def test_a_crash_mid_call_is_a_typed_error_carrying_the_servers_last_stderr_lines():
    with faulty("crash-on-call") as s:
        s.initialize()
        with pytest.raises(ServerExited) as info:
            s.call_tool("echo", {"x": 1})
    assert any("boom" in line or "fatal" in line for line in info.value.stderr_tail)


def test_a_crash_during_initialize_is_a_typed_error():
    with faulty("crash-on-initialize") as s, pytest.raises(ServerExited):
        s.initialize()


def test_http_500_is_a_typed_http_error_with_the_body_excerpt():
    with faulty("http-500", "http") as s, pytest.raises(HttpError) as info:
        s.initialize()
    assert "500" in str(info.value)


def test_a_wrong_content_type_is_an_http_error_naming_it():
    with faulty("wrong-content-type", "http") as s, pytest.raises(HttpError) as info:
        s.initialize()
    assert "text/html" in str(info.value)


def test_an_sse_stream_that_never_closes_ends_in_a_timeout_within_its_bound():
    with faulty("sse-never-closes", "http") as s:
        s.initialize()
        started = time.monotonic()
        with pytest.raises(WireTimeout):
            s.call_tool("echo", {"x": 1})
        assert time.monotonic() - started < FAST.call + 2


def test_an_expired_session_is_reported_as_such():
    with faulty("session-expires", "http") as s:
        s.initialize()
        s.list_tools()
        with pytest.raises(HttpError) as info:
            s.list_tools()
    assert "expired" in str(info.value)
