"""A large argument is the user's, not the server's fault (issue 24).

A cases file with a 5 MiB argument to a server that reads and answers it was ``broken``
("the server is not reading its stdin (cap 4 MiB)") with exit 1: our own write buffer refused
the message for its size. A message of ours is now never refused for its size; a send fails
only when 4 MiB of earlier messages wait behind the one a server is reading, which only a
server that stopped reading causes (docs/security.md).
"""

from __future__ import annotations

import json
import sys

import pytest

from mcp_matrix.wire.errors import ServerExited, WireTimeout
from mcp_matrix.wire.limits import MAX_PENDING_WRITE_BYTES, MiB
from mcp_matrix.wire.session import Session, Timeouts
from mcp_matrix.wire.stdio import StdioTransport
from tests.conftest import run_cli
from tests.hostile.conftest import assert_no_crash, matrix_run, tiny_server

ECHO = {
    "name": "echo",
    "description": "Takes a text and answers ok",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "annotations": {"readOnlyHint": True},
}


@pytest.mark.parametrize("mib", [5, 9])
def test_a_large_argument_reaches_a_server_that_reads_it(tmp_path, mib):
    text = "x" * (mib * MiB)
    record = tmp_path / "received.jsonl"
    cases = tmp_path / "cases.yaml"
    cases.write_text(f"cases:\n  echo:\n    - name: large\n      arguments: {{text: {text}}}\n")
    config = {"tools": [ECHO], "call_text": "ok", "record": str(record)}
    run = matrix_run(
        tmp_path,
        "--stdio",
        tiny_server(tmp_path, config),
        clients=("claude-code",),
        extra=("--cases", str(cases)),
        timeout=180,
    )
    assert_no_crash(run)
    cell = run.calls()[("claude-code", "echo", "large")]
    assert cell["verdict"] == "intact", cell
    assert run.returncode == 0, run.stdout[-2000:]
    calls = [json.loads(line) for line in record.read_text().splitlines() if '"tools/call"' in line]
    assert [c["params"]["arguments"]["text"] == text for c in calls] == [True]


def test_a_server_that_stops_reading_is_still_named_once_4_mib_wait_behind():
    """The bound on our memory holds: what queues behind a message the server does not read."""
    transport = StdioTransport([sys.executable, "-c", "import time; time.sleep(120)"])
    transport.start()
    try:
        transport.send({"jsonrpc": "2.0", "method": "big", "params": "x" * (6 * MiB)})
        chunk = {"jsonrpc": "2.0", "method": "more", "params": "y" * MiB}
        for _ in range(MAX_PENDING_WRITE_BYTES // MiB):
            transport.send(chunk)  # accepted: under 4 MiB wait behind the first
        with pytest.raises(ServerExited, match="the server is not reading its stdin"):
            transport.send(chunk)
    finally:
        transport.close()


def test_our_own_retry_of_an_input_required_call_with_8_mib_is_sent_whole(tmp_path):
    """The 2026-07-28 retry carries the call's arguments again: ours, so never refused."""
    record = tmp_path / "received.jsonl"
    config = {"tools": [ECHO], "call_text": "ok", "record": str(record), "input_required": True}
    command = tiny_server(tmp_path, config).split()
    text = "x" * (8 * MiB)
    session = Session(
        StdioTransport(command), capabilities={"elicitation": {}}, timeouts=Timeouts()
    )
    with session:
        session.adopt_modern()
        response = session.call_tool("echo", {"text": text})
    assert response.result["content"] == [{"type": "text", "text": "ok"}]
    calls = [json.loads(line) for line in record.read_text().splitlines() if '"tools/call"' in line]
    assert [c["params"]["arguments"]["text"] == text for c in calls] == [True, True]
    assert calls[1]["params"]["inputResponses"] == {"e1": {"action": "decline"}}


def test_a_request_the_server_never_reads_times_out_saying_so():
    """A timeout is blamed on the server with the evidence: it read none of the request."""
    transport = StdioTransport([sys.executable, "-c", "import time; time.sleep(120)"])
    unread = r"the server has read none of its stdin yet \(the request is [\d,]+ bytes\)"
    with (
        Session(transport, timeouts=Timeouts(call=1.0)) as session,
        pytest.raises(WireTimeout, match=unread),
    ):
        session.call_tool("echo", {"text": "x" * MiB})


def test_a_server_slow_to_start_is_told_apart_and_the_flag_is_named(tmp_path):
    """A server that has read nothing when initialize times out may still be starting: the
    message says so and names the flag that gives it longer, instead of blaming its stdin."""
    r = run_cli(
        "snapshot",
        "--stdio",
        f"{sys.executable} -c 'import time; time.sleep(60)'",
        "--timeout-initialize",
        "1",
        "-o",
        str(tmp_path / "s.json"),
        timeout=60,
    )
    said = r.stdout + r.stderr
    assert "has read none of its stdin yet" in said and "may still be starting" in said
    assert "--timeout-initialize" in said
    assert "stopped reading its stdin" not in said
