"""A mutated call is compared with the intact call in the same server state, or no finding is claimed.

Through the real CLI: the bundled memory server (a write, then a read-only call that Cline
mutates: it sends ``{}`` for a call without ``arguments``), and a server whose read-only
answers change on every call (tests/varying_server.py). The intact call used to be made on a
separate reference session, beforehand: a server holding other data, so the stateful read was
judged ``silent-corruption`` (a release failure) for an answer the mutation did not change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_matrix.run.results import read_events
from tests.conftest import run_cli

VARYING = Path(__file__).with_name("varying_server.py")


def run(tmp_path: Path, target: tuple[str, ...], cases: str, *clients: str):
    """The real CLI with the default release gate: its exit code and call cells by (profile, tool)."""
    path, results = tmp_path / "cases.yaml", tmp_path / "r.jsonl"
    path.write_text(cases)
    args = [a for c in clients for a in ("--client", c)]
    r = run_cli(
        "run",
        *target,
        "--cases",
        str(path),
        "--no-auto-cases",
        *args,
        "--results",
        str(results),
        "--require",
        "none",
        timeout=400,
    )
    cells = {(e["profile"], e["tool"]): e for e in read_events(results) if e["event"] == "call"}
    return r, cells


@pytest.mark.timeout(600)
def test_a_read_after_a_write_is_compared_with_the_intact_call_in_the_same_server_state(
    tmp_path, transport
):
    """Over stdio each session is a server process of its own (the old reference session's held
    no note); over HTTP one process serves every session."""
    log = tmp_path / "calls.jsonl"
    cases = (
        "cases:\n"
        "  memory_store:\n"
        "    - name: first\n"
        "      arguments: {agent_id: research-bot, content: note one, tags: [a]}\n"
        "  memory_stats:\n"
        "    - name: counts\n"
        "      omit_arguments: true\n"
    )
    target = ("--server", f"memory --call-log {log}", "--server-transport", transport)
    r, cells = run(tmp_path, target, cases, "cline")

    stats = cells[("cline", "memory_stats")]
    assert stats["mutations"] and stats["mutations"][0]["kind"] == "added"  # {} for no arguments
    assert stats["verdict"] == "tolerated", stats["reason"]
    assert r.returncode == 0, r.stdout[-2000:]
    # Both calls went to the session that holds the stored note, the intact one right after.
    received = [json.loads(line) for line in log.read_text().splitlines()]
    reads = [c for c in received if c["tool"] == "memory_stats"]
    assert [c["arguments"] for c in reads] == [{}, None]
    write = next(c for c in received if c["tool"] == "memory_store")
    assert {c["pid"] for c in reads} == {write["pid"]}


@pytest.mark.timeout(600)
def test_answers_that_change_between_calls_are_unverified_and_pass_the_gate(tmp_path):
    """``tick`` answers each call differently: the difference cannot be the mutation's, so the
    cell says sameness could not be shown; ``show`` answers alike, and Cline's ``{}`` for no
    arguments really changes its answer: still ``silent-corruption``."""
    cases = (
        "cases:\n"
        "  tick:\n    - name: bare\n      omit_arguments: true\n"
        "  show:\n    - name: bare\n      omit_arguments: true\n"
    )
    target = ("--stdio", f"{sys.executable} {VARYING}")
    r, cells = run(tmp_path, target, cases, "cline")

    tick = cells[("cline", "tick")]
    assert tick["verdict"] == "unverified", tick["reason"]
    assert "could not be shown" in tick["reason"] and "another answer" in tick["reason"]
    show = cells[("cline", "show")]
    assert show["verdict"] == "silent-corruption", show["reason"]
    assert "differs from the intact call's" in show["reason"]
    assert r.returncode == 1  # show's finding, not tick's

    r, cells = run(
        tmp_path, target, "cases:\n  tick:\n    - name: bare\n      omit_arguments: true\n", "cline"
    )
    assert cells[("cline", "tick")]["verdict"] == "unverified"
    assert r.returncode == 0, r.stdout[-2000:]  # never a release failure on a guess
