"""``run --share``: profiles identical on the wire share sessions and read-only answers without
changing a single cell, and a tool that may write is never shared (real CLI, real servers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.profiles.loader import load_profiles, select_profiles
from matrix.results import read_events
from matrix.run_bounds import CircuitBreaker, Deadline
from matrix.sharing import SessionPool, SharingPlan, wire_identity
from matrix.targets import Target
from matrix.wire.session import Timeouts
from tests.conftest import run_cli

READ_ONLY_CASES = """\
server: memory
cases:
  memory_recall:
    - name: by-tags
      arguments: {agent_id: research-bot, tags: [user-prefs], limit: 5}
    - name: by-query
      arguments: {agent_id: research-bot, query: units}
  checkpoint_resume:
    - name: missing-checkpoint
      arguments: {agent_id: nobody-yet, name: never-saved}
"""
# Two pairs identical on the wire (codex/codex-raw; langchain/langchain-google, a session per
# call) and one profile of its own.
CLIENTS = ("codex", "codex-raw", "langchain", "langchain-google", "claude-code")


def run(tmp_path: Path, name: str, share: str, *extra: str, clients=CLIENTS) -> list[dict]:
    results = tmp_path / f"{name}.jsonl"
    args = ["run", "--share", share, "--results", str(results), "--quiet", "--fail-on", "none", *extra]
    for client in clients:
        args += ["--client", client]
    r = run_cli(*args, timeout=400)
    assert r.returncode == 0, r.stderr + r.stdout
    return read_events(results)


def cells(events: list[dict]) -> dict[tuple, dict]:
    """Every discovery and call cell, without the note saying whose answer it got."""
    return {(e["event"], e["profile"], e["tool"], e.get("case")): {k: v for k, v in e.items() if k != "answer_from"}
            for e in events if e["event"] in ("discovery", "call")}


def verdicts(events: list[dict]) -> dict[tuple, tuple]:
    """Every cell's verdict and reason (a stored memory's id and time differ from run to run)."""
    return {key: (e["verdict"], e.get("reason")) for key, e in cells(events).items()}


def sharing(events: list[dict]) -> dict:
    return next(e for e in events if e["event"] == "sharing")


@pytest.mark.timeout(900)  # two runs of five profiles on a loaded machine; no timed assertion
def test_sharing_sessions_and_calls_keeps_every_cell_of_a_read_only_run(tmp_path, transport):
    cases = tmp_path / "cases.yaml"
    cases.write_text(READ_ONLY_CASES)
    target = ("--server", "memory --schema anyof", "--server-transport", transport, "--cases", str(cases))
    alone = run(tmp_path, "none", "none", *target)
    shared = run(tmp_path, "calls", "calls", *target)

    assert cells(shared) == cells(alone)
    assert len([e for e in alone if e["event"] == "call"]) == 4 * len(CLIENTS)  # 3 cases + memory_stats, each
    plan = sharing(shared)
    assert plan["calls"] is True
    assert sorted(map(sorted, plan["sessions"])) == [["codex", "codex-raw"], ["langchain", "langchain-google"]]
    given = {(e["profile"], e["case"]): e["answer_from"] for e in shared if "answer_from" in e}
    # Each call of a pair went once, the other profile got its answer; the profile of its own got none.
    assert len(given) == 8 and "claude-code" not in {p for key in given.items() for p in (key[0][0], key[1])}
    assert sharing(alone)["sessions"] == [] and sharing(alone)["calls"] is False
    assert not any("answer_from" in e for e in alone)


@pytest.mark.timeout(900)
def test_a_run_that_may_write_shares_nothing_and_keeps_every_verdict(tmp_path):
    """The bundled cases store memories and checkpoints: the state can change, so even
    --share calls opens a session per profile and sends every call."""
    alone = run(tmp_path, "none", "none", clients=("codex", "codex-raw", "claude-code"))
    shared = run(tmp_path, "calls", "calls", clients=("codex", "codex-raw", "claude-code"))
    assert verdicts(shared) == verdicts(alone) and len(verdicts(alone)) == 3 * (7 + 19)
    plan = sharing(shared)
    assert plan["sessions"] == [] and plan["calls"] is False
    assert "memory_store" in plan["reason"] and "may write" in plan["reason"]
    assert not any("answer_from" in e for e in shared)


def test_a_tool_that_may_write_is_sent_by_every_profile_even_when_calls_are_shared(tmp_path):
    """The per-call guard, under the run-level rule: a group told to share calls still sends each
    write once per profile; only the read-only call goes once (the server's own record counts)."""
    record = tmp_path / "calls.jsonl"
    target = Target.bundled(f"faulty --mode ok --record {record}")
    profiles = [p for p in select_profiles(load_profiles(), ["codex", "codex-raw"])]
    assert wire_identity(profiles[0]) == wire_identity(profiles[1])
    plan = SharingPlan("calls", (("codex", "codex-raw"),), True, "forced for the test")
    pool = SessionPool(plan, profiles, target, Timeouts(initialize=60, call=60), Deadline(None),
                       CircuitBreaker(False), read_only_tools=["echo"])
    try:
        conns = [pool.connection(p) for p in profiles]
        for conn in conns:
            for tool, args in (("echo", {"text": "hi"}), ("write_note", {"title": "t", "body": "b"})):
                answer = conn.call(tool, args, None, False, False)
                assert answer.wire_error is None and answer.error is None, answer
        assert conns[0].take_answer_from() == [] and conns[1].take_answer_from() == ["codex"]
    finally:
        pool.close()
    sent = [json.loads(line)["name"] for line in record.read_text().splitlines()]
    assert sorted(sent) == ["echo", "write_note", "write_note"]


def test_profiles_that_differ_in_what_they_send_never_share_a_session():
    profiles = {p.name: p for p in select_profiles(load_profiles(), [])}
    # same clientInfo and version, different capabilities / handshake / accepted versions
    assert wire_identity(profiles["claude-code"]) != wire_identity(profiles["claude-code-stdio-negotiation"])
    assert wire_identity(profiles["langchain"]) != wire_identity(profiles["langchain-anthropic"])
    assert wire_identity(profiles["python-sdk"]) != wire_identity(profiles["python-sdk-modern"])
