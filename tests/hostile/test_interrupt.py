"""Ctrl-C: the run stops promptly with exit 130, its results file is valid and ends with
``run-finished`` (``interrupted: true``), what finished is printed, and no server is left behind.

Each server is started with ``--record <a file in this test's tmp dir>``, which marks its
processes so the test finds exactly its own (under xdist, other tests run faulty servers too).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_matrix.run.results import read_events
from tests.conftest import NEUTRAL_CWD

PROMPT = 15.0  # seconds from SIGINT to exit: far below the 30 s call timeout a hung call would take


def servers_of(record: Path) -> list[int]:
    """Live faulty servers started with ``--record record`` (mcp-matrix's own command line holds
    the same words as one argument, so the NUL between the two is what tells them apart)."""
    marker = f"--record\0{record}\0"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline + "\0":
            found.append(int(entry.name))
    return found


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def start(tmp_path: Path, mode: str, *extra: str) -> tuple[subprocess.Popen, Path, Path]:
    results = tmp_path / "r.jsonl"
    record = tmp_path / "calls.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcp_matrix",
            "run",
            "--server",
            f"faulty --mode {mode} --record {record}",
            "--client",
            "continue",
            "--client",
            "claude-code",
            "--results",
            str(results),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=NEUTRAL_CWD,
    )
    return proc, results, record


def interrupt(proc: subprocess.Popen) -> tuple[str, str, float]:
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(
            f"mcp-matrix did not stop within 60 s of SIGINT:\n{err[-2000:]}"
        ) from None
    return out, err, time.monotonic() - sent


def has_call(results: Path) -> bool:
    """A call cell is in the stream (version 3 writes one as a ``called`` line)."""
    return results.exists() and '{"called":' in results.read_text(
        encoding="utf-8", errors="replace"
    )


def assert_interrupted_cleanly(
    proc, out: str, err: str, took: float, results: Path, record: Path
) -> list[dict]:
    assert took < PROMPT, f"took {took:.1f}s to stop"
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err and "Traceback" not in out
    events = read_events(results)
    assert events[0]["event"] == "run-started"
    assert events[-1]["event"] == "run-finished" and events[-1]["interrupted"] is True
    # Every server is gone (mcp-matrix waited for them before exiting).
    assert servers_of(record) == []
    return events


def test_ctrl_c_between_calls_keeps_what_finished_prints_it_and_exits_130(tmp_path):
    proc, results, record = start(tmp_path, "slow --delay 1")
    try:
        wait_for(lambda: has_call(results), 90, "the first call cell")
    except AssertionError:
        proc.kill()
        raise
    out, err, took = interrupt(proc)
    events = assert_interrupted_cleanly(proc, out, err, took, results, record)
    finished_calls = [e for e in events if e["event"] == "call"]
    # Only calls that finished are kept, none cut short into a false verdict.
    assert finished_calls and all(e["verdict"] == "intact" for e in finished_calls)
    assert "interrupted" in out.splitlines()[0] and "echo" in out  # the grid of what finished


@pytest.mark.parametrize("hung", ["profile-calls", "reference-call"])
def test_ctrl_c_during_a_hung_call_stops_at_once_without_recording_a_false_verdict(tmp_path, hung):
    # repeat_safe: false means no reference call, so the two profiles' own calls hang (in worker
    # threads); a read-only echo is first called once on the reference session (the main thread).
    # The call timeout is 30 s: only cutting the calls short can stop the run within PROMPT.
    cases = tmp_path / "cases.yaml"
    safe = "false" if hung == "profile-calls" else "true"
    cases.write_text(
        f"cases:\n  echo:\n    - name: hangs\n      arguments: {{text: x}}\n      repeat_safe: {safe}\n"
    )
    proc, results, record = start(
        tmp_path, "hang-on-call", "--cases", str(cases), "--timeout-call", "30", "--no-auto-cases"
    )
    in_flight = 2 if hung == "profile-calls" else 1
    try:
        wait_for(
            lambda: record.exists() and len(record.read_text().splitlines()) >= in_flight,
            90,
            "the hung calls",
        )
    except AssertionError:
        proc.kill()
        raise
    out, err, took = interrupt(proc)
    events = assert_interrupted_cleanly(proc, out, err, took, results, record)
    # Cut short by us, not broken by the server: no call cell is recorded.
    assert not [e for e in events if e["event"] == "call"]
    assert [e["verdict"] for e in events if e["event"] == "discovery"]  # discovery is kept


def test_ctrl_c_while_connecting_still_ends_the_results_with_run_finished(tmp_path):
    proc, results, record = start(tmp_path, "hang", "--timeout-initialize", "30")
    try:
        wait_for(lambda: servers_of(record), 60, "the server process")
    except AssertionError:
        proc.kill()
        raise
    out, err, took = interrupt(proc)
    events = assert_interrupted_cleanly(proc, out, err, took, results, record)
    assert events[-1]["measured"] is False and events[-1]["error"]["kind"] == "interrupted"
    assert "interrupted" in out.splitlines()[0]


def send_to_another_thread(proc: subprocess.Popen, sig: int) -> None:
    """``sig`` to one of the process's threads that is not its main thread (``tgkill``): what the
    kernel does with a Ctrl-C that arrives while the main thread has it blocked (inside every
    ``Popen``), and what ``raise()`` does on another thread."""
    tids = sorted(int(t.name) for t in Path(f"/proc/{proc.pid}/task").iterdir())
    other = next(tid for tid in tids if tid != proc.pid)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(proc.pid, other, sig) == 0, os.strerror(ctypes.get_errno())


def test_ctrl_c_handled_on_another_thread_still_stops_a_wait_on_the_main_thread(tmp_path):
    # The snapshot's session waits for a hung initialize (60 s bound) in the main thread; the
    # signal lands on another thread. Before the main thread's waits were sliced, the run stopped
    # only when that wait ran out (1 time in 10 under load, in the test above).
    proc, results, record = start(tmp_path, "hang", "--timeout-initialize", "60")
    try:
        wait_for(lambda: servers_of(record), 60, "the server process")
        time.sleep(2)  # the main thread is in its initialize wait by now (any moment will do)
        send_to_another_thread(proc, signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=90)
    except BaseException:
        proc.kill()
        raise
    took = time.monotonic() - sent
    events = assert_interrupted_cleanly(proc, out, err, took, results, record)
    assert events[-1]["error"]["kind"] == "interrupted"
