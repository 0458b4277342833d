"""The run's deadline and circuit breaker as values: what they rule out, and the words they use."""

from __future__ import annotations

from mcp_matrix.run.bounds import CircuitBreaker, Deadline, timeout_note
from mcp_matrix.wire.rpc import _raise_bound
from mcp_matrix.wire.session import Timeouts


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_deadline_leaves_every_bound_as_it_is():
    d = Deadline(None)
    assert d.remaining() is None and not d.passed()
    assert d.cap(Timeouts()) == Timeouts()


def test_a_deadline_caps_every_wait_by_the_time_left_and_passes():
    clock = Clock()
    d = Deadline(60, reserve=2, clock=clock)
    clock.now += 50
    capped = d.cap(Timeouts(initialize=10, list=10, call=30))
    assert (capped.initialize, capped.list, capped.call) == (8, 8, 8)  # 60 - 2 reserved - 50 spent
    clock.now += 8
    assert d.passed()
    assert d.cap(Timeouts()).call > 0  # never a zero bound
    assert "--timeout-run 60 s" in d.reason()


def test_a_timed_out_tool_is_not_called_again_but_other_tools_are():
    b = CircuitBreaker()
    b.call_timed_out("echo", "claude-code", 30)
    assert "tools/call 'echo' timed out after 30 s for claude-code" in b.reason("echo")
    assert "--no-circuit-breaker" in b.reason("echo")
    assert b.reason("other") is None


def test_two_tools_timing_out_with_no_answer_between_stop_the_whole_server():
    b = CircuitBreaker()
    b.call_timed_out("a", "claude-code", 30)
    b.answered()  # the server still answers: only 'a' is ruled out
    b.call_timed_out("b", "cursor", 30)
    assert b.reason("c") is None
    b.call_timed_out("c", "cursor", 30)
    assert "stopped answering tools/call" in b.reason("d") and "'b', 'c'" in b.reason("d")


def test_a_handshake_that_timed_out_twice_stops_the_server():
    b = CircuitBreaker()
    b.handshake_timed_out("zed", 20)
    assert "initialize timed out twice for zed" in b.reason("anything")


def test_a_disabled_breaker_rules_nothing_out():
    b = CircuitBreaker(enabled=False)
    b.call_timed_out("a", "p", 1)
    b.call_timed_out("b", "p", 1)
    b.handshake_timed_out("p", 1)
    assert b.reason("a") is None and b.reason("z") is None


def test_the_timeout_note_says_the_bound_is_ours_and_the_timeout_names_its_option():
    """The note says whose bound it is; the timed-out request's own message names the option
    that sets that bound (how to check), one per request kind."""
    note = timeout_note()
    assert "the timeout is ours" in note
    for method, option in (
        ("initialize", "--timeout-initialize"),
        ("tools/list", "--timeout-list"),
        ("tools/call", "--timeout-call"),
    ):
        assert option in _raise_bound(method)
