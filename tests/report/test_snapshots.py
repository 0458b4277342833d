"""Every writer's output for the same events, compared with a reviewed snapshot.

Regenerate after an intended change: ``UPDATE_SNAPSHOTS=1 pytest tests/report``, then read the diff.
"""

from __future__ import annotations

import io
import json

import pytest

from matrix.commands.report import write_report
from tests.report import events as ev
from tests.report.conftest import assert_snapshot, render_terminal

WRITTEN = [
    ("md", "full.md"),
    ("json", "full.json"),
    ("junit", "full.junit.xml"),
    ("sarif", "full.sarif"),
    ("html", "full.html"),
]


@pytest.mark.parametrize(("fmt", "name"), WRITTEN)
def test_each_format_of_a_finished_run_matches_its_snapshot(fmt, name, full_events, stable_version):
    buf = io.StringIO()
    write_report(full_events, fmt, buf)
    assert_snapshot(name, buf.getvalue())


def test_the_terminal_report_matches_its_snapshot(full_events):
    assert_snapshot("full.terminal.txt", render_terminal(full_events))


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_an_interrupted_run_matches_its_snapshot(fmt, stable_version):
    buf = io.StringIO()
    write_report(ev.interrupted_run(), fmt, buf)
    assert_snapshot(f"interrupted.{fmt}", buf.getvalue())


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_a_merged_stream_of_two_runs_matches_its_snapshot(fmt, stable_version):
    buf = io.StringIO()
    write_report(ev.merged_runs(), fmt, buf)
    assert_snapshot(f"merged.{fmt}", buf.getvalue())


def test_snapshots_are_normalised_so_times_do_not_leak_into_them(full_events, stable_version):
    buf = io.StringIO()
    write_report(full_events, "json", buf)
    from tests.report.conftest import normalise

    doc = json.loads(normalise(buf.getvalue()))
    assert doc["runs"][0]["started_at"] == "<time>"
    assert doc["generated_by"]["version"] == "0.0.0-test"
