"""Every run ends within ``--timeout-run`` plus a documented grace, whatever the transport or the
phase a hostile server holds (a POST, its status line, its body, a notification, a reply to the
server's own request, the close, the pages), and its results file is valid and ends with
``run-finished`` (issue 24, docs/security.md "Runs that end in their deadline").

Each test starts tests/hostile/deadline_server.py in one attack mode and runs the real CLI
against it. Time bounds are hang detectors: three times the run's deadline plus its grace (the
machine may be loaded), far below what each attack reached before (a run killed at 200-600 s).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcp_matrix.run.bounds import DEADLINE_GRACE
from mcp_matrix.run.results import read_events
from tests.conftest import NEUTRAL_CWD, run_cli

SERVER = Path(__file__).with_name("deadline_server.py")
TIMEOUTS = ("--timeout-initialize", "5", "--timeout-list", "5", "--timeout-call", "5")


@contextmanager
def hostile(mode: str, *args: str) -> Iterator[str]:
    """The hostile server in ``mode``, listening; its URL."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), mode, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=NEUTRAL_CWD,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("MCP_MATRIX_LISTENING "), line
        yield line.split()[1]
    finally:
        proc.kill()
        proc.wait(10)


def bounded_run(tmp_path: Path, *target: str, deadline: float, extra=()) -> tuple:
    """``run`` with ``--timeout-run deadline``: the process, its wall time and its events."""
    results = tmp_path / "r.jsonl"
    started = time.monotonic()
    r = run_cli(
        "run",
        *target,
        "--client",
        "cursor",
        "--results",
        str(results),
        *TIMEOUTS,
        "--timeout-run",
        str(deadline),
        *extra,
        timeout=3 * (deadline + DEADLINE_GRACE) + 30,
    )
    elapsed = time.monotonic() - started
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    events = read_events(results)
    assert events[0]["event"] == "run-started" and events[-1]["event"] == "run-finished", events
    return r, elapsed, events


def assert_ended_in_time(elapsed: float, deadline: float) -> None:
    # The interpreter's start and a server's are outside the deadline's grace: 3x, generously.
    assert elapsed < 3 * (deadline + DEADLINE_GRACE), elapsed


@pytest.mark.parametrize(
    "mode", ["sse-post-hang", "sse-status-dribble", "sse-endless", "sse-body-dribble"]
)
def test_a_legacy_sse_post_held_or_dribbled_ends_the_run_in_its_deadline(tmp_path, mode):
    """Was: the POST read with no read timeout and no cap (killed at 200-300 s, results empty;
    an endless body 8.1 GB)."""
    deadline = 8.0
    with hostile(mode) as url:
        r, elapsed, events = bounded_run(tmp_path, "--sse", url, deadline=deadline)
    assert_ended_in_time(elapsed, deadline)
    assert r.returncode in (1, 3), (r.returncode, r.stderr[-2000:])
    calls = [e for e in events if e["event"] in ("call", "skipped") and e.get("profile")]
    assert calls, "every call is a cell or is explained"
    assert "release gate: passed" not in r.stdout


def test_a_streamable_http_notification_never_answered_costs_seconds_not_the_run(tmp_path):
    """Was: the POST of ``notifications/initialized`` read for 60 s (68 s with a 30 s deadline,
    and "release gate: passed" with exit 3). Now its status is waited for 5 s at most and the
    calls are made."""
    deadline = 20.0
    with hostile("http-initialized-hang") as url:
        r, elapsed, events = bounded_run(tmp_path, "--http", url, deadline=deadline)
    assert_ended_in_time(elapsed, deadline)
    verdicts = [e["verdict"] for e in events if e["event"] == "call"]
    assert verdicts and set(verdicts) <= {"intact", "tolerated"}, verdicts
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_dribbled_delete_at_close_does_not_hold_the_run(tmp_path):
    """Was: 174 s with ``--timeout-run 120`` (every session's DELETE dribbled 1 byte / 2 s)."""
    deadline = 20.0
    with hostile("http-delete-dribble") as url:
        r, elapsed, _ = bounded_run(tmp_path, "--http", url, deadline=deadline)
    assert_ended_in_time(elapsed, deadline)
    assert r.returncode == 0, r.stderr[-2000:]


def test_a_server_request_held_on_the_call_stream_ends_in_the_call_timeout(tmp_path):
    """The server asks ``roots/list`` on the call's stream and never answers the POST of our
    reply. Was: each reply held the session 60 s (127 s past a 120 s deadline, every call "not
    called" and the gate "passed"). Now the call is ``broken`` at its own timeout."""
    deadline = 15.0
    with hostile("http-request-hold") as url:
        r, elapsed, events = bounded_run(tmp_path, "--http", url, deadline=deadline)
    assert_ended_in_time(elapsed, deadline)
    calls = [e for e in events if e["event"] == "call"]
    assert calls and all(e["verdict"] == "broken" for e in calls), calls
    assert r.returncode == 1
    assert "release gate: passed" not in r.stdout


def test_slow_pagination_ends_at_the_run_deadline_with_its_results(tmp_path):
    """100 pages, 2 s each, each under ``--timeout-list 5``. Was: every page got the time left
    when the first began (hard-killed at 600 s with a 60 s deadline, results empty). Now all
    pages together end at the deadline: the results say the listing was cut there, exit 3."""
    deadline = 8.0
    command = f"{sys.executable} {SERVER} stdio-slow-pages 100 2"
    r, elapsed, events = bounded_run(tmp_path, "--stdio", command, deadline=deadline)
    assert_ended_in_time(elapsed, deadline)
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    error = events[-1]["error"]
    assert error["kind"] == "timeout" and "the run's deadline" in error["message"], error
    assert events[-1]["deadline_passed"] is True


def test_a_run_cut_short_by_its_deadline_never_prints_a_passed_gate(tmp_path):
    """Calls that take longer than the run: nothing failed, nothing was measured. Was: "release
    gate: passed" printed above exit 3."""
    deadline = 6.0
    command = f"{sys.executable} {SERVER} stdio-slow-calls 60"
    r, elapsed, events = bounded_run(
        tmp_path, "--stdio", command, deadline=deadline, extra=("--timeout-call", "60")
    )
    assert_ended_in_time(elapsed, deadline)
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    assert events[-1]["deadline_passed"] is True
    assert "release gate: passed" not in r.stdout
    assert (
        "release gate: NOT PASSED: the run's deadline (--timeout-run 6 s) passed first" in r.stdout
    )
