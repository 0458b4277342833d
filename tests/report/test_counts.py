"""A large server's terminal form: counts per client and the first root causes, not a grid."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from mcp_matrix.behaviours import registry
from mcp_matrix.core.text import terminal_console
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.report.counts import GRID_LIMIT, TRIAGE_LIMIT
from mcp_matrix.report.terminal import write_terminal
from mcp_matrix.run.discovery import discover_all, discovery_events
from mcp_matrix.targets.snapshot import Snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import snapshot_doc, tool_list


def _terminal(tools: int, clients: list[str]) -> str:
    registry.load_all()
    snap = Snapshot(snapshot_doc(tool_list(tools)))
    profiles = select_profiles(load_profiles(), clients)
    events = discovery_events(snap, discover_all(snap, profiles), profiles)
    out = io.StringIO()
    write_terminal(
        events,
        terminal_console(
            file=out,
            width=120,
            no_color=True,
            color_system=None,
            force_terminal=False,
            soft_wrap=True,
        ),
    )
    return out.getvalue()


def test_above_the_limit_the_terminal_counts_cells_per_client_instead_of_a_grid():
    text = _terminal(GRID_LIMIT + 50, ["cursor", "codex", "gemini-cli"])
    assert f"{GRID_LIMIT + 50} tools: cells per client and verdict" in text
    rows = [line for line in text.splitlines() if line.startswith("│ ")]
    assert sorted(r.split("│")[1].strip() for r in rows) == [
        "codex",
        "cursor",
        "gemini-cli",
    ]  # a row per client
    assert "more root causes" in text  # the triage list is cut to its first causes
    assert text.count("fix: ") <= TRIAGE_LIMIT


def test_at_or_below_the_limit_the_grid_is_printed():
    text = _terminal(20, ["cursor", "codex"])
    assert "cells per client and verdict" not in text
    assert "more root causes" not in text
