"""How many server processes a ``run`` starts, counted through the real CLI.

The server is started by a shell that appends a line to a log and then becomes the bundled
faulty server (``exec``), so every start of the target is one line, whoever started it: the
snapshot's main session, the era probes, the profiles.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from mcp_matrix.run.results import read_events


def run_counted(cli, tmp_path: Path, server: str, *clients: str) -> tuple[int, list[dict], list]:
    """Run ``server`` (a bundled module and its flags) for ``clients``: starts, events, calls sent."""
    log, record, results = tmp_path / "starts.log", tmp_path / "calls.jsonl", tmp_path / "r.jsonl"
    command = (
        f"echo started >> {shlex.quote(str(log))}; exec {shlex.quote(sys.executable)} -m {server}"
    )
    if "faulty" in server:
        command += f" --record {shlex.quote(str(record))}"
    args = [a for c in clients for a in ("--client", c)]
    r = cli(
        "run",
        "--stdio",
        f"/bin/sh -c {shlex.quote(command)}",
        *args,
        "--results",
        str(results),
        "--fail-on",
        "none",
        "--require",
        "none",
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    sent = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return len(log.read_text().splitlines()), read_events(results), sent


def snapshot_of(events: list[dict]) -> dict:
    return next(e["snapshot"] for e in events if e["event"] == "snapshot")


def test_a_handshake_only_client_starts_the_main_session_its_version_probe_and_its_own(
    cli, tmp_path
):
    """continue (initialize-only, 2025-06-18): no modern probe (no selected profile tries that
    era and initialize was answered), no other version probed, no reference server (an intact
    call goes on the profile's own session, right after the mutated one)."""
    starts, events, sent = run_counted(cli, tmp_path, "matrix_servers.faulty --mode ok", "continue")
    assert starts == 3
    eras = snapshot_of(events)["eras"]
    assert [a["requested"] for a in eras["handshake"]["answers"]] == ["2025-11-25", "2025-06-18"]
    assert eras["modern"]["wireError"]["kind"] == "not-probed"
    # the profile's own echo only: an intact twin goes beside a mutated call, on its session
    echo = [c for c in sent if c["name"] == "echo"]
    assert len(echo) == 1
    cells = [e for e in events if e["event"] == "call"]
    assert cells and all(e["verdict"] in ("intact", "tolerated") for e in cells)


def test_a_client_that_tries_the_modern_era_starts_the_main_session_the_modern_probe_and_its_own(
    cli, tmp_path
):
    """claude-code asks for 2025-11-25, the main session's version: no version probe; it tries
    server/discover first, so the modern era is probed."""
    starts, events, _ = run_counted(cli, tmp_path, "matrix_servers.faulty --mode ok", "claude-code")
    assert starts == 3
    eras = snapshot_of(events)["eras"]
    assert [a["requested"] for a in eras["handshake"]["answers"]] == ["2025-11-25"]
    assert "wireError" not in eras["modern"] or eras["modern"]["wireError"] is None


def test_a_refused_initialize_still_probes_the_modern_era_for_a_handshake_only_run(cli, tmp_path):
    """A modern-only server refuses initialize: the modern probe runs after the refusal, so the
    tools are listed in the 2026-07-28 era and continue's finding names what the server supports."""
    _, events, _ = run_counted(
        cli, tmp_path, "matrix_servers.memory --protocol modern-only", "continue"
    )
    snap = snapshot_of(events)
    assert snap["era"] == "modern" and snap["tools"]
    assert snap["eras"]["modern"]["answered"] is True
    cells = [e for e in events if e["event"] == "discovery"]
    assert cells and all(e["verdict"] == "session-broken" for e in cells)
    reason = json.dumps(cells[0])
    assert "handshake-refused" in reason and "supports only ['2026-07-28']" in reason
