"""``discover``'s terminal reads its cells from the views instead of typing each one as an event
(260,000 at 5,000 tools x 52 profiles): what it prints and the root causes it finds are those of
the typed events, for every bundled profile."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.core.events import DiscoveryCell
from mcp_matrix.core.text import terminal_console
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.report.advice import advice_for
from mcp_matrix.report.counts import GRID_LIMIT
from mcp_matrix.report.terminal import write_terminal
from mcp_matrix.report.triage import _fixes, build_triage
from mcp_matrix.run.discovery import discover_all, discovery_events, discovery_run
from mcp_matrix.targets.snapshot import Snapshot
from tests.test_session_blockers import TOOLS as BLOCKERS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import snapshot_doc, tool_list


@pytest.fixture(scope="module")
def discovered():
    """A server over the grid's limit (synthetic tools, plus a dotted and a 70-character name
    that break some clients' sessions) through every bundled profile."""
    registry.load_all()
    snap = Snapshot(snapshot_doc(tool_list(GRID_LIMIT + 20) + list(BLOCKERS.values())))
    profiles = [p for p in load_profiles().values() if not p.abstract]
    views = discover_all(snap, profiles)
    return snap, profiles, views


def _terminal(events, views=()) -> str:
    out = io.StringIO()
    console = terminal_console(file=out, width=120, no_color=True, force_terminal=False)
    write_terminal(events, console, views=views)
    return out.getvalue()


def test_the_triage_of_the_views_is_the_triage_of_their_events(discovered):
    snap, profiles, views = discovered
    from_events = build_triage(discovery_events(snap, views, profiles))
    from_views = build_triage(list(discovery_run(snap, profiles)), views)
    assert any(c.session_tools for c in from_events)  # the blockers are among them
    assert [c.to_json() for c in from_views] == [c.to_json() for c in from_events]
    assert [c.seen for c in from_views] == [c.seen for c in from_events]


@pytest.mark.parametrize("small", [False, True], ids=["counts", "grid"])
def test_the_terminal_prints_the_same_from_the_views_as_from_their_events(discovered, small):
    snap, profiles, views = discovered
    if small:  # the grid, from the cells typed for it
        snap = Snapshot({**snap.doc, "tools": snap.doc["tools"][-12:]})
        views = discover_all(snap, profiles)
    text = _terminal(list(discovery_run(snap, profiles)), views)
    assert f"· {len(snap.tools)} tools · {len(profiles)} clients" in text
    assert ("cells per client and verdict" in text) is not small
    assert text == _terminal(discovery_events(snap, views, profiles))


def test_a_findings_fix_is_the_advice_for_its_cell(discovered):
    # the triage works a fix out once per (verdict, code, behaviour): all the advice reads of it
    _, _, views = discovered
    fix_for = _fixes()
    checked = 0
    for view in views:
        for tool in view.tools:
            cell = DiscoveryCell.of(view.profile, tool)
            for finding, typed in zip(tool.findings, cell.findings, strict=True):
                assert fix_for(tool.verdict, finding) == advice_for(cell, finding=typed)
                assert fix_for(tool.verdict, typed) == advice_for(cell, finding=typed)
                checked += 1
            if not tool.findings:
                assert fix_for(tool.verdict, None) == advice_for(cell)
    assert checked > 1000
