"""The recording tap with real processes: the probe server behind it, over stdio and HTTP."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcp_matrix.calibrate import tap
from mcp_matrix.calibrate.harness import kill_group, start_http_server
from mcp_matrix.wire.http import HttpTransport
from mcp_matrix.wire.session import Session
from mcp_matrix.wire.stdio import StdioTransport

TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": None, "x-unknown": 1}}]
ARGS = {"a": [1, 2], "b": None, "c": 1.0}


def tools_file(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return path


def probe_argv(path, *extra):
    return [sys.executable, "-m", "matrix_servers.probe", "--tools", str(path), *extra]


def exchange(session: Session) -> None:
    session.initialize()
    listing = session.list_tools()
    assert [t for _, t in listing.tools] == TOOLS  # raw schema reached the client untouched
    session.call_tool("echo", ARGS)


def check_log(entries: list) -> None:
    msgs = list(tap.messages(entries))
    methods = [m.get("method") for d, m in msgs if d == tap.C2S]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    call = next(m for d, m in msgs if d == tap.C2S and m.get("method") == "tools/call")
    assert call["params"]["arguments"] == ARGS
    listed = next(m for d, m in msgs if d == tap.S2C and "tools" in m.get("result", {}))
    assert listed["result"]["tools"] == TOOLS


def test_stdio_tap_logs_every_message_both_ways_and_passes_them_on(tmp_path):
    log = tmp_path / "tap.jsonl"
    argv = tap.stdio_command(log, probe_argv(tools_file(tmp_path)))
    with Session(StdioTransport(argv, inherit_env=True)) as session:
        exchange(session)
    entries = tap.read_log(log)
    check_log(entries)
    assert entries[0]["event"] == "start"


def test_http_tap_logs_every_message_both_ways_and_passes_them_on(tmp_path):
    proc, url = start_http_server(probe_argv(tools_file(tmp_path), "--transport", "http"))
    try:
        with (
            tap.HttpTap(url, tmp_path / "tap.jsonl") as proxy,
            Session(HttpTransport(proxy.url)) as session,
        ):
            exchange(session)
        check_log(tap.read_log(tmp_path / "tap.jsonl"))
    finally:
        kill_group(proc)


def test_stdio_tap_reports_a_server_that_cannot_start(tmp_path):
    log = tmp_path / "tap.jsonl"
    assert tap.main(["--log", str(log), "--", str(tmp_path / "missing")]) == 127
    assert "could not start" in tap.read_log(log)[-1]["error"]


def test_a_number_no_json_can_keep_is_logged_as_its_text_and_passed_on_unchanged(tmp_path):
    """A client or a server sending ``NaN``, ``Infinity`` or ``1e999``: Python's ``json`` reads
    them and wrote them back as ``NaN``/``Infinity``, so the tap log (and the calibration record
    made from it) was invalid JSON. The tap now reads as the wire does: the message is logged as
    its text with the reason, and the server still gets the very bytes the client sent."""
    from tests.hostile.conftest import TINY_SERVER

    config = tmp_path / "tiny.json"
    received = tmp_path / "received.txt"
    tools = [{"name": "n", "inputSchema": {"type": "object", "maximum": float("nan")}}]
    config.write_text(json.dumps({"tools": tools, "record": str(received)}))
    call = '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": '
    call += '{"name": "n", "arguments": %s}}'
    sent = [
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}',
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}',
        call % (3, '{"x": NaN, "y": -Infinity}'),
        call % (4, '{"z": 1e999}'),
    ]
    log = tmp_path / "tap.jsonl"
    argv = tap.stdio_command(log, [sys.executable, str(TINY_SERVER), str(config)])
    done = subprocess.run(
        argv,
        input="".join(line + "\n" for line in sent),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert received.read_text().splitlines() == sent  # passed on as sent
    assert "NaN" in done.stdout.splitlines()[1]  # and the server's listing as it sent it

    def strict(text: str) -> dict:
        return json.loads(text, parse_constant=lambda word: pytest.fail(f"{word} in the log"))

    entries = [strict(line) for line in log.read_text(encoding="utf-8").splitlines()]
    unkept = {(e["dir"], e["unkept"]) for e in entries if "unkept" in e}
    assert any(d == tap.S2C and "holds NaN, which is not a JSON number" in u for d, u in unkept)
    assert any(d == tap.C2S and "holds NaN" in u for d, u in unkept)
    assert any(d == tap.C2S and "holds the number 1e999" in u for d, u in unkept)
    assert all("the way to the" in u for _, u in unkept)
    raw = [e["raw"] for e in entries if e.get("dir") == tap.C2S and "unkept" in e]
    assert raw == sent[2:]  # each kept as its text
    # read back, the messages JSON can hold are there, and none holds a float it cannot
    msgs = list(tap.messages(tap.read_log(log)))
    assert [m.get("id") for d, m in msgs if d == tap.C2S] == [1, 2]
    assert [m.get("id") for d, m in msgs if d == tap.S2C] == [1, 3, 4]


def test_reading_a_log_holding_nan_skips_that_line_rather_than_reading_a_float(tmp_path):
    """A log written before the tap refused ``NaN`` is read as the wire reads: such a line is
    skipped like a torn one, so no record made from it holds ``NaN``."""
    log = tmp_path / "tap.jsonl"
    lines = ['{"t": 0, "event": "start"}', '{"t": 1, "dir": "c2s", "message": {"x": NaN}}']
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert tap.read_log(log) == [{"t": 0, "event": "start"}]
