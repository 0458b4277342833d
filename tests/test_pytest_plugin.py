"""The pytest plugin, run through pytester in a subprocess as a server's test suite would."""

from __future__ import annotations

import pytest

from matrix.results import read_events

pytest_plugins = ["pytester"]


def test_every_cell_becomes_a_test_with_a_readable_id(pytester):
    # claude-code-278 (Claude Code 2.1.144 - 2.1.278) hides a tool with a root anyOf.
    r = pytester.runpytest_subprocess(
        "--mcp-server",
        "memory --schema anyof",
        "--mcp-client",
        "claude-code-278",
        "--mcp-timeout-initialize",
        "60",  # a Python server on 2 loaded cores
        "-v",
        "-p",
        "no:cacheprovider",
        timeout=180,
    )
    out = r.stdout.str()
    assert "memory_reflect[claude-code-278]::alias-only PASSED" in out
    # The default gate: a real client must see every tool; the failure says why and the fix.
    assert "memory_reflect[claude-code-278] FAILED" in out
    assert "inputSchema has anyOf at the root" in out and "fix: Flatten the root" in out
    r.assert_outcomes(
        passed=26, failed=1
    )  # 7 discovery cells + 19 calls (18 listed, 1 automatic) + the run


@pytest.mark.timeout(600)  # a snapshot, the plugin's run and the CLI's run, each bounded by 180 s
def test_cells_fail_exactly_where_the_policy_fails_and_match_the_cli(
    pytester, tmp_path, shared_work
):
    # The CLI's run (stale-cache and stale-serialiser on gateway v2, v1 cached) and v1's snapshot
    # are made once a test session: test_run_cli asserts that run's verdicts.
    cli_answer, cli_results = shared_work.stale_clients_on_gateway_v2()
    assert cli_answer.returncode == 1, cli_answer.stderr
    plugin_results = tmp_path / "plugin.jsonl"
    r = pytester.runpytest_subprocess(
        "--mcp-server",
        "gateway --version 2",
        "--mcp-baseline",
        str(shared_work.snapshot_file("gateway --version 1")),
        "--mcp-client",
        "stale-cache",
        "--mcp-results",
        str(plugin_results),
        "-p",
        "no:cacheprovider",
        timeout=180,
    )
    plugin_results = tmp_path / "plugin-stale-cache.jsonl"  # one results file per client
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
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=180)
    r.assert_outcomes(passed=1)


def test_without_a_target_option_the_plugin_adds_nothing(pytester):
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    r.assert_outcomes(passed=1)


def test_collecting_connects_but_calls_nothing(pytester):
    # Every call of this server hangs for the 600 s bound: collection finishing inside the
    # test's bound (180 s) shows that no call was made.
    r = pytester.runpytest_subprocess(
        "--mcp-server",
        "faulty --mode hang-on-call",
        "--mcp-timeout-call",
        "600",
        "--co",
        "-q",
        "-p",
        "no:cacheprovider",
        timeout=180,
    )
    out = r.stdout.str()
    assert "echo[claude-code]::auto" in out and "echo[zed]" in out
    assert r.ret == 0


def test_dash_k_runs_one_clients_matrix_only(pytester, tmp_path):
    results = tmp_path / "r.jsonl"
    r = pytester.runpytest_subprocess(
        "--mcp-server",
        "memory",
        "--mcp-client",
        "claude-code",
        "--mcp-client",
        "continue",
        "--mcp-results",
        str(results),
        "-k",
        "continue",
        "-q",
        "-p",
        "no:cacheprovider",
        timeout=240,
    )
    assert r.ret == 0, r.stdout.str()[-2000:]
    assert (tmp_path / "r-continue.jsonl").is_file()
    assert not (tmp_path / "r-claude-code.jsonl").exists()  # deselected: never run


def test_a_marker_per_client_selects_its_cells(pytester):
    r = pytester.runpytest_subprocess(
        "--mcp-server",
        "memory",
        "--mcp-client",
        "claude-code",
        "--mcp-client",
        "continue",
        "-m",
        "mcp_client_claude_code",
        "--co",
        "-q",
        "-p",
        "no:cacheprovider",
        timeout=180,
    )
    out = r.stdout.str()
    assert "memory_reflect[claude-code]" in out and "[continue]" not in out


def test_xdist_workers_collect_the_same_items_and_run_every_cell(pytester):
    r = pytester.runpytest_subprocess(
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
        "60",
        "-p",
        "no:cacheprovider",
        timeout=300,
    )
    out = r.stdout.str()
    assert "different tests were collected" not in out, out[-3000:]
    outcomes = r.parseoutcomes()
    assert (
        outcomes.get("passed", 0) + outcomes.get("failed", 0) == 2 * 27
    )  # every cell of both clients ran
    assert "memory_reflect[claude-code-278]" in out


def test_timeouts_and_env_reach_the_server(pytester):
    pytester.makepyfile(
        test_mine="""
def test_a_short_call_bound_makes_a_hanging_call_broken(mcp_matrix):
    from matrix.wire.session import Timeouts
    run = mcp_matrix.run(server="faulty --mode hang-on-call", clients=["claude-code"],
                         timeouts=Timeouts(call=1.0), env={"MCP_MATRIX_TEST": "1"})
    assert run.verdict("echo", "claude-code", "auto") == "broken"
    assert "1.0s" in run.cell("echo", "claude-code", "auto").reason
"""
    )
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=180)
    r.assert_outcomes(passed=1)
