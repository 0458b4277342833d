"""``mcp-matrix check`` and ``merge``: the release gate over real results, its exit codes and stale expected failures."""

from __future__ import annotations

import pytest

from mcp_matrix.run.results import read_events
from tests.conftest import run_cli, run_cli_in_process

# ``check`` and ``merge`` of a results file read files only: in this process (a second saved per
# call); a check that runs the target, and every run, keep a process of their own.
check_here = run_cli_in_process


@pytest.fixture(scope="module")
def gateway_results(tmp_path_factory):
    """One real run: gateway v2 with the v1 schema cached (silent loss for the caching probe)."""
    d = tmp_path_factory.mktemp("gw")
    assert (
        run_cli("snapshot", "--server", "gateway --version 1", "-o", str(d / "v1.json")).returncode
        == 0
    )
    r = run_cli(
        "run",
        "--server",
        "gateway --version 2",
        "--baseline",
        str(d / "v1.json"),
        "--client",
        "stale-cache",
        "--client",
        "claude-code",
        "--results",
        str(d / "r.jsonl"),
        "--quiet",
        timeout=180,
    )
    assert r.returncode == 1, r.stderr
    return d / "r.jsonl"


def policy(tmp_path, text: str) -> str:
    p = tmp_path / "policy.yaml"
    p.write_text(text)
    return str(p)


def test_check_fails_a_release_with_silent_loss_and_names_each_cell_with_its_evidence(
    gateway_results, tmp_path
):
    out = tmp_path / "checklist.md"
    r = check_here("check", str(gateway_results), "-o", str(out))
    assert r.returncode == 1
    assert "FAILED no silent-loss for memory_write::with-v2-field[stale-cache]" in r.stdout
    assert "passed the run finished" in r.stdout
    md = out.read_text()
    assert (
        md.startswith("## mcp-matrix release checklist") and "- [ ] no silent-loss for memory" in md
    )


def test_expected_failures_with_a_reason_let_the_release_pass(gateway_results, tmp_path):
    p = policy(
        tmp_path,
        """
expected_failures:
  - {client: stale-cache, tool: memory_write, verdict: silent-loss, reason: "probe; rich tools are legacy"}
  - {client: stale-cache, tool: dispatch_record, verdict: silent-loss, reason: "probe; rich tools are legacy"}
  - {client: stale-cache, tool: context_feedback, verdict: silent-loss, reason: "probe; rich tools are legacy"}
""",
    )
    r = check_here("check", str(gateway_results), "--policy", p)
    assert r.returncode == 0, r.stdout
    assert "expected failure: probe; rich tools are legacy" in r.stdout


def test_an_expected_failure_that_no_longer_fails_is_stale_and_fails_the_check(
    gateway_results, tmp_path
):
    p = policy(
        tmp_path,
        """
fail_on: [broken]
expected_failures:
  - {client: claude-code, tool: memory_write_raw, reason: "was broken once"}
""",
    )
    r = check_here("check", str(gateway_results), "--policy", p)
    assert r.returncode == 1
    assert "stale: it no longer fails" in r.stdout


def test_required_clients_must_see_every_tool(tmp_path):
    results = tmp_path / "r.jsonl"
    run_cli(
        "run",
        "--server",
        "memory --schema anyof",
        "--client",
        "claude-code-278",
        "--no-auto-cases",
        "--cases",
        str(policy(tmp_path, "cases: {}\n")),
        "--results",
        str(results),
        timeout=120,
    )
    p = policy(tmp_path, "required_clients: [claude-code-278]\nfail_on: []\n")
    r = check_here("check", str(results), "--policy", p)
    assert r.returncode == 1
    assert "FAILED claude-code-278 sees memory_reflect" in r.stdout and "hidden" in r.stdout
    assert "passed claude-code-278 sees memory_store" in r.stdout


def test_the_policy_can_live_in_pyproject_toml(gateway_results, tmp_path):
    py = tmp_path / "pyproject.toml"
    py.write_text('[tool.mcp-matrix]\nfail_on = ["broken"]\n')
    assert check_here("check", str(gateway_results), "--policy", str(py)).returncode == 0
    py.write_text('[tool.mcp-matrix]\nfail_on = ["silent"]\n')
    r = check_here("check", str(gateway_results), "--policy", str(py))
    assert r.returncode == 2 and "tool.mcp-matrix.fail_on[0]" in r.stderr


def test_a_malformed_policy_is_exit_2_with_file_line_and_key(gateway_results, tmp_path):
    p = policy(tmp_path, "expected_failures:\n  - client: x\n")
    r = check_here("check", str(gateway_results), "--policy", p)
    assert r.returncode == 2
    assert f"{p}:2" in r.stderr and "reason" in r.stderr and "Traceback" not in r.stderr


def test_merge_joins_runs_and_the_merged_file_checks_like_its_parts(gateway_results, tmp_path):
    merged = tmp_path / "merged.jsonl"
    r = check_here("merge", str(gateway_results), str(gateway_results), "-o", str(merged))
    assert r.returncode == 0
    events = read_events(merged)
    assert events == 2 * read_events(gateway_results)
    assert sum(e["event"] == "run-started" for e in events) == 2
    assert check_here("check", str(merged)).returncode == 1


def test_merge_refuses_a_file_that_is_not_results(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "call"}\n')
    r = check_here("merge", str(bad))
    assert r.returncode == 2 and f"{bad}:1" in r.stderr


def test_a_policy_naming_an_unknown_client_is_exit_2_with_its_line_before_anything_runs(tmp_path):
    marker = tmp_path / "server-started"
    p = policy(tmp_path, "fail_on: [broken]\nrequired_clients:\n  - claude-code\n  - cursr\n")
    r = run_cli("check", "--stdio", f"touch {marker}", "--policy", p, timeout=120)
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert (
        f"mcp-matrix: error: {p}:4: required_clients[1]: unknown client profile 'cursr' "
        "(did you mean 'cursor'?)"
    ) in r.stderr
    assert not marker.exists()  # the check came before the fresh run started any server


def test_check_without_a_results_file_runs_the_target_now_and_applies_the_policy(tmp_path):
    p = policy(tmp_path, "required_clients: [claude-code-278]\nfail_on: []\n")
    r = run_cli(
        "check",
        "--server",
        "memory --schema anyof",
        "--client",
        "claude-code-278",
        "--policy",
        p,
        timeout=300,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAILED claude-code-278 sees memory_reflect" in r.stdout and "hidden" in r.stdout
    assert "passed claude-code-278 sees memory_store" in r.stdout
