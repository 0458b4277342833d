"""SIGTERM is Ctrl-C, and Ctrl-C while a server is being closed loses nothing (issue 15,
docs/security.md): valid results ending with run-finished, reports written, no server left,
a finished snapshot kept. Real CLI, real faulty servers, real signals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from mcp_matrix.run.results import read_events
from mcp_matrix.targets.probes import HANDSHAKE_PROBES
from mcp_matrix.wire.session import LATEST_PROTOCOL
from tests.conftest import NEUTRAL_CWD
from tests.hostile.test_interrupt import has_call, servers_of, start, wait_for


def test_sigterm_ends_a_run_like_ctrl_c_with_results_reports_and_no_server_left(tmp_path):
    report = tmp_path / "r.md"
    proc, results, record = start(tmp_path, "slow --delay 1", "--report", f"md:{report}")
    try:
        wait_for(lambda: has_call(results), 90, "the first call cell")
    except AssertionError:
        proc.kill()
        raise
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err[-2000:]  # 128 + SIGTERM
    assert "Traceback" not in err
    events = read_events(results)
    assert events[-1]["event"] == "run-finished" and events[-1]["interrupted"] is True
    assert report.exists() and "echo" in report.read_text()
    assert servers_of(record) == []


def _closing_servers(record: Path) -> int:
    """How many faulty servers started with ``--record record`` have seen their stdin closed."""
    return record.read_text().count("(stdin closed)") if record.exists() else 0


# The snapshot's servers: the main session, the modern-era probe and one handshake probe per
# other version (mcp_matrix.targets.probes); every one is a slow-exit server that takes 3 s to end.
SNAPSHOT_SERVERS = 2 + len([v for v in HANDSHAKE_PROBES if v != LATEST_PROTOCOL])


def started_until_closing(record: Path, *args: str) -> subprocess.Popen:
    """The CLI on slow-exit servers, returned once every one of them saw its stdin closed: the
    main session has its snapshot and is being closed (or waits for a probe being closed)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_matrix", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=NEUTRAL_CWD,
    )
    try:
        wait_for(
            lambda: _closing_servers(record) >= SNAPSHOT_SERVERS,
            120,
            "every server to see its stdin closed",
        )
    except AssertionError:
        proc.kill()
        raise
    return proc


def ctrl_c_twice(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)  # twice: an impatient user
    _out, err = proc.communicate(timeout=90)
    return err


def test_ctrl_c_while_the_server_is_closing_keeps_the_snapshot_and_ends_the_server(tmp_path):
    record = tmp_path / "calls.jsonl"
    snap = tmp_path / "snap.json"
    proc = started_until_closing(
        record,
        "snapshot",
        "--server",
        f"faulty --mode slow-exit --record {record}",
        "-o",
        str(snap),
    )
    err = ctrl_c_twice(proc)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    assert servers_of(record) == []  # was: the server leaked 4 times of 4
    doc = json.loads(snap.read_text())  # was: the finished snapshot was discarded
    assert len(doc["tools"]) == 4 and doc["error"] is None


def test_ctrl_c_while_run_closes_its_snapshot_sessions_ends_the_results_and_every_server(tmp_path):
    record = tmp_path / "calls.jsonl"
    results = tmp_path / "r.jsonl"
    report = tmp_path / "r.md"
    proc = started_until_closing(
        record,
        "run",
        "--server",
        f"faulty --mode slow-exit --record {record}",
        "--client",
        "claude-code",
        "--results",
        str(results),
        "--report",
        f"md:{report}",
    )
    err = ctrl_c_twice(proc)
    assert proc.returncode == 130, err[-2000:]  # was: the run went on and exited 0
    assert "Traceback" not in err
    assert servers_of(record) == []
    events = read_events(results)
    assert [e["event"] for e in events[:2]] == ["run-started", "snapshot"]
    assert len(events[1]["snapshot"]["tools"]) == 4  # the finished snapshot is kept
    assert events[-1]["event"] == "run-finished" and events[-1]["interrupted"] is True
    assert report.exists()
