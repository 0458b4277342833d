"""Benchmarks run in their smoke mode (tiny sizes) so they cannot rot: each one runs to the end
through the real CLI and prints its ratio line. No timing is asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
