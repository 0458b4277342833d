"""``mcp-matrix run`` end to end: the real CLI against real servers, every verdict kind and exit code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.report.discovery_doc import read_discovery
from mcp_matrix.run.results import read_events
from tests.conftest import installed_tool, run_cli_in_process


def calls(results: Path) -> dict[tuple[str, str, str], dict]:
    return {
        (e["profile"], e["tool"], e["case"]): e
        for e in read_events(results)
        if e["event"] == "call"
    }


def discovery(results: Path) -> dict[tuple[str, str], dict]:
    return {(e["profile"], e["tool"]): e for e in read_events(results) if e["event"] == "discovery"}


def write_cases(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cases.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.timeout(
    600
)  # every bundled profile on 2 shared cores: the CLI's own bound (400 s) comes first
def test_the_default_run_shows_the_decision_records_stories_per_client(cli, tmp_path):
    results = tmp_path / "r.jsonl"
    r = cli("run", "--results", str(results), "--quiet", "--jobs", "8", timeout=400)
    # The default gate: a tool hidden in a real client fails the run.
    assert r.returncode == 1, r.stderr + r.stdout
    assert "release gate: FAILED" in r.stdout
    c = calls(results)
    # root anyOf: hidden in Claude Code 2.1.144 - 2.1.278, so its calls are unreachable there ...
    assert discovery(results)[("claude-code-278", "memory_reflect")]["verdict"] == "hidden"
    assert c[("claude-code-278", "memory_reflect", "alias-only")]["verdict"] == "unreachable"
    # ... today's Claude Code (2.1.332) shows it, the anyOf restated as prose in its description,
    assert discovery(results)[("claude-code", "memory_reflect")]["verdict"] == "degraded"
    assert c[("claude-code", "memory_reflect", "alias-only")]["verdict"] == "intact"
    # ... while a pass-through client delivers the alias and the canonical spelling intact,
    assert c[("continue", "memory_reflect", "alias-only")]["verdict"] == "intact"
    assert c[("continue", "memory_reflect", "both-different")]["verdict"] == "intact"
    # and malformed identities are refused by the server (intact: the expected error).
    assert c[("continue", "memory_reflect", "agent-id-whitespace")]["verdict"] == "intact"
    # The grid is printed with every client as a one-letter column and a legend.
    # The grid's legend gives claude-code a letter (which one depends on the bundled profiles).
    assert "memory_reflect" in r.stdout and re.search(r"\b[A-Za-z] claude-code\b", r.stdout)


def test_the_flat_variant_is_visible_in_claude_code_and_its_calls_arrive(cli, tmp_path, transport):
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "memory",
        "--server-transport",
        transport,
        "--client",
        "claude-code",
        "--client",
        "gemini-cli",
        "--results",
        str(results),
        timeout=300,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert discovery(results)[("claude-code", "memory_reflect")]["verdict"] == "visible"
    assert calls(results)[("claude-code", "memory_reflect", "canonical-only")]["verdict"] in (
        "intact",
    )


def test_a_stale_serialiser_is_loud_on_a_strict_server(cli, tmp_path):
    results = tmp_path / "r.jsonl"
    cli(
        "run",
        "--server",
        "memory",
        "--client",
        "stale-serialiser",
        "--results",
        str(results),
        timeout=120,
    )
    e = calls(results)[("stale-serialiser", "memory_store", "with-tags-and-importance")]
    assert e["verdict"] == "loud"
    assert {"kind": "stringified", "pointer": "/tags"} in [
        {k: m[k] for k in ("kind", "pointer")} for m in e["mutations"]
    ]


def test_a_server_that_accepts_mangled_values_is_silent_corruption_and_exit_1(cli, tmp_path):
    cases = write_cases(
        tmp_path,
        """
cases:
  echo:
    - name: list
      arguments: {text: hi, items: [1, 2]}
      repeat_safe: false
""",
    )
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "faulty --mode ok",
        "--client",
        "stale-serialiser",
        "--cases",
        cases,
        "--results",
        str(results),
        timeout=120,
    )
    assert calls(results)[("stale-serialiser", "echo", "list")]["verdict"] == "silent-corruption"
    assert r.returncode == 1


def test_an_expected_error_the_server_accepts_is_accepted_invalid(cli, tmp_path):
    cases = write_cases(
        tmp_path,
        """
cases:
  echo:
    - name: should-fail
      arguments: {text: ""}
      expect: error
