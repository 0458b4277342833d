"""The recording tap with real processes: the probe server behind it, over stdio and HTTP."""

from __future__ import annotations

import json
import sys

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
