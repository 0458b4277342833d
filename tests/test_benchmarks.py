"""Benchmarks run in their smoke mode (tiny sizes) so they cannot rot: each one runs to the end
through the real CLI and prints its ratio line. No timing is asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_the_diff_benchmark_runs_to_its_ratio_in_smoke_mode():
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "diff.py"), "--smoke", "--client", "claude-code"],
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stderr
    assert "time per tool, large / small:" in done.stdout


@pytest.mark.timeout(700)  # four whole runs on a loaded machine; no timing asserted
def test_the_run_cost_benchmark_runs_to_its_ratios_in_smoke_mode():
    """Two profiles vs one on the default run and on mcp-server-time (a PyPI server, a test
    extra), each with the --verbose line of sessions and calls against the least."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run_cost.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("all / one: cpu") == 2
    assert done.stdout.count("server sessions for the calls:") == 2


def test_the_report_and_discover_output_benchmark_runs_to_its_ratios_in_smoke_mode():
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "report_json.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stderr
    assert "report -f json: 1 pair(s)" in done.stdout and "discover: 1 pair(s)" in done.stdout
    assert done.stdout.count("A/B cpu:") == 2 and "targets: < 30 MB: yes" in done.stdout


def test_the_snapshot_speed_benchmark_runs_to_its_ratio_in_smoke_mode():
    """``mcp-matrix snapshot -o`` against the `mcp` SDK's client on the same stdio server."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "snapshot_speed.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stderr
    assert "snapshot of 50 tools on 5 pages, 1 pair(s)" in done.stdout
    assert "A/B cpu:" in done.stdout and "target A/B cpu <= 1.5x:" in done.stdout


def test_the_call_overhead_benchmark_runs_to_its_ratio_in_smoke_mode():
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "calls.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stderr
    assert "overhead ratio:" in done.stdout
