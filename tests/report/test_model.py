"""The typed report (report/model.py): the same document as the JSON report's version-1 shape,
every key a typed field, so the Markdown, JUnit, SARIF and HTML writers read attributes."""

from __future__ import annotations

import io
import json

import pytest

from mcp_matrix.core.event_values import CellMutation
from mcp_matrix.core.events import typed_events
from mcp_matrix.report.document import Report, ReportCell, ReportFinding
from mcp_matrix.report.json_report import build_report, write_json, write_model
from mcp_matrix.report.model import read_model, stream_model
from tests.report import events as ev


@pytest.mark.parametrize("stream", [ev.full_run, ev.interrupted_run, ev.merged_runs])
def test_the_typed_report_is_the_version_1_document_key_for_key(stream):
    events = typed_events(stream())
    model = read_model(events)
    document = json.loads(json.dumps(build_report(events), default=str))
    assert json.loads(json.dumps(model.to_json())) == document
    assert Report.build(document) == model


def test_every_cell_and_its_findings_and_mutations_are_typed_values():
    model = read_model(typed_events(ev.full_run()))
    assert model.cells and all(isinstance(c, ReportCell) for c in model.cells)
    findings = [f for c in model.cells for f in c.findings]
    assert findings and all(isinstance(f, ReportFinding) for f in findings)
    mutations = [m for c in model.cells for m in c.mutations]
    assert mutations and all(isinstance(m, CellMutation) for m in mutations)
    hidden = next(c for c in model.cells if c.verdict == "hidden")
    assert hidden.findings[-1].snapshot_pointer.startswith("/tools/")


@pytest.mark.parametrize("stream", [ev.full_run, ev.interrupted_run, ev.merged_runs])
def test_the_json_report_is_written_from_the_typed_model(stream):
    """The JSON writer reads the model as the other writers do: a model built whole and written
    gives the same bytes as the writer given the events (which streams the cells)."""
    events = typed_events(stream())
    whole, streamed = io.StringIO(), io.StringIO()
    write_model(read_model(events), whole)
    write_json(events, streamed)
    assert whole.getvalue() == streamed.getvalue()


def test_the_streamed_cells_are_the_built_ones_and_the_report_after_them_counts_them_all():
    events = typed_events(ev.merged_runs())
    stream = stream_model(events)
    with pytest.raises(RuntimeError, match="once every cell has been read"):
        stream.report()
    cells = tuple(stream)
    head, model = stream.report(), read_model(events)
    assert head.cells == () and head.counts == model.counts and head.grid == model.grid
    assert cells == model.cells and head.counts.cells == len(model.cells)


def test_what_the_tables_need_is_held_by_the_model_but_is_no_key_of_the_version_1_shape():
    """The position of a cell's run and tool, a call's evidence as written (with its date
    checked) and a culprit's pointer: held for the JSON report's tables, not written."""
    events = typed_events(ev.full_run())
    model = read_model(events)
    by_cell = {
        (e.profile, e.tool, getattr(e, "case", None)): e
        for e in events
        if e.KIND in ("discovery", "call")
    }
    for c in model.cells:
        assert {"run_index", "index", "sources"}.isdisjoint(c.to_json())
        assert all("culprit_pointer" not in f.to_json() for f in c.findings)
        e = by_cell[(c.profile, c.tool, c.case)]
        if c.kind == "call":
            assert c.sources == e.evidence
        elif e.index is not None:
            assert c.index == e.index
    assert {c.run_index for c in model.cells} == {0}
    merged = read_model(typed_events(ev.merged_runs()))
    assert {c.run for c in merged.cells if c.run_index == 1} == {"run000000002"}
