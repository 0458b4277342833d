"""Every writer's output for the same events, compared with a reviewed snapshot.

Regenerate after an intended change: ``UPDATE_SNAPSHOTS=1 pytest tests/report``, then read the diff.
"""

from __future__ import annotations

import io
import json

import pytest

from mcp_matrix.commands.report import write_report
from mcp_matrix.report.writers import FORMATS, SUFFIX, WRITERS
from tests.report import events as ev
from tests.report.conftest import assert_snapshot, render_terminal

# Every registered writer, so a new one is snapshot-checked without a line here: full.<fmt>,
# plus the file's usual suffix where that is not the format's name (full.junit.xml).
WRITTEN = [
    (fmt, f"full.{fmt}" + ("" if SUFFIX[fmt] == f".{fmt}" else SUFFIX[fmt])) for fmt in WRITERS
]


def test_every_format_has_a_file_suffix_and_the_reviewed_snapshots_keep_their_names():
    assert set(SUFFIX) == set(FORMATS) == {"terminal", *WRITERS}
    names = dict(WRITTEN)
    assert [names[f] for f in ("md", "json", "junit", "sarif", "html")] == [
        "full.md",
        "full.json",
        "full.junit.xml",
        "full.sarif",
        "full.html",
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
