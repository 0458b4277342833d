"""Ctrl-C or SIGTERM while mcp-matrix is still starting (its imports take a second, several on a
loaded machine) stops it like one pressed during the run: no traceback, exit 130 or 143, and a
results file that ends with ``run-finished`` (``interrupted: true``).

The signal comes after the CLI module is imported and before ``main`` runs, which is where the
program spends its first seconds (importing the command's modules, parsing its flags): the
process signals itself there, so the timing is exact, not a race with a sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from mcp_matrix.run.results import read_events
from tests.conftest import NEUTRAL_CWD

EARLY = (
    "import os, signal, sys\n"
    "sys.argv = ['mcp-matrix', *sys.argv[1:]]\n"
    "import mcp_matrix.commands.cli\n"  # as the console script does: the module first, then main()
    "os.kill(os.getpid(), getattr(signal, os.environ['EARLY_SIGNAL']))\n"
    "sys.exit(mcp_matrix.commands.cli.main())\n"
)


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_during_start_up_ends_the_run_cleanly_with_its_results(tmp_path, name, code):
    results = tmp_path / "r.jsonl"
    r = subprocess.run(
        [sys.executable, "-c", EARLY, "run", "--server", "memory", "--results", str(results)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=NEUTRAL_CWD,
        env={**os.environ, "EARLY_SIGNAL": name},
        check=False,
    )
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == code, r.stderr[-2000:]
    events = read_events(results)
    assert events[0]["event"] == "run-started"
    assert events[-1]["event"] == "run-finished" and events[-1]["interrupted"] is True


def test_a_signal_during_start_up_of_a_command_without_a_server_stops_it_at_once(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text("not read")
    r = subprocess.run(
        [sys.executable, "-c", EARLY, "report", str(results)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NEUTRAL_CWD,
        env={**os.environ, "EARLY_SIGNAL": "SIGINT"},
        check=False,
    )
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 128 + signal.SIGINT and "interrupted" in r.stderr


DURING_PREPARATION = (
    "import os, signal, sys\n"
    "sys.argv = ['mcp-matrix', *sys.argv[1:]]\n"
    "import mcp_matrix.commands.cli, mcp_matrix.profiles.loader\n"
    "load = mcp_matrix.profiles.loader.runnable_profiles\n"
    "def interrupted_while_loading(*args, **kw):\n"  # Ctrl-C while the profiles are read
    "    os.kill(os.getpid(), signal.SIGINT)\n"
    "    return load(*args, **kw)\n"
    "mcp_matrix.profiles.loader.runnable_profiles = interrupted_while_loading\n"
    "sys.exit(mcp_matrix.commands.cli.main())\n"
)


def test_ctrl_c_while_the_command_prepares_its_run_still_writes_the_results(tmp_path):
    """Between start-up and the first connection (profiles, cases, the results file) a Ctrl-C
    is delivered as the server is connected: the run's own interrupt handling writes its
    results (it was exit 130 with no results file)."""
    results = tmp_path / "r.jsonl"
    r = subprocess.run(
        [sys.executable, "-c", DURING_PREPARATION, "run", "--server", "memory"]
        + ["--results", str(results)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=NEUTRAL_CWD,
        check=False,
    )
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 130, r.stderr[-2000:]
    events = read_events(results)
    assert events[-1]["event"] == "run-finished" and events[-1]["interrupted"] is True
