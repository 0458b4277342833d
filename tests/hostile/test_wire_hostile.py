"""Hostile servers at the wire (issue 15, docs/security.md): each test starts the faulty server in
one attack mode as a real process and checks the bound that attack used to break: no hang past
the timeout, no process left, memory within the documented bound, verdicts that match the wire.

Memory figures come from a probe process of their own (tests/hostile/wire_probe.py), so they
measure the client alone, never the test runner. The bounds are generous (several times what
was measured) so that a loaded machine cannot fail them, yet far below what each attack reached
before the caps (3.8 GB, 2.1 GB, 585 MB and growing).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hostile.test_interrupt import servers_of

PROBE = Path(__file__).with_name("wire_probe.py")
MEMORY_BOUND_MB = 400  # docs/security.md: cap 32 MiB, one inflated network chunk, the interpreter


def probe(
    mode: str, transport: str = "stdio", call_timeout: float = 5.0, timeout: float = 120
) -> dict:
    r = subprocess.run(
        [sys.executable, str(PROBE), mode, transport, str(call_timeout)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    return json.loads(r.stdout)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def assert_server_ended(out: dict) -> None:
    """No process left: the server the probe started is gone once its session closed."""
    assert out["pid"] and not alive(out["pid"]), f"server {out['pid']} outlived its session"


def test_a_child_holding_the_pipes_does_not_block_close_and_is_ended():
    out = probe("pipe-holder")
    assert out["result"]["structuredContent"] == {"text": "hi"}
    assert out["close_seconds"] < 20  # was: blocked until the child exited (63 s for a 60 s child)
    child = int(re.search(r"pipe-holder child (\d+)", " ".join(out["stderr"])).group(1))
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child), "the server's child outlived the session"
    assert_server_ended(out)


def test_snapshot_of_a_server_whose_child_holds_the_pipes_ends_and_leaves_no_process(tmp_path):
    """The command a user runs (a 300 s child used to hang ``snapshot``): it finishes, and
    neither the server nor its child is left."""
    record = tmp_path / "calls.jsonl"
    snap = tmp_path / "snap.json"
    r = run_cli(
        "snapshot",
        "--server",
        f"faulty --mode pipe-holder --record {record}",
        "-o",
        str(snap),
        timeout=120,
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    doc = json.loads(snap.read_text())
    assert len(doc["tools"]) == 4
    children = [int(m) for m in re.findall(r"pipe-holder child (\d+)", " ".join(doc["stderrTail"]))]
    assert children
    deadline = time.monotonic() + 10
    while any(alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(c) for c in children), "a server's child outlived the snapshot"
    assert servers_of(record) == []


def test_a_server_flooding_requests_without_reading_stdin_cannot_stall_us_or_grow_memory():
    out = probe("request-flood", call_timeout=3)
    assert out["error"]["kind"] == "timeout"
    assert out["elapsed"] < 30  # a 3 s call timeout; was: a 5 s timeout became 125 s
    assert out["rss_mb"] < MEMORY_BOUND_MB  # was: 585 MB after 30 s and growing (1.8 GB)
    assert_server_ended(out)


def test_a_gigabyte_stdout_line_is_dropped_as_it_streams_in():
    out = probe("huge-line", call_timeout=200, timeout=300)
    assert out["error"]["kind"] == "protocol-error"
    assert "over the 32.0 MiB cap" in out["error"]["message"]
    assert out["rss_mb"] < MEMORY_BOUND_MB  # was: 1.2 GB for this 1 GiB line (3.8 GB in the issue)
    assert_server_ended(out)


def test_a_gzip_bomb_over_http_is_capped_after_decompression():
    out = probe("gzip-bomb", transport="http", timeout=300)
    assert out["error"]["kind"] == "protocol-error"
    assert "over the 32.0 MiB cap" in out["error"]["message"]
    assert out["rss_mb"] < MEMORY_BOUND_MB  # was: 690 MB for a 1 MB body inflating to 1 GiB
    assert_server_ended(out)


def test_id_true_is_not_the_answer_to_request_1():
    out = probe("bool-id")
    assert out["error"]["kind"] == "timeout"
    assert "id True arrived instead of id 1" in out["error"]["message"]
    assert out["steps"] == []
    assert_server_ended(out)


def test_a_response_sent_before_its_request_is_not_accepted():
    out = probe("early-response")
    assert out["result"]["structuredContent"] == {"text": "hi"}  # the real answer, not "forged"
    assert "response-before-request" in out["problems"]
    assert_server_ended(out)


def test_a_valid_5000_digit_id_is_a_stray_response_not_invalid_json():
    out = probe("huge-id")
    assert "error" not in out, out.get("error")
    assert out["result"]["structuredContent"] == {"text": "hi"}
    assert "unexpected-id" in out["problems"]
    assert_server_ended(out)


@pytest.mark.parametrize("mode", ["crash-on-call", "ok", "pipe-holder"])
def test_a_server_closing_never_prints_a_reader_thread_traceback(mode, tmp_path):
    r = run_cli(
        "run",
        "--server",
        f"faulty --mode {mode}",
        "--client",
        "claude-code",
        "--results",
        str(tmp_path / "r.jsonl"),
        timeout=120,
    )
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "Exception in thread" not in r.stderr


@pytest.mark.parametrize(
    "args, flag",
    [
        (["--stdio", ""], "--stdio"),
        (["--stdio", 'python "unclosed'], "--stdio"),
        (["--server", ""], "--server"),
        (["--http", "http://[::1"], "--http"),
        (["--http", "http://"], "--http"),
        (["--http", "http://127.0.0.1:9/mcp", "--header", "X-Name:Zo\u00eb\u2192"], "--header"),
        (["--server", "memory", "--timeout-initialize", "1e300"], "--timeout-initialize"),
    ],
)
def test_a_bad_target_flag_is_exit_2_naming_the_flag(args, flag):
    r = run_cli("snapshot", *args, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert flag in r.stderr and "Traceback" not in r.stderr
    assert "memory" not in r.stdout  # --stdio "" used to run the demo server silently
