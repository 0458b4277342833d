"""The terminal writer: the grid, then each finding with its fix."""

from __future__ import annotations

from tests.report import events as ev
from tests.report.conftest import render_terminal


def test_each_finding_is_followed_by_its_fix(full_events):
    text = render_terminal(full_events)
    lines = text.splitlines()
    i = next(n for n, line in enumerate(lines) if "hidden claude-code memory_reflect:" in line)
    assert lines[i + 1].strip().startswith("fix: Flatten the root")
    assert "decision record 014" in lines[i + 1]


def test_control_characters_from_the_server_do_not_reach_the_terminal(full_events):
    text = render_terminal(full_events)
    assert "\x07" not in text and "\x1b" not in text
    assert "30.0s\\x07 stderr: Traceback" in text


def test_without_details_only_the_grid_and_legend_are_printed(full_events):
    text = render_terminal(full_events, details=False)
    assert "fix:" not in text and "memory_store" in text


def test_an_interrupted_run_is_labelled_unfinished():
    assert "unfinished run" in render_terminal(ev.interrupted_run()).splitlines()[0]
