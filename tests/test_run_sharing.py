"""``run --share``: profiles identical on the wire share sessions and read-only answers without
changing a single cell, and a tool that may write is never shared (real CLI, real servers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.run.bounds import CircuitBreaker, Deadline
from mcp_matrix.run.connection import wire_handshake
from mcp_matrix.run.results import read_events
from mcp_matrix.run.session_pool import SessionPool, fresh_identities
from mcp_matrix.run.sharing import (
    ServerEras,
    SharingPlan,
    plan_sharing,
    stateless,
    wire_identity,
)
from mcp_matrix.targets.kinds import Target
from mcp_matrix.wire.session import Timeouts
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


def _profiles() -> list:
    return [p for p in select_profiles(load_profiles(), []) if not p.abstract]


def _per_call(profile) -> bool:
    return any(use.name == "new-session-per-call" for use in profile.call)


# The memory server answers initialize at the version asked for, and server/discover at 2026-07-28
MEMORY = ServerEras(
    negotiated={"2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25"},
    modern_asked="2026-07-28",
    modern=("2026-07-28",),
)


def _pairs() -> tuple[tuple[str, str], tuple[str, str], str]:
    """Two groups identical on the wire (one keeping its session, one opening a session per call)
    and one profile of its own, found from the profiles themselves (names change, identities stay).
    The one alone stays alone on the memory server too, where profiles reaching the 2026-07-28
    era at once share a session (each request carrying its own identity)."""
    profiles = {p.name: p for p in _profiles()}
    groups = plan_sharing("sessions", list(profiles.values()), []).groups
    on_memory = plan_sharing("sessions", list(profiles.values()), [], MEMORY).units
    single = {g[0] for g in on_memory if len(g) == 1}
    kept = next(g[:2] for g in groups if len(g) > 1 and not _per_call(profiles[g[0]]))
    per_call = next(g[:2] for g in groups if len(g) > 1 and _per_call(profiles[g[0]]))
    alone = next(
        g[0] for g in groups if len(g) == 1 and not _per_call(profiles[g[0]]) and g[0] in single
    )
    return kept, per_call, alone


KEPT, PER_CALL, ALONE = _pairs()
CLIENTS = (*KEPT, *PER_CALL, ALONE)


def run(tmp_path: Path, name: str, share: str, *extra: str, clients=CLIENTS) -> list[dict]:
    results = tmp_path / f"{name}.jsonl"
    args = [
        "run",
        "--share",
        share,
        "--results",
        str(results),
        "--quiet",
        "--fail-on",
        "none",
        *extra,
    ]
    for client in clients:
        args += ["--client", client]
    r = run_cli(*args, timeout=400)
    assert r.returncode == 0, r.stderr + r.stdout
    return read_events(results)


def cells(events: list[dict]) -> dict[tuple, dict]:
    """Every discovery and call cell, without the note saying whose answer it got."""
    return {
        (e["event"], e["profile"], e["tool"], e.get("case")): {
            k: v for k, v in e.items() if k != "answer_from"
        }
        for e in events
        if e["event"] in ("discovery", "call")
    }


def verdicts(events: list[dict]) -> dict[tuple, tuple]:
    """Every cell's verdict and reason (a stored memory's id and time differ from run to run)."""
    return {key: (e["verdict"], e.get("reason")) for key, e in cells(events).items()}


def sharing(events: list[dict]) -> dict:
    return next(e for e in events if e["event"] == "sharing")


@pytest.mark.timeout(900)  # two runs of five profiles on a loaded machine; no timed assertion
def test_sharing_sessions_and_calls_keeps_every_cell_of_a_read_only_run(tmp_path, transport):
    cases = tmp_path / "cases.yaml"
    cases.write_text(READ_ONLY_CASES)
    target = (
        "--server",
        "memory --schema anyof",
        "--server-transport",
        transport,
        "--cases",
        str(cases),
    )
    alone = run(tmp_path, "none", "none", *target)
    shared = run(tmp_path, "calls", "calls", *target)

    assert cells(shared) == cells(alone)
    assert len([e for e in alone if e["event"] == "call"]) == 4 * len(
        CLIENTS
    )  # 3 cases + memory_stats, each
    plan = sharing(shared)
    assert plan["calls"] is True
    assert sorted(map(sorted, plan["sessions"])) == sorted([sorted(KEPT), sorted(PER_CALL)])
    given = {(e["profile"], e["case"]): e["answer_from"] for e in shared if "answer_from" in e}
    # Each call of a pair went once, the other profile got its answer; the profile of its own got none.
    assert len(given) == 8 and ALONE not in {
        p for key in given.items() for p in (key[0][0], key[1])
    }
    assert sharing(alone)["sessions"] == [] and sharing(alone)["calls"] is False
    assert not any("answer_from" in e for e in alone)


@pytest.mark.timeout(900)
def test_a_run_that_may_write_shares_nothing_and_keeps_every_verdict(tmp_path):
    """The bundled cases store memories and checkpoints: the state can change, so even
    --share calls opens a session per profile and sends every call."""
    alone = run(tmp_path, "none", "none", clients=(*KEPT, ALONE))
    shared = run(tmp_path, "calls", "calls", clients=(*KEPT, ALONE))
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
    by_name = {p.name: p for p in _profiles()}
    profiles = [by_name[KEPT[0]], by_name[KEPT[1]]]
    assert wire_identity(profiles[0]) == wire_identity(profiles[1])
    plan = SharingPlan("calls", (KEPT,), True, "forced for the test")
    pool = SessionPool(
        plan,
        profiles,
        target,
        Timeouts(initialize=60, call=60),
        Deadline(None),
        CircuitBreaker(False),
        read_only_tools=["echo"],
    )
    try:
        conns = [pool.connection(p) for p in profiles]
        for conn in conns:
            for tool, args in (
                ("echo", {"text": "hi"}),
                ("write_note", {"title": "t", "body": "b"}),
            ):
                answer = conn.call(tool, args, None, False, False)
                assert answer.wire_error is None and answer.error is None, answer
        assert conns[0].take_answer_from() == [] and conns[1].take_answer_from() == [KEPT[0]]
    finally:
        pool.close()
    sent = [json.loads(line)["name"] for line in record.read_text().splitlines()]
    assert sorted(sent) == ["echo", "write_note", "write_note"]


def test_a_profile_that_repeats_a_shared_call_gets_the_servers_answer_to_a_repeat(tmp_path):
    """A repeat asks whether the server's answer changed (the check behind ``unverified``): a
    profile's first ask gets the group's first answer, its repeat the server's answer to a
    second ask of the same bytes, sent by whichever profile repeats first (a kept first answer
    cannot say whether it changed)."""
    record = tmp_path / "calls.jsonl"
    by_name = {p.name: p for p in _profiles()}
    profiles = [by_name[KEPT[0]], by_name[KEPT[1]]]
    plan = SharingPlan("calls", (KEPT,), True, "forced for the test", (KEPT,))
    pool = SessionPool(
        plan,
        profiles,
        Target.bundled(f"faulty --mode ok --record {record}"),
        Timeouts(initialize=60, call=60),
        Deadline(None),
        CircuitBreaker(False),
        read_only_tools=["echo"],
    )
    try:
        first, second = (pool.connection(p) for p in profiles)
        for conn in (first, second, second, first, first):
            assert conn.call("echo", {"text": "hi"}, None, False, False).ok
        assert second.take_answer_from() == [KEPT[0]] and first.take_answer_from() == [KEPT[1]]
        work = pool.work()
    finally:
        pool.close()
    sent = [json.loads(line)["name"] for line in record.read_text().splitlines()]
    # the first call, the second profile's repeat, the first profile's third ask
    assert sent == ["echo", "echo", "echo"]
    assert (work.sessions, work.calls, work.least_sessions, work.least_calls) == (1, 3, 1, 3)


def test_profiles_that_differ_in_anything_they_send_never_share_a_session():
    profiles = _profiles()
    groups = plan_sharing("sessions", profiles, []).groups
    by_name = {p.name: p for p in profiles}
    for group in groups:
        sent = {
            (
                json.dumps(dict(by_name[n].identity.client_info), sort_keys=True),
                by_name[n].identity.protocol_version,
                json.dumps(dict(by_name[n].identity.capabilities), sort_keys=True),
                wire_handshake(by_name[n]),
            )
            for n in group
        }
        assert len(sent) == 1, group
    # the same clientInfo and version, but another handshake or other accepted versions: apart
    python_sdk = [
        p for p in profiles if dict(p.identity.client_info) == {"name": "mcp", "version": "0.1.0"}
    ]
    assert len({wire_identity(p) for p in python_sdk}) > 1 and len(groups) < len(profiles)
    # a run that may write shares nothing, whatever the mode
    write = {"name": "w", "annotations": {"readOnlyHint": False}}
    assert all(len(g) == 1 for g in plan_sharing("calls", profiles, [write]).groups)


def test_answers_to_session_per_call_calls_are_shared_only_on_a_server_whose_state_is_its_process():
    """A bundled SDK server over stdio starts empty for each session (its store is a temporary
    file of its own) unless ``--db`` names a file; any other target may keep state between
    sessions, so a write there reaches it as often as the profiles make it."""
    profiles = _profiles()[:3]
    assert fresh_identities(Target.bundled("memory"), profiles, MEMORY) is not None
    assert fresh_identities(Target.bundled("memory --schema anyof"), profiles, None) is not None
    for target in (
        Target.bundled("memory --db /tmp/x.db"),
        Target.bundled("memory", transport="http"),
        Target.bundled("faulty"),
        Target.stdio("python -m matrix_servers.memory"),
    ):
        assert fresh_identities(target, profiles, MEMORY) is None, target
    fresh = fresh_identities(Target.bundled("memory"), profiles, MEMORY)
    assert fresh is not None
    keys = {fresh.key(p.name, ["t", {}, None, False]) for p in profiles}
    sent = {(wire_identity(p, MEMORY), json.dumps(p.identity.client_info)) for p in profiles}
    assert len(keys) == len(sent)
    # in the 2026-07-28 era every request carries its client's identity: profiles that reach it
    # at once share a wire identity, never a key unless their clientInfo is the same too
    modern = [p for p in _profiles() if stateless(p, MEMORY)]
    by_client = {json.dumps(p.identity.client_info, sort_keys=True): p for p in modern}
    assert len(by_client) > 1
    fresh = fresh_identities(Target.bundled("memory"), list(by_client.values()), MEMORY)
    assert fresh is not None
    assert len({fresh.key(p.name, ["t", {}, None, False]) for p in by_client.values()}) == len(
        by_client
    )
