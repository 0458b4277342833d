"""A "response" written before its request (issue 24): never taken for that request's answer.

The red team's server answered ``initialize`` and then wrote ``{"id": 2, "result": {"tools":
[]}}`` before it read request 2: mcp-matrix took it for the tools/list answer in 6 runs of 6,
showed 0 tools and passed the gate. Whether an answer came after its request is decided on the
pipes (``mcp_matrix.wire.stdio.Ledger``), never on the clock, so thread scheduling cannot flip it:
a response is refused when some of it was written before the request's last byte went in, or
read by us while the server had not read that byte.

Not decidable, and not refused: a "response" written after the request went in and before the
server read it, that reaches us only after the server read the request (it is then as late as a
real answer). A server that writes its guess and reads at once can hit that window: 4 of 200
sessions here at load 17.
"""

from __future__ import annotations

import sys

import pytest

from mcp_matrix.wire.session import Session, Timeouts
from mcp_matrix.wire.stdio import StdioTransport
from tests.hostile.conftest import TINY_SERVER, assert_no_crash, matrix_run, tiny_server

ECHO = {
    "name": "echo",
    "description": "Echo",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "examples": ["hi"]}},
        "required": ["text"],
    },
    "annotations": {"readOnlyHint": True},
}
# At once: in the write of the initialize answer, before request 2 can be sent. Waiting: written
# when request 2 already waits unread in the server's stdin, which it reads two seconds later.
TIMINGS = {"at-once": True, "request-waiting": {"wait": 0.3, "hold": 2.0}}


@pytest.mark.parametrize("timing", TIMINGS)
def test_a_response_written_before_its_request_is_ignored_and_reported(tmp_path, timing):
    config = {"tools": [ECHO], "early_response": TIMINGS[timing], "call_text": "ok"}
    run = matrix_run(tmp_path, "--stdio", tiny_server(tmp_path, config), clients=("claude-code",))
    assert_no_crash(run)
    assert [t["tool"]["name"] for t in run.snapshot["tools"]] == ["echo"]  # not the forged []
    assert "response-before-request" in [p["kind"] for p in run.snapshot["problems"]]
    assert run.calls()[("claude-code", "echo", "auto")]["verdict"] == "intact"
    assert run.returncode == 0, run.stderr[-2000:]


def test_no_scheduling_lets_an_early_response_through(tmp_path):
    """Sessions in a row, the "response" written while request 2 waits unread: the old check
    (a clock stamp taken when our reader thread got to the line) took it in every one."""
    timing = {"wait": 0.1, "hold": 1.0}
    command = tiny_server(tmp_path, {"tools": [ECHO], "early_response": timing}).split()
    assert command[:2] == [sys.executable, str(TINY_SERVER)]
    for _ in range(3):
        session = Session(StdioTransport(command), timeouts=Timeouts(initialize=30, list=30))
        with session:
            session.initialize()
            listing = session.list_tools()
        assert [t["name"] for _, t in listing.tools] == ["echo"]
        assert "response-before-request" in [p["kind"] for p in session.problems.items]
