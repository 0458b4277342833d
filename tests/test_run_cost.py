"""What a run costs the server, counted at the server: profiles it cannot tell apart share one
session (one server process over stdio) and send each distinct read-only call once, with every
cell as it is when each profile has its own session; ``--verbose`` says what was made against the
least (real CLI, the bundled memory server writing a line per call it receives, with its pid)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.run.results import read_events
from mcp_matrix.run.sharing import ServerEras, plan_sharing, wire_identity
from tests.conftest import run_cli
from tests.test_run_sharing import MEMORY, READ_ONLY_CASES, verdicts

WORK = re.compile(
    r"server sessions for the calls: (\d+) opened \(least (\d+)\); "
    r"tools/call: (\d+) sent \(least (\d+)\)"
)


def _profiles() -> dict:
    return {p.name: p for p in select_profiles(load_profiles(), []) if not p.abstract}


def _per_call(profile) -> bool:
    return any(use.name == "new-session-per-call" for use in profile.call)


def _groups(eras: ServerEras | None = None) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Profiles the server cannot tell apart, found from the profiles themselves: two of a group
    keeping its session (on the memory server: profiles that reach the 2026-07-28 era at once,
    each request carrying its own clientInfo), a group opening a session per call (3), and one
    profile alone, with a clientInfo of its own, so the server's log tells the groups apart."""
    by_name = _profiles()
    units = plan_sharing("sessions", list(by_name.values()), [], eras).units

    def client(name: str) -> str:
        info = by_name[name].identity.client_info
        return f"{info.get('name')}/{info.get('version')}"

    per_call = next(g for g in units if len(g) > 2 and _per_call(by_name[g[0]]))
    group = next(g for g in units if len(g) > 1 and not _per_call(by_name[g[0]]))
    kept = [n for n in group if client(n) != client(per_call[0])][:2]
    taken = {client(kept[0]), client(kept[1]), client(per_call[0])}
    alone = next(
        g[0]
        for g in units
        if len(g) == 1 and not _per_call(by_name[g[0]]) and client(g[0]) not in taken
    )
    assert len(taken) == 3 or client(kept[0]) == client(kept[1]) != client(per_call[0])
    return tuple(kept), per_call, alone


KEPT, PER_CALL, ALONE = _groups(MEMORY)


def run(tmp_path: Path, name: str, *extra: str) -> tuple[list[dict], list[dict], tuple[int, ...]]:
    """One run of the read-only cases through the chosen profiles: its events, the server's log
    of the calls it received, and the --verbose counts (opened, least, sent, least)."""
    cases, log, results = (
        tmp_path / "cases.yaml",
        tmp_path / f"{name}.log",
        tmp_path / f"{name}.jsonl",
    )
    cases.write_text(READ_ONLY_CASES)
    args = ["run", "--server", f"memory --call-log {log}", "--cases", str(cases)]
    for client in (*KEPT, *PER_CALL, ALONE):
        args += ["--client", client]
    r = run_cli(
        *args, "--results", str(results), "--verbose", "--fail-on", "none", *extra, timeout=600
    )
    assert r.returncode == 0, r.stderr + r.stdout
    found = WORK.search(r.stdout.replace("\n", " "))
    assert found, r.stdout[-3000:]
    received = [json.loads(line) for line in log.read_text().splitlines()]
    return read_events(results), received, tuple(int(n) for n in found.groups())