""",
    )
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "faulty --mode ok",
        "--client",
        "continue",
        "--cases",
        cases,
        "--results",
        str(results),
        timeout=120,
    )
    assert calls(results)[("continue", "echo", "should-fail")]["verdict"] == "accepted-invalid"
    assert r.returncode == 1


def test_a_crash_mid_call_is_broken_with_the_servers_last_words_and_other_cells_are_kept(
    cli, tmp_path, transport
):
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "faulty --mode crash-on-call",
        "--server-transport",
        transport,
        "--client",
        "continue",
        "--results",
        str(results),
        "--timeout-call",
        "5",
        timeout=120,
    )
    c = calls(results)
    assert c[("continue", "echo", "auto")]["verdict"] == "broken"
    assert discovery(results)[("continue", "echo")]["verdict"] == "visible"
    assert r.returncode == 1 and "Traceback" not in r.stderr


def test_unlisted_tools_that_may_write_are_skipped_and_never_called(cli, tmp_path):
    record = tmp_path / "calls.jsonl"
    results = tmp_path / "r.jsonl"
    cli(
        "run",
        "--server",
        f"faulty --mode ok --record {record}",
        "--client",
        "continue",
        "--results",
        str(results),
        timeout=120,
    )
    called = (
        {json.loads(line)["name"] for line in record.read_text().splitlines()}
        if record.exists()
        else set()
    )
    assert "write_note" not in called and "delete_all" not in called
    assert "echo" in called
    skipped = {e["tool"]: e["reason"] for e in read_events(results) if e["event"] == "skipped"}
    assert "destructiveHint" in skipped["delete_all"] and "readOnlyHint" in skipped["write_note"]


def test_a_target_that_cannot_be_measured_exits_3_with_a_results_file_that_says_why(cli, tmp_path):
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "faulty --mode crash-on-initialize",
        "--results",
        str(results),
        timeout=60,
    )
    assert r.returncode == 3
    finish = read_events(results)[-1]
    assert finish["event"] == "run-finished" and finish["measured"] is False


def test_a_malformed_cases_file_is_exit_2_naming_the_file_line_and_key(tmp_path):
    cases = write_cases(tmp_path, "cases:\n  echo:\n    - name: x\n      expect: maybe\n")
    r = run_cli_in_process(
        "run", "--server", "faulty", "--cases", cases
    )  # an input error: no process
    assert r.returncode == 2
    assert f"{cases}:4" in r.stderr and "expect" in r.stderr and "success, error" in r.stderr


def test_an_unknown_client_is_exit_2_with_did_you_mean():
    r = run_cli_in_process("run", "--client", "claude-cod")
    assert r.returncode == 2 and "did you mean 'claude-code'" in r.stderr


def test_a_third_party_server_runs_through_every_profile(cli, tmp_path):
    exe = installed_tool("mcp-server-time")
    assert exe, "the test extra installs mcp-server-time from PyPI"
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--stdio",
        f"{exe} --local-timezone UTC",
        "--results",
        str(results),
        "--quiet",
        "--client",
        "claude-code",
        "--client",
        "gemini-cli",
        "--client",
        "vercel-ai-sdk-google",
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    d = discovery(results)
    assert d[("claude-code", "convert_time")]["verdict"] == "visible"
    # observed (clients/calibrations/vercel-ai-sdk-google): @ai-sdk/google 4.0.121 sends the schema unconverted
    assert d[("vercel-ai-sdk-google", "convert_time")]["verdict"] == "visible"
    c = calls(results)
    assert (
        c[("gemini-cli", "get_current_time", "auto")]["verdict"] == "intact"
    )  # read-only: an automatic case


def test_discovery_of_a_third_party_server_covers_every_profile(cli):
    exe = installed_tool("mcp-server-time")
    r = cli("discover", "--stdio", f"{exe} --local-timezone UTC", "--json")
    assert r.returncode == 0, r.stderr
    doc = read_discovery(json.loads(r.stdout))
    assert len(doc["profiles"]) == len([p for p in load_profiles().values() if not p.abstract])
    # mcp-server-time runs the Python SDK 2.3 dual-era stdio loop, which refuses the late initialize
    # of Claude Code's stdio negotiation (claude-code#96183): that one client gets no session.
    assert all(
        t["verdict"] in ("visible", "degraded")
        for p in doc["profiles"]
        for t in p["tools"]
        if p["profile"] != "claude-code-stdio-negotiation"
    )


def test_gateway_v2_with_the_v1_schema_cached_loses_the_new_field_silently_on_rich_tools_only(
    shared_work,
):
    # one run a test session: the pytest plugin's test compares its own stale-cache run with it
    r, results = shared_work.stale_clients_on_gateway_v2()
    c = calls(results)
    for rich in ("memory_write", "dispatch_record", "context_feedback"):
        assert c[("stale-cache", rich, "with-v2-field")]["verdict"] == "silent-loss"
        assert c[("stale-cache", f"{rich}_raw", "with-v2-field")]["verdict"] == "intact"
        assert c[("stale-serialiser", rich, "with-v2-field")]["verdict"] == "loud"
        assert c[("stale-serialiser", f"{rich}_raw", "with-v2-field")]["verdict"] == "intact"
    assert r.returncode == 1  # silent-loss fails a release by default


def test_a_mutated_call_that_gets_the_intact_calls_answer_is_tolerated(cli, tmp_path):
    # mcp-server-time ignores unknown arguments; the stale-cache probe strips the one its schema lacks.
    exe = installed_tool("mcp-server-time")
    cases = write_cases(
        tmp_path,
        """
