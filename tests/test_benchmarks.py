"""Benchmarks run in their smoke mode (tiny sizes) so they cannot rot: each one runs to the end
through the real CLI and prints its ratio line. No timing is asserted here."""

from __future__ import annotations

import json
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
    """Two profiles vs one on the default run, on mcp-server-time (a PyPI server, a test
    extra) and on server-filesystem (an npm server, installed once into the shared cache), each
    with the --verbose line of sessions and calls against the least."""
    out = smoke("run_cost.py", timeout=600)
    assert out.count("all / one: cpu") == 3
    assert out.count("server sessions for the calls:") == 3
    assert "server-filesystem" in out and "started cold: not a Python" in out  # Node: never forked


def test_the_report_and_discover_output_benchmark_runs_to_its_ratios_in_smoke_mode():
    out = smoke("report_json.py")
    assert "report -f json: 1 pair(s)" in out and "discover: 1 pair(s)" in out
    assert out.count("A/B cpu:") == 2 and "targets: < 30 MB: yes" in out
    assert 'RESULT {"benchmark": "results stream"' in out  # the stream's own size row


def test_the_snapshot_speed_benchmark_runs_to_its_ratio_in_smoke_mode():
    """``mcp-matrix snapshot -o`` against the `mcp` SDK's client on the same stdio server."""
    out = smoke("snapshot_speed.py")
    assert "snapshot of 50 tools on 5 pages, 1 pair(s)" in out
    assert "A/B cpu:" in out and "target A/B cpu <= 1.5x:" in out
    assert 'RESULT {"benchmark": "help"' in out  # --help beside --version


def test_the_call_overhead_benchmark_runs_to_its_ratio_in_smoke_mode():
    out = smoke("calls.py")
    assert "overhead ratio:" in out


def test_the_replay_benchmark_runs_to_its_ratio_in_smoke_mode():
    """``mcp-matrix replay`` of synthetic calls against a fastjsonschema loop over the same calls."""
    out = smoke("replay.py")
    assert "A/B cpu:" in out and "target A/B cpu <= 5x:" in out
    assert 'RESULT {"benchmark": "replay"' in out


def test_the_discovery_benchmark_runs_to_its_ratio_in_smoke_mode():
    out = smoke("discovery.py")
    assert "ratio discovery / baseline:" in out and 'RESULT {"benchmark": "discovery"' in out


def test_the_discover_terminal_and_json_benchmark_runs_to_its_ratios_in_smoke_mode():
    """``discover`` (the terminal) beside ``discover --json``, at every bundled profile and at 3."""
    out = smoke("discovery.py", "--cli")
    assert out.count('RESULT {"benchmark": "discover terminal"') == 2
    assert out.count('RESULT {"benchmark": "discover json"') == 2 and "(all)" in out


def test_the_html_report_benchmark_runs_to_its_ratio_in_smoke_mode():
    out = smoke("html_report.py")
    assert "A/B cpu:" in out and 'RESULT {"benchmark": "html_report"' in out


def test_every_benchmark_has_a_smoke_mode_and_ends_with_a_result_line():
    """What run_all.py runs is every benchmark script; each says --smoke and prints RESULT."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from run_all import BENCHMARKS as LISTED
    finally:
        sys.path.remove(str(BENCHMARKS))
    scripts = {p.name for p in BENCHMARKS.glob("*.py")} - {"run_all.py", "synthetic.py", "whole.py"}
    assert {argv[0] for argv in LISTED.values()} == scripts
    for script in scripts:
        text = (BENCHMARKS / script).read_text(encoding="utf-8")
        assert '"--smoke"' in text and "result(" in text, script


def run_all_smoke(readme, *names: str) -> str:
    """``benchmarks/run_all.py --smoke --only NAMES --write-readme`` into ``readme``; its output."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "run_all.py"), "--smoke", "--only", ",".join(names)]
        + ["--write-readme", "--readme", str(readme)],
        capture_output=True,
        text=True,
        timeout=170,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_run_all_writes_the_readme_table_from_the_benchmarks_own_result_lines(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\nProse that stays.\n", encoding="utf-8")
    out = run_all_smoke(readme, "discovery")
    printed = next(line for line in out.splitlines() if line.startswith("RESULT "))
    row = json.loads(printed[len("RESULT ") :])
    text = readme.read_text(encoding="utf-8")
    assert "Prose that stays." in text
    assert f"| discovery | {row['what']} | {row['baseline']} | {row['a']} | {row['b']} |" in text
    run_all_smoke(readme, "discovery")
    assert readme.read_text(encoding="utf-8").count("| discovery |") == 1  # replaced, not added
