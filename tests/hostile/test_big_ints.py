"""Integers longer than Python's default 4,300 digits round-trip exactly (issue 24).

A schema whose ``enum``, ``default``, ``examples``, ``minimum`` and ``maximum`` held a 5,000-digit
integer had it decoded as its digits in a string: the example was sent to the server as a string
and judged intact, gemini-cli's call was "loud: must be integer" because of our own decoding,
and vscode-copilot called the valid schema invalid (hidden). Integers now decode as ``int`` up to
``mcp_matrix.INT_DIGITS`` digits (the process's conversion limit is raised to it), so they are
compared, validated and written back as numbers; a longer one makes its message a protocol error
naming the bound. What a client does to such a number is its own behaviour again: a JavaScript
client sends it as ``null`` (``round-big-integers``: JSON.parse makes it Infinity).
"""

from __future__ import annotations

import json

import pytest

from mcp_matrix import INT_DIGITS
from mcp_matrix.wire.errors import ProtocolError
from mcp_matrix.wire.memory import InMemoryTransport
from mcp_matrix.wire.session import Session
from mcp_matrix.wire.transport import IntegerOverCap, decode_json
from tests.conftest import run_cli
from tests.hostile.conftest import assert_no_crash, matrix_run, tiny_server

DIGITS = "9" * 5000
BIG = int(DIGITS)
PICK = {
    "name": "pick",
    "description": "Pick a number",
    "inputSchema": {
        "type": "object",
        "properties": {
            "n": {
                "type": "integer",
                "enum": [BIG, 1],
                "default": BIG,
                "examples": [BIG],
                "minimum": -BIG,
                "maximum": BIG,
            }
        },
        "required": ["n"],
    },
    "annotations": {"readOnlyHint": True},
}
CLIENTS = ("gemini-cli", "vscode-copilot", "claude-code", "python-sdk")
EXACT = ("vscode-copilot", "python-sdk")  # no behaviour of theirs touches the number


def test_a_5000_digit_integer_reaches_the_server_as_that_integer(tmp_path):
    record = tmp_path / "received.jsonl"
    config = {"tools": [PICK], "call_text": "ok", "record": str(record)}
    run = matrix_run(tmp_path, "--stdio", tiny_server(tmp_path, config), clients=CLIENTS)
    assert_no_crash(run)
    received = record.read_text()
    assert f'"{DIGITS}' not in received  # never a string of its digits
    lines = [json.loads(line) for line in received.splitlines() if '"tools/call"' in line]
    sent = [line["params"]["arguments"] for line in lines]
    assert sent.count({"n": BIG}) >= len(EXACT)  # the number's own bytes
    cells = {profile: cell for (profile, _, _), cell in run.calls().items()}
    for profile in EXACT:
        assert (cells[profile]["verdict"], cells[profile]["mutations"]) == ("intact", []), profile
    for profile in set(CLIENTS) - set(EXACT):  # JavaScript: the number becomes null, as observed
        assert cells[profile]["mutations"][0]["kind"] == "nulled", cells[profile]
        assert "round-big-integers" in cells[profile]["behaviours"]
    for (profile, _), cell in run.discovery().items():
        messages = " ".join(f["message"] for f in cell["findings"])
        assert cell["verdict"] in ("visible", "degraded"), (profile, messages)
        assert "not a valid" not in messages and "must be integer" not in messages, profile
    schema = run.snapshot["tools"][0]["tool"]["inputSchema"]["properties"]["n"]
    assert schema["enum"] == [BIG, 1] and schema["default"] == BIG  # recorded as numbers
    again = run_cli("report", str(tmp_path / "r.jsonl"), "--format", "md")
    assert again.returncode == 0, again.stderr[-2000:]  # our own results read back


def _answer_tools(tools_text: str):
    def handler(text: str):
        message = json.loads(text)
        if message.get("method") == "initialize":
            result = '{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{}}'
        elif message.get("method") == "tools/list":
            result = '{"tools":[' + tools_text + "]}"
        else:
            return []
        yield ("line", f'{{"jsonrpc":"2.0","id":{message["id"]},"result":{result}}}')

    return handler


def test_an_integer_over_the_bound_is_a_protocol_error_naming_it_never_a_string():
    long = "7" * (INT_DIGITS + 1)
    with pytest.raises(IntegerOverCap):
        decode_json("[" + long + "]")
    assert decode_json("[-" + DIGITS + "]") == [-BIG]
    tool = '{"name":"pick","inputSchema":{"type":"object","default":' + long + "}}"
    with Session(InMemoryTransport(_answer_tools(tool))) as session:
        session.initialize()
        with pytest.raises(ProtocolError, match=f"over the {INT_DIGITS:,}-digit bound"):
            session.list_tools()


@pytest.mark.parametrize("number", ["1e999", "-1e999", "2.5e400"])
def test_a_number_beyond_a_double_is_a_protocol_error_never_infinity_in_our_json(number):
    """``1e999`` is JSON, but Python and ``JSON.parse`` read it as Infinity, which ``json.dumps``
    writes back as ``Infinity``: the results stream and the reports were invalid JSON (R1's
    review: a tool listed with ``maximum: 1e999``). Refused as over a bound of ours, named."""
    assert decode_json("[1.5e308, -2e-400]") == [1.5e308, -0.0]  # in range: numbers as before
    tool = '{"name":"pick","inputSchema":{"type":"object","maximum":' + number + "}}"
    with Session(InMemoryTransport(_answer_tools(tool))) as session:
        session.initialize()
        with pytest.raises(ProtocolError, match=f"holds the number {number}, beyond a double"):
            session.list_tools()
