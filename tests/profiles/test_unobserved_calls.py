"""A call behaviour nobody observed is shown as such: Amp's calls go through its own service, so
its profile's one call rule (send-as-written) has `assumed` evidence, and every grid (terminal,
Markdown, HTML; the JSON report per cell) marks the cells whose verdict rests on it. The mark
is the same verdict said to be a prediction, never a worse one. One real run of the bundled
faulty server (two read-only tools called) in amp and claude-code."""

from __future__ import annotations

import io
import json
import re
from types import SimpleNamespace

import pytest
from rich.console import Console

from mcp_matrix import api
from mcp_matrix.commands.report import write_report
from mcp_matrix.core.events import typed_events
from mcp_matrix.report.counts import write_counts
from mcp_matrix.report.grid import ASSUMED_KEY, build_grid, rests_on_assumed
from mcp_matrix.report.model import read_model

CALLED = ("echo", "slow_echo")  # the faulty server's read-only tools


@pytest.fixture(scope="module")
def events() -> list[dict]:
    outcome = api.run(
        api.target(server="faulty"),
        profiles=api.profiles(["amp", "claude-code"]),
        timeouts=api.Timeouts(initialize=60, list=60, call=60),
    )
    assert outcome.measured
    return list(outcome.to_json())


def report(events: list[dict], fmt: str) -> str:
    out = io.StringIO()
    write_report(events, fmt, out)
    return out.getvalue()


def test_amps_calls_keep_their_verdict_and_rest_on_assumed_evidence(events):
    calls = {
        (e["profile"], e["tool"]): e for e in events if e["event"] == "call" and e["case"] == "auto"
    }
    for tool in CALLED:
        amp, claude = calls[("amp", tool)], calls[("claude-code", tool)]
        assert amp["verdict"] == claude["verdict"] == "intact"  # not a worse verdict
        assert amp["behaviours"] == ["send-as-written"]
        assert amp["weakest_evidence"] == "assumed"
        assert claude["weakest_evidence"] != "assumed"


def test_the_terminal_grid_marks_amps_call_cells_and_says_what_the_mark_means(events):
    text = report(events, "terminal")
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in text.splitlines() if line}
    for tool in CALLED:
        assert rows[tool] == "✓*✓"  # column A amp marked, column B claude-code not
    assert rows["write_note"] == "○ ○"  # a listed tool Amp was observed listing: no mark
    assert re.sub(r"\s+", " ", ASSUMED_KEY) in re.sub(r"\s+", " ", text)


def test_the_markdown_grid_marks_the_same_cells(events):
    text = report(events, "md")
    for tool in CALLED:
        assert re.search(rf"^\| {tool} \| ✓ intact\\\* \| ✓ intact \|$", text, re.MULTILINE), tool
    assert "\\* marks a verdict that rests on assumed evidence" in text


def test_the_html_page_marks_the_same_cells(events):
    page = report(events, "html")
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.DOTALL).group(1))
    amp = data["profiles"].index("amp")
    assert sorted(data["assumed"]) == sorted([data["tools"].index(t), amp] for t in CALLED)
    assert data["assumed_key"] == ASSUMED_KEY


def test_the_report_cells_carry_the_assumed_level(events):
    """The JSON report's cells (read_model is its version-1 document) say it per cell."""
    doc = read_model(events)
    marked = {(c.profile, c.tool) for c in doc.cells if c.weakest_evidence == "assumed"}
    assert marked == {("amp", t) for t in CALLED}


def test_only_the_worst_verdicts_own_evidence_decides_the_mark(events):
    grid = build_grid(typed_events(events))
    assert grid.assumed("echo", "amp") and not grid.assumed("echo", "claude-code")
    cells = [
        SimpleNamespace(tool="t", profile="p", verdict="hidden", weakest_evidence="issue"),
        SimpleNamespace(tool="t", profile="p", verdict="intact", weakest_evidence="assumed"),
    ]
    assert not rests_on_assumed(cells, "hidden")  # the verdict shown is the issue's
    assert rests_on_assumed(cells, "intact")


def test_a_large_servers_counts_mark_the_counts_resting_on_assumed_evidence():
    """Over GRID_LIMIT tools the terminal prints counts per client instead of the grid."""
    out = io.StringIO()
    console = Console(file=out, width=200, no_color=True)
    cells = [("amp", "intact"), ("amp", "visible"), ("claude-code", "intact")]
    write_counts(cells, console, 300, assumed=[("amp", "intact")])
    rows = {line.split()[1]: line for line in out.getvalue().splitlines() if "│ " in line}
    assert re.search(r"│\s+1\*\s+│\s+1\s+│", rows["amp"])
    assert "*" not in rows["claude-code"]
    assert ASSUMED_KEY in " ".join(out.getvalue().split())
