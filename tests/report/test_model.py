"""The typed report (report/model.py): the same document as the JSON report's version-1 shape,
every key a typed field, so the Markdown, JUnit, SARIF and HTML writers read attributes."""

from __future__ import annotations

import json

import pytest

from mcp_matrix.core.events import CellMutation, typed_events
from mcp_matrix.report.json_report import build_report
from mcp_matrix.report.model import Report, ReportCell, ReportFinding, read_model
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
