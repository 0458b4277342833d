"""Benchmarks run in their smoke mode (tiny sizes) so they cannot rot: each one runs to the end
through the real CLI and prints its ratio line. No timing is asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def smoke(script: str, *args: str, timeout: float = 170) -> str:
    """``benchmarks/SCRIPT --smoke ARGS`` to the end (exit 0); what it printed."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_diff_benchmark_runs_to_its_ratio_in_smoke_mode():
    out = smoke("diff.py", "--client", "claude-code")
    assert "time per tool, large / small:" in out


@pytest.mark.timeout(700)  # four whole runs on a loaded machine; no timing asserted
def test_the_run_cost_benchmark_runs_to_its_ratios_in_smoke_mode():
    """Two profiles vs one on the default run and on mcp-server-time (a PyPI server, a test
    extra), each with the --verbose line of sessions and calls against the least."""
    out = smoke("run_cost.py", timeout=600)
    assert out.count("all / one: cpu") == 2
    assert out.count("server sessions for the calls:") == 2


def test_the_report_and_discover_output_benchmark_runs_to_its_ratios_in_smoke_mode():
    out = smoke("report_json.py")
    assert "report -f json: 1 pair(s)" in out and "discover: 1 pair(s)" in out
    assert out.count("A/B cpu:") == 2 and "targets: < 30 MB: yes" in out


def test_the_snapshot_speed_benchmark_runs_to_its_ratio_in_smoke_mode():
    """``mcp-matrix snapshot -o`` against the `mcp` SDK's client on the same stdio server."""
    out = smoke("snapshot_speed.py")
    assert "snapshot of 50 tools on 5 pages, 1 pair(s)" in out
    assert "A/B cpu:" in out and "target A/B cpu <= 1.5x:" in out


def test_the_call_overhead_benchmark_runs_to_its_ratio_in_smoke_mode():
    out = smoke("calls.py")
    assert "overhead ratio:" in out
