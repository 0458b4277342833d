"""A write the cases file lists reaches the server exactly once per (profile, case).

Counted at the server: the bundled memory server's ``--call-log`` (one line per tools/call it
received, with the client's name/version and the server process), and the faulty server's
``--record``, through the real CLI. Claude Desktop and the legacy Claude Code profile try more
than one wire shape (an intermittent ``stringify-arguments``); they used to send a write once
per shape.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.run.results import read_events
from mcp_matrix.run.sharing import plan_sharing
from tests.conftest import run_cli

WRITES = """\
cases:
  memory_store:
    - name: one
      arguments: {agent_id: research-bot, content: note one, tags: [a, b], importance: 0.5}
    - name: two
      arguments: {agent_id: research-bot, content: note two, tags: [c]}
"""
MULTI_SHAPE = ("claude-desktop", "claude-code-legacy")
ONE_SHAPE = "claude-code"


def profiles() -> dict:
    return {p.name: p for p in select_profiles(load_profiles(), []) if not p.abstract}


def run(
    tmp_path: Path, cases: str, clients, *extra: str, server: str = "memory --call-log"
) -> tuple[list[dict], list[dict]]:
    """The real CLI on ``server`` (a bundled server and its flag naming the file it writes a line
    to per call received): its events and the calls the server received."""
    log, results, path = tmp_path / "calls.jsonl", tmp_path / "r.jsonl", tmp_path / "cases.yaml"
    path.write_text(cases)
    args = [a for c in clients for a in ("--client", c)]
    r = run_cli(
        "run",
        "--server",
        f"{server} {log}",
        "--cases",
        str(path),
        "--no-auto-cases",
        *args,
        *extra,
        "--results",
        str(results),
        "--fail-on",
        "none",
        timeout=400,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    received = [json.loads(line) for line in log.read_text().splitlines()]
    return read_events(results), received


def stores(received: list[dict]) -> Counter:
    return Counter(
        (c["client"], c["arguments"]["content"]) for c in received if c["tool"] == "memory_store"
    )


def client_of(name: str) -> str:
    info = profiles()[name].identity.client_info
    return f"{info['name']}/{info['version']}"


@pytest.mark.timeout(600)
def test_a_listed_write_runs_once_per_profile_and_case_in_profiles_that_try_several_shapes(
    tmp_path,
):
    by_name = profiles()
    for name in MULTI_SHAPE:  # what makes them try several shapes: an intermittent behaviour
        assert any(u.frequency == "sometimes" for u in by_name[name].call), name
    assert not any(u.frequency == "sometimes" for u in by_name[ONE_SHAPE].call)
    clients = (*MULTI_SHAPE, ONE_SHAPE)
    assert len({client_of(c) for c in clients}) == 3  # the log tells them apart

    events, received = run(tmp_path, WRITES, clients)

    expected = {(client_of(c), note): 1 for c in clients for note in ("note one", "note two")}
    assert stores(received) == expected
    cells = {(e["profile"], e["case"]): e for e in events if e["event"] == "call"}
    assert len(cells) == 6
    for name in MULTI_SHAPE:  # sent the way most likely to go wrong; the cell says so
        cell = cells[(name, "one")]
        notes = " ".join(cell.get("notes", []))
        assert "stringify-arguments" in notes and "repeat_safe: true" in notes
        assert cell["frequency"] == "sometimes" and cell["mutations"]
        assert cell["verdict"] == "loud"  # the server refuses the stringified array, as before
    sent_as = {c["client"]: c["arguments"]["tags"] for c in received if c["tool"] == "memory_store"}
    assert sent_as[client_of("claude-desktop")] == '["c"]'  # case two, stringified
    assert not cells[(ONE_SHAPE, "one")].get("notes")


@pytest.mark.timeout(600)
def test_repeat_safe_true_on_the_case_sends_every_shape(tmp_path):
    """The documented opt-in: the user says calling twice is safe, so each way is tried."""
    cases = WRITES + "      repeat_safe: true\n"  # on case two
    _, received = run(tmp_path, cases, ("claude-desktop",))
    got = stores(received)
    assert got[(client_of("claude-desktop"), "note one")] == 1
    assert got[(client_of("claude-desktop"), "note two")] == 2


@pytest.mark.timeout(600)
def test_profiles_identical_on_the_wire_each_send_a_write_once_even_when_calls_are_shared(
    tmp_path,
):
    """Profiles the server cannot tell apart, told to share calls: a write turns sharing off,
    so each profile sends it once, each on a session (a server process) of its own."""
    by_name = profiles()
    group = next(
        g
        for g in plan_sharing("sessions", list(by_name.values()), []).groups
        if len(g) > 1 and not any(u.name == "new-session-per-call" for u in by_name[g[0]].call)
    )[:2]
    events, received = run(tmp_path, WRITES, group, "--share", "calls")
    writes = [c for c in received if c["tool"] == "memory_store"]
    assert Counter(c["arguments"]["content"] for c in writes) == {"note one": 2, "note two": 2}
    assert len({c["pid"] for c in writes}) == 2  # one session per profile, two calls in each
    sharing = next(e for e in events if e["event"] == "sharing")
    assert sharing["sessions"] == [] and sharing["calls"] is False


@pytest.mark.timeout(600)
def test_a_write_that_fails_on_the_wire_is_not_sent_again_and_its_cell_says_it_may_have_run(
    tmp_path,
):
    """The server dies during every call: the session restarts for the next case, and the
    failed write is never re-sent (it may have run), in a profile with several shapes too."""
    cases = (
        "cases:\n  write_note:\n"
        "    - name: first\n      arguments: {title: a, body: b}\n"
        "    - name: second\n      arguments: {title: c, body: d}\n"
    )
    events, sent = run(
        tmp_path,
        cases,
        ("claude-code-legacy", ONE_SHAPE),
        "--no-circuit-breaker",
        server="faulty --mode crash-on-call --record",
    )
    titles = Counter(c["arguments"]["title"] for c in sent if c["name"] == "write_note")
    assert titles == {"a": 2, "c": 2}  # one per profile and case
    cells = [e for e in events if e["event"] == "call"]
    assert len(cells) == 4
    for cell in cells:
        assert cell["verdict"] == "broken"
        assert any("may have run" in n and "not sent again" in n for n in cell["notes"]), cell
