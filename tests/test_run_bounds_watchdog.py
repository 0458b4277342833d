"""The run's last bound (``mcp_matrix.run.bounds.Watchdog``): a run still going ``grace`` seconds
past its deadline is stopped as Ctrl-C stops it; one that ignores even that has its results
ended by ``last_words`` and the process exits 3. Each case runs in a process of its own with the
CLI's signal handling (``mcp_matrix.commands.signals``), blocked where no wire wait should block."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent(
    """
    import sys, threading
    from mcp_matrix.commands import signals
    from mcp_matrix.run.bounds import Watchdog

    signals.install()
    stubborn = sys.argv[1] == "stubborn"
    words = lambda: print("last words", flush=True)
    with Watchdog(0.5, grace=0.5, final=2.0, last_words=words) as dog:
        try:
            threading.Event().wait(60)  # blocked, as a wait with no bound would be
        except KeyboardInterrupt:
            print("stopped", dog.fired, flush=True)
            if stubborn:
                threading.Event().wait(60)  # the stop path itself hangs
    print("ended", flush=True)
    """
)


def run(kind: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, kind], capture_output=True, text=True, timeout=60
    )
    return r, time.monotonic() - started


def test_a_run_past_its_deadline_and_grace_is_stopped_as_ctrl_c_stops_it():
    r, elapsed = run("plain")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["stopped", "True", "ended"]
    assert elapsed < 30  # 1 s of deadline and grace; was: the 60 s wait


def test_a_stop_path_that_hangs_ends_with_last_words_and_exit_3():
    r, elapsed = run("stubborn")
    assert r.returncode == 3, r.stderr
    assert r.stdout.split() == ["stopped", "True", "last", "words"]
    assert elapsed < 30
