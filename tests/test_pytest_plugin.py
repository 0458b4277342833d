"""The pytest plugin, run through pytester in a subprocess as a server's test suite would."""

from __future__ import annotations

from matrix.results import read_events
from tests.conftest import run_cli

pytest_plugins = ["pytester"]


def test_every_cell_becomes_a_test_with_a_readable_id(pytester):
    r = pytester.runpytest_subprocess("--mcp-server", "memory --schema anyof", "--mcp-client", "claude-code",
                                      "-v", "-p", "no:cacheprovider", timeout=180)
    out = r.stdout.str()
    assert "memory_reflect[claude-code]::alias-only PASSED" in out
    assert "memory_reflect[claude-code] PASSED" in out
    r.assert_outcomes(passed=26, failed=0)  # 7 discovery cells + 19 calls (18 listed cases, 1 automatic)


def test_cells_fail_exactly_where_the_policy_fails_and_match_the_cli(pytester, tmp_path):
    base = tmp_path / "v1.json"
    assert run_cli("snapshot", "--server", "gateway --version 1", "-o", str(base)).returncode == 0
    plugin_results = tmp_path / "plugin.jsonl"
    r = pytester.runpytest_subprocess(
        "--mcp-server", "gateway --version 2", "--mcp-baseline", str(base), "--mcp-client", "stale-cache",
        "--mcp-results", str(plugin_results), "-p", "no:cacheprovider", timeout=180,
    )
    r.assert_outcomes(failed=3, passed=len([e for e in read_events(plugin_results) if e["event"] in ("call", "discovery")]) - 3)
    assert "memory_write[stale-cache]::with-v2-field" in r.stdout.str()
    cli_results = tmp_path / "cli.jsonl"
    run_cli("run", "--server", "gateway --version 2", "--baseline", str(base), "--client", "stale-cache",
            "--results", str(cli_results), timeout=180)

    def verdicts(path):
        return {(e["profile"], e["tool"], e.get("case")): e["verdict"] for e in read_events(path)
                if e["event"] in ("call", "discovery")}

    assert verdicts(plugin_results) == verdicts(cli_results)


def test_the_fixture_runs_the_matrix_from_a_servers_own_test(pytester):
    pytester.makepyfile(test_mine="""
def test_alias_still_works_in_continue(mcp_matrix):
    run = mcp_matrix.run(server="memory", clients=["continue"])
    assert run.verdict("memory_reflect", "continue", "alias-only") == "intact"
    assert run.verdict("memory_reflect", "continue") == "visible"
""")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=180)
    r.assert_outcomes(passed=1)


def test_without_a_target_option_the_plugin_adds_nothing(pytester):
    pytester.makepyfile(test_x="def test_x():\n    assert True\n")
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    r.assert_outcomes(passed=1)