cases:
  convert_time:
    - name: with-extra-note
      arguments: {source_timezone: UTC, time: "14:00", target_timezone: Europe/Paris, note: "from the old client"}
""",
    )
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--stdio",
        f"{exe} --local-timezone UTC",
        "--client",
        "stale-cache",
        "--cases",
        cases,
        "--no-auto-cases",
        "--results",
        str(results),
        timeout=120,
    )
    e = calls(results)[("stale-cache", "convert_time", "with-extra-note")]
    assert e["verdict"] == "tolerated", e
    assert e["mutations"][0]["kind"] == "removed" and e["mutations"][0]["pointer"] == "/note"
    assert r.returncode == 0


def test_an_intact_valid_call_the_server_rejects_is_failed_and_an_invalid_one_is_loud(
    cli, tmp_path, transport
):
    cases = write_cases(
        tmp_path,
        """
cases:
  memory_recall:
    - name: blank-agent
      arguments: {agent_id: "   "}
    - name: too-many
      arguments: {agent_id: research-bot, limit: 500}
""",
    )
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "memory",
        "--server-transport",
        transport,
        "--client",
        "continue",
        "--cases",
        cases,
        "--no-auto-cases",
        "--results",
        str(results),
        timeout=120,
    )
    # valid against the listed inputSchema (a string), refused by the server's own check: the server is wrong
    e = calls(results)[("continue", "memory_recall", "blank-agent")]
    assert e["verdict"] == "failed" and "refused" in e["reason"]
    # limit 500 breaks the listed maximum (100): the refusal is the legible answer to an invalid call
    e = calls(results)[("continue", "memory_recall", "too-many")]
    assert e["verdict"] == "loud" and "inputSchema" in e["reason"]
    assert [(v["validator"], v["path"], v["instance"]) for v in e["violations"]] == [
        ("maximum", ["limit"], 500)
    ]
    assert r.returncode == 0  # neither is release-failing by default


def test_a_client_that_validates_refuses_an_invalid_call_loudly_before_it_reaches_the_server(
    cli, tmp_path
):
    record = tmp_path / "calls.jsonl"
    cases = write_cases(
        tmp_path,
        """
cases:
  echo:
    - name: wrong-type
      arguments: {text: 5}
""",
    )
    results = tmp_path / "r.jsonl"
    cli(
        "run",
        "--server",
        f"faulty --mode ok --record {record}",
        "--client",
        "gemini-cli",
        "--cases",
        cases,
        "--no-auto-cases",
        "--results",
        str(results),
        timeout=120,
    )
    e = calls(results)[("gemini-cli", "echo", "wrong-type")]
    assert e["verdict"] == "loud" and "client's own validation" in e["reason"]
    sent = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    # None: gemini-cli never sent it (and no intact twin goes out beside a call never sent).
    assert not [c for c in sent if c["name"] == "echo" and c["arguments"] == {"text": 5}]


def test_a_case_for_a_tool_the_server_does_not_list_is_exit_2_before_any_call(cli, tmp_path):
    """A typo (or a tool the server renamed) in the cases file: checked against tools/list, before
    any call, with the file, the line and key of the tool, and the nearest tool the server lists."""
    cases = write_cases(
        tmp_path,
        (
            "cases:\n"
            "  memory_store:\n"
            "    - name: plain\n"
            "      arguments: {agent_id: a1, content: hello}\n"
            "  memory_refelct:\n"
            "    - name: typo\n"
            "      arguments: {agent_id: a1}\n"
        ),
    )
    results = tmp_path / "r.jsonl"
    r = cli(
        "run",
        "--server",
        "memory",
        "--client",
        "claude-code",
        "--cases",
        cases,
        "--results",
        str(results),
        timeout=180,
    )
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert (
        f"mcp-matrix: error: {cases}:5: cases.memory_refelct: the server does not list this tool "
        "(did you mean 'memory_reflect'?); its case(s) typo were not run"
    ) in r.stderr
    assert "Traceback" not in r.stderr
    events = read_events(results)
    assert not [
        e for e in events if e["event"] in ("call", "discovery")
    ]  # not even the valid case was called
    assert events[-1]["event"] == "run-finished" and events[-1]["measured"] is False