def counted(args: list[str], results: Path) -> tuple[tuple[int, ...], list[dict]]:
    """One run of the CLI: its --verbose counts (opened, least, sent, least) and its events."""
    r = run_cli(*args, "--results", str(results), timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    found = WORK.search(r.stdout.replace("\n", " "))
    assert found, r.stdout[-3000:]
    return tuple(int(n) for n in found.groups()), read_events(results)


@pytest.mark.timeout(900)  # two runs of six profiles on a loaded machine; no timed assertion
def test_profiles_the_server_cannot_tell_apart_cost_the_least_and_keep_every_verdict(tmp_path):
    alone, sent_alone, work_alone = run(tmp_path, "none", "--share", "none")
    shared, sent_shared, work_shared = run(tmp_path, "default")

    assert verdicts(shared) == verdicts(alone)
    # every distinct call (the client that sent it, its bytes) reaches the server exactly once
    distinct = Counter(
        json.dumps([c["client"], c["tool"], c["arguments"]], sort_keys=True) for c in sent_alone
    )
    once = Counter(
        json.dumps([c["client"], c["tool"], c["arguments"]], sort_keys=True) for c in sent_shared
    )
    assert once == Counter(set(distinct)) and len(sent_alone) > len(sent_shared)
    # one server process per group keeping its session, one per distinct call of the group that
    # opens a session per call (each of its calls in a process of its own)
    by_name = _profiles()
    per_call_client = "{name}/{version}".format(**by_name[PER_CALL[0]].identity.client_info)
    per_call_keys = [k for k in once if json.loads(k)[0] == per_call_client]
    processes = {c["pid"] for c in sent_shared}
    assert len(processes) == 2 + len(per_call_keys)
    # the kept group's calls in one process, each request with its own client's identity
    kept = {"{name}/{version}".format(**by_name[n].identity.client_info) for n in KEPT}
    assert len({c["pid"] for c in sent_shared if c["client"] in kept}) == 1
    assert {c["client"] for c in sent_shared} >= kept
    # --verbose says so, made against the least; with --share none the least is the same
    opened, least_sessions, calls, least_calls = work_shared
    assert (opened, calls) == (least_sessions, least_calls) == (len(processes), len(sent_shared))
    assert work_alone[1::2] == work_shared[1::2]
    assert work_alone[0::2] == (len({c["pid"] for c in sent_alone}), len(sent_alone))
    assert work_alone[0] > opened


def test_a_handshake_version_a_client_never_sees_refused_does_not_keep_it_apart():
    """langchain-anthropic accepts only 2025-06-18, the other langchain profiles any version: on a
    server that answers 2025-06-18 when asked for it, the three send the same bytes and continue
    alike; on one that answers 2024-11-05 they do not (one of them ends the session)."""
    by_name = _profiles()
    family = [p for p in by_name.values() if p.name.startswith("langchain")]
    assert len(family) == 3 and len({wire_identity(p) for p in family}) == 2
    answers_asked = ServerEras(negotiated={"2025-06-18": "2025-06-18"})
    assert len({wire_identity(p, answers_asked) for p in family}) == 1
    answers_older = ServerEras(negotiated={"2025-06-18": "2024-11-05"})
    assert len({wire_identity(p, answers_older) for p in family}) == 2


def test_a_session_the_server_takes_into_the_stateless_era_at_once_sends_no_handshake():
    """python-sdk-modern only discovers; openai-agents discovers, then initializes if that fails:
    same clientInfo, same capabilities. Where server/discover is answered at the version they
    ask for, neither ever sends initialize (the same bytes); where it is not, they differ."""
    by_name = _profiles()
    pair = [by_name["python-sdk-modern"], by_name["openai-agents"]]
    assert len({wire_identity(p) for p in pair}) == 2
    assert len({wire_identity(p, MEMORY) for p in pair}) == 1
    legacy = ServerEras(negotiated=MEMORY.negotiated)
    assert len({wire_identity(p, legacy) for p in pair}) == 2
    # profiles of other clients too: each request carries its own identity in _meta
    stateless = [by_name["python-sdk-modern"], by_name["claude-code"], by_name["goose"]]
    assert len({wire_identity(p, MEMORY) for p in stateless}) == 1
    # a client that sends initialize even after a successful discover keeps its own session
    both = [by_name["claude-code-stdio-negotiation"], by_name["claude-code-278"]]
    assert len({wire_identity(p, MEMORY) for p in both}) == 2


@pytest.mark.timeout(900)  # two runs of four profiles on a loaded machine; no timed assertion
def test_a_session_per_call_client_sends_each_distinct_call_once_to_a_server_that_starts_empty(
    tmp_path,
):
    """The bundled memory server keeps its store in its own process, so a call on a session of its
    own (a client that opens one per call) meets an empty server whoever sends it: the bundled
    cases write, yet the group the server cannot tell apart sends each distinct call once, each in
    a process of its own, and every cell is as when each profile sends its own."""
    log_none, log_shared = tmp_path / "none.log", tmp_path / "shared.log"
    counts, events = [], []
    for log, extra in ((log_none, ("--share", "none")), (log_shared, ())):
        args = ["run", "--server", f"memory --call-log {log}", "--verbose", "--fail-on", "none"]
        args += ["--timeout-call", "120"]  # a loaded machine must not turn a cell into a timeout
        for client in (*PER_CALL, ALONE):
            args += ["--client", client]
        count, got = counted([*args, *extra], log.with_suffix(".jsonl"))
        counts.append(count)
        events.append(got)
    assert verdicts(events[1]) == verdicts(events[0])
    by_name = _profiles()
    group = "{name}/{version}".format(**by_name[PER_CALL[0]].identity.client_info)

    def sent(log: Path) -> list[dict]:
        return [c for c in map(json.loads, log.read_text().splitlines()) if c["client"] == group]

    alone, shared = sent(log_none), sent(log_shared)
    key = lambda c: json.dumps([c["tool"], c["arguments"]], sort_keys=True)
    assert {key(c) for c in shared} == {key(c) for c in alone}
    assert len(shared) < len(alone) and any(c["tool"] == "memory_store" for c in shared)
    assert len({c["pid"] for c in shared}) == len(shared)  # a process per call, as the client does
    # --verbose: made equals the least in the default run; --share none makes more
    (opened_none, least_none, calls_none, _), (opened, least, calls, least_calls) = counts
    assert (opened, calls) == (least, least_calls) and opened < opened_none == least_none
    assert calls < calls_none
    assert sum("answer_from" in e for e in events[1]) == len(alone) - len(shared)


@pytest.mark.timeout(900)  # two runs of two profiles on a loaded machine; no timed assertion
def test_a_session_per_call_client_shares_read_only_answers_on_a_server_whose_state_outlives_it(
    tmp_path,
):
    """With ``--db`` the memory server keeps its store in a file, so a session of its own no
    longer meets an empty server (no ``FreshAnswers``), as with any server of unknown state;
    where every call is read-only the group the server cannot tell apart still sends each
    distinct call (bytes, n-th ask) once, each in a process of its own as the client does, and
    every cell is as with ``--share none``; --verbose counts it against the same least."""
    cases = tmp_path / "cases.yaml"
    cases.write_text(READ_ONLY_CASES)
    counts, events, logs = [], [], []
    for name, extra in (("none", ("--share", "none")), ("default", ())):
        log, results = tmp_path / f"{name}.log", tmp_path / f"{name}.jsonl"
        server = f"memory --db {tmp_path / name}.db --call-log {log}"
        args = ["run", "--server", server, "--cases", str(cases), "--verbose", "--fail-on", "none"]
        args += ["--timeout-call", "120"]  # a loaded machine must not turn a cell into a timeout
        for client in PER_CALL[:2]:
            args += ["--client", client]
        count, got = counted([*args, *extra], results)
        counts.append(count)
        events.append(got)
        logs.append([json.loads(line) for line in log.read_text().splitlines()])
    assert verdicts(events[1]) == verdicts(events[0])
    alone, shared = logs
    key = lambda c: json.dumps([c["tool"], c["arguments"]], sort_keys=True)
    assert {key(c) for c in shared} == {key(c) for c in alone}
    assert len(shared) * 2 == len(alone)  # the group's calls, once
    assert len({c["pid"] for c in shared}) == len(shared)  # a process per call, as the client does
    (opened_none, least_none, calls_none, _), (opened, least, calls, least_calls) = counts
    assert (opened, calls) == (least, least_calls) == (len(shared), len(shared))
    assert opened_none == calls_none == len(alone) and least_none == least
    assert sum("answer_from" in e for e in events[1]) == len(alone) - len(shared)
