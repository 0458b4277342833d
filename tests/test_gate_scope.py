"""What the release gate judges, and the words that say so agree with it (issue 22.6, 22.13).

- An opt-in configuration (``required_by_default: false``, not a probe: python-sdk-modern pinned
  to 2026-07-28) never fails the gate unless it is required by name. Measured over Streamable
  HTTP: the faulty server speaks only the handshake era, so python-sdk-modern's calls are
  ``broken``; ``run`` and ``check`` exited 1 on them while the output called them "not required by
  default". Its cause is labelled so exactly when the gate ignores it; a policy that requires it
  fails.
- A ``loud`` refusal whose advice is "keep validating strictly" (the strict server refusing a
  stringified array) is the safe outcome, not a problem to fix.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from mcp_matrix.core.verdicts import RELEASE_FAILING
from mcp_matrix.report.grid import LOST_TOOL
from mcp_matrix.run.results import read_events
from tests.conftest import run_cli, run_cli_in_process

LABEL = "not required by default"
FAILING = (*RELEASE_FAILING, *LOST_TOOL)


def test_an_opt_in_profile_never_fails_the_gate_over_http_and_its_label_says_so(tmp_path):
    results = tmp_path / "r.jsonl"
    r = run_cli(
        "run",
        "--server",
        "faulty --mode ok",
        "--server-transport",
        "http",
        "--client",
        "python-sdk-modern",
        "--client",
        "claude-code",
        "--results",
        str(results),
    )
    cells = read_events(results)
    # what would fail the gate in a required client (at acad0d4: python-sdk-modern's calls broken)
    bad = [c for c in cells if c["event"] in ("call", "discovery") and c["verdict"] in FAILING]
    assert bad and {c["profile"] for c in bad} == {"python-sdk-modern"}
    assert r.returncode == 0, r.stdout
    assert "release gate: passed" in r.stdout
    problems = r.stdout.split("\n\n")[1]  # the problems list: python-sdk-modern's cause, labelled
    assert "python-sdk-modern" in problems and LABEL in problems

    check = run_cli_in_process("check", str(results))
    assert check.returncode == 0, check.stdout
    assert "FAILED" not in check.stdout
    junit = ET.fromstring(run_cli_in_process("report", str(results), "-f", "junit").stdout)
    assert junit.get("failures") == "0"

    # required by name, the same cells fail it, and the label is gone
    policy = tmp_path / "policy.yaml"
    policy.write_text("required_clients: [claude-code, python-sdk-modern]\n", encoding="utf-8")
    named = run_cli_in_process("check", str(results), "--policy", str(policy))
    assert named.returncode == 1
    failed = [line for line in named.stdout.splitlines() if line.startswith("FAILED")]
    assert failed and all("python-sdk-modern" in line for line in failed), named.stdout


def test_run_require_naming_an_opt_in_profile_fails_on_its_broken_calls():
    """``run --require`` judges the calls of the clients it names, as ``check --policy`` does
    (before, ``run`` counted only their lost tools: the broken calls passed)."""
    r = run_cli(
        "run",
        "--server",
        "faulty --mode ok",
        "--server-transport",
        "http",
        "--client",
        "python-sdk-modern",
        "--require",
        "python-sdk-modern",
    )
    assert r.returncode == 1, r.stdout
    assert "release gate: FAILED" in r.stdout


def test_a_loud_refusal_the_model_can_read_is_the_safe_outcome_not_a_problem(tmp_path):
    r = run_cli(
        "run",
        "--server",
        "strict",
        "--client",
        "claude-code-legacy",
        "--client",
        "claude-desktop",
    )
    assert r.returncode == 0, r.stdout
    assert "⚠ loud" in r.stdout  # the clients stringify an array, the strict server refuses it
    assert "Problems to fix" not in r.stdout
    assert "No problems to fix" in r.stdout
    assert "Loud, the safe outcome" in r.stdout and "tags_strict" in r.stdout
