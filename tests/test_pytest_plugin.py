"""The pytest plugin, run in a subprocess as a server's test suite would (pytester's, or for the
one xdist session two tests read, made once a test run through ``shared_work``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from mcp_matrix.run.results import read_events

pytest_plugins = ["pytester"]


# memory --schema anyof through claude-code-278 and continue, on 2 xdist workers: one inner
# session serves the readable-id test and the xdist test (the same claude-code-278 cells).
ANYOF_UNDER_XDIST = (
    "--mcp-server",
    "memory --schema anyof",
    "--mcp-client",
    "claude-code-278",
    "--mcp-client",
    "continue",
    "-n",
    "2",
    "--dist",
    "loadgroup",
    "--mcp-timeout-initialize",
    "60",  # a Python server on 2 loaded cores
    "-v",
    "-p",
    "no:cacheprovider",
)
# xdist's -v line of an item:
# "[gw1] [ 12%] PASSED mcp-matrix::memory_reflect[claude-code-278]::alias-only"
XDIST_ITEM_LINE = re.compile(
    r"^\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|SKIPPED|ERROR) mcp-matrix::(\S+)"
)

# The bundled memory server through claude-code and continue: the selection tests pick one.
MEMORY_TWO_CLIENTS = (
    "--mcp-server",
    "memory",
    "--mcp-client",
    "claude-code",
    "--mcp-client",
    "continue",
)


def inner(pytester, *args: str, timeout: float):
    """An inner pytest session in a subprocess, without the cache plugin (nothing written)."""
    return pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider", timeout=timeout)


@pytest.fixture
def anyof_under_xdist(shared_work) -> str:
    """The output of ``pytest ANYOF_UNDER_XDIST`` in a subprocess (as a server's suite runs it),
    in an empty directory, once a test run: both tests that read it, on any outer worker."""

    def run(directory: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        r = subprocess.run(
            [sys.executable, "-m", "pytest", f"--basetemp={directory / 'tmp'}", *ANYOF_UNDER_XDIST],
            cwd=directory,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        (directory / "stdout.txt").write_text(r.stdout + r.stderr)

    session = shared_work.directory("pytest " + " ".join(ANYOF_UNDER_XDIST), run)
    return (session / "stdout.txt").read_text()


@pytest.mark.timeout(400)  # the inner session's own bound (300 s) comes first
def test_every_cell_becomes_a_test_with_a_readable_id(anyof_under_xdist):
    out = anyof_under_xdist
    items = {m[2]: m[1] for m in map(XDIST_ITEM_LINE.match, out.splitlines()) if m}
    # claude-code-278 (Claude Code 2.1.144 - 2.1.278) hides a tool with a root anyOf.
    assert items["memory_reflect[claude-code-278]::alias-only"] == "PASSED"
    # The default gate: a real client must see every tool; the failure says why and the fix.
    assert items["memory_reflect[claude-code-278]"] == "FAILED"
    assert "inputSchema has anyOf at the root" in out and "fix: Flatten the root" in out
    # 7 discovery cells + 19 calls (18 listed, 1 automatic)
    mine = Counter(outcome for name, outcome in items.items() if "[claude-code-278]" in name)
    assert mine == {"PASSED": 25, "FAILED": 1}, out[-3000:]
    assert items["policy"] == "PASSED"  # the run as a whole, judged once for both clients


@pytest.mark.timeout(600)  # a snapshot, the plugin's run and the CLI's run, each bounded by 180 s
def test_cells_fail_exactly_where_the_policy_fails_and_match_the_cli(
    pytester, tmp_path, shared_work
):
    # The CLI's run (stale-cache and stale-serialiser on gateway v2, v1 cached) and v1's snapshot
    # are made once a test session: test_run_cli asserts that run's verdicts.
    cli_answer, cli_results = shared_work.stale_clients_on_gateway_v2()
    assert cli_answer.returncode == 1, cli_answer.stderr
    plugin_results = tmp_path / "plugin.jsonl"
    r = inner(
        pytester,
        "--mcp-server",
        "gateway --version 2",
        "--mcp-baseline",
        str(shared_work.snapshot_file("gateway --version 1")),
        "--mcp-client",
        "stale-cache",
        "--mcp-results",
        str(plugin_results),
        timeout=180,
    )
    cells = [e for e in read_events(plugin_results) if e["event"] in ("call", "discovery")]
    r.assert_outcomes(failed=3, passed=len(cells) - 3 + 1)  # + the run-level policy item
    out = r.stdout.str()
    assert "memory_write[stale-cache]::with-v2-field" in out
    assert "fix: " in out  # a failure says what to change

    def verdicts(path):
        return {
            (e["profile"], e["tool"], e.get("case")): e["verdict"]
            for e in read_events(path)
            if e["event"] in ("call", "discovery") and e["profile"] == "stale-cache"
        }

    assert verdicts(plugin_results) == verdicts(cli_results) != {}


def test_the_fixture_runs_the_matrix_from_a_servers_own_test(pytester):
    pytester.makepyfile(
        test_mine="""
def test_alias_still_works_in_continue(mcp_matrix):
    run = mcp_matrix.run(server="memory", clients=["continue"])
    assert run.verdict("memory_reflect", "continue", "alias-only") == "intact"
    assert run.verdict("memory_reflect", "continue") == "visible"
"""
    )
    r = inner(pytester, timeout=180)
    r.assert_outcomes(passed=1)


def test_without_a_target_option_the_plugin_adds_nothing(pytester):
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    r = inner(pytester, timeout=60)
    r.assert_outcomes(passed=1)


def test_collecting_connects_but_calls_nothing(pytester):
    # Every call of this server hangs for the 600 s bound: collection finishing inside the
    # test's bound (180 s) shows that no call was made.
    r = inner(
        pytester,
        "--mcp-server",
        "faulty --mode hang-on-call",
        "--mcp-timeout-call",
        "600",
        "--co",
        "-q",
        timeout=180,
    )
    out = r.stdout.str()
    assert "echo[claude-code]::auto" in out and "echo[zed]" in out
    assert r.ret == 0


def test_dash_k_runs_one_clients_matrix_only(pytester, tmp_path):
    results = tmp_path / "r.jsonl"
    r = inner(
        pytester,
        *MEMORY_TWO_CLIENTS,
        "--mcp-results",
        str(results),
        "-k",
        "[continue]",
        "-q",
        timeout=240,
    )
    assert r.ret == 0, r.stdout.str()[-2000:]
    measured = {e["profile"] for e in read_events(results) if e["event"] in ("call", "discovery")}
    assert measured == {"continue"}  # claude-code's items were deselected: never run


def test_a_marker_per_client_selects_its_cells(pytester):
    r = inner(
        pytester,
        *MEMORY_TWO_CLIENTS,
        "-m",
        "mcp_client_claude_code",
        "--co",
        "-q",
        timeout=180,
    )
    out = r.stdout.str()
    assert "memory_reflect[claude-code]" in out and "[continue]" not in out


@pytest.mark.timeout(400)
def test_xdist_workers_collect_the_same_items_and_run_every_cell(anyof_under_xdist):
    out = anyof_under_xdist
    assert "different tests were collected" not in out, out[-3000:]
    outcomes = pytest.RunResult.parse_summary_nouns(out.splitlines())
    # every cell of both clients ran, and the policy
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2 * 26 + 1
    assert "memory_reflect[claude-code-278]" in out


def test_timeouts_and_env_reach_the_server(pytester):
    pytester.makepyfile(
        test_mine="""
def test_a_short_call_bound_makes_a_hanging_call_broken(mcp_matrix):
    from mcp_matrix.wire.session import Timeouts
    run = mcp_matrix.run(server="faulty --mode hang-on-call", clients=["claude-code"],
                         timeouts=Timeouts(call=1.0), env={"MCP_MATRIX_TEST": "1"})
    assert run.verdict("echo", "claude-code", "auto") == "broken"
    assert "1.0s" in run.cell("echo", "claude-code", "auto").reason
"""
    )
    r = inner(pytester, timeout=180)
    r.assert_outcomes(passed=1)
