"""The ``discover --json`` document: each distinct schema and finding stored once, read back whole."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from matrix.behaviours import registry
from matrix.discovery import discover_all
from matrix.errors import InputError
from matrix.profiles.loader import load_profiles, select_profiles
from matrix.report.discovery_doc import read_discovery, write_discovery
from matrix.snapshot import Snapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import snapshot_doc, tool_list


def _views(tools: int, distinct: int | None = None):
    registry.load_all()
    snap = Snapshot(snapshot_doc(tool_list(tools, distinct=distinct)))
    return snap, discover_all(snap, select_profiles(load_profiles(), []))


def _version_1(snap, views) -> dict:
    """What ``discover --json`` wrote before version 2: every cell in full."""
    return {
        "format": "mcp-matrix.discovery",
        "version": 1,
        "server": snap.doc.get("serverInfo"),
        "snapshot_error": snap.error,
        "profiles": [
            {"profile": v.profile, "outcome": v.outcome, "tools": [t.to_json() for t in v.tools]}
            for v in views
        ],
    }


def _write(snap, views) -> dict:
    out = io.StringIO()
    names = [t.tool for t in views[0].tools]
    write_discovery(out, views, names, snap.doc.get("serverInfo"), snap.error)
    return json.loads(out.getvalue())


def test_version_2_reads_back_to_exactly_the_version_1_document():
    snap, views = _views(120)
    assert read_discovery(_write(snap, views)) == _version_1(snap, views)


def test_a_schema_repeated_across_tools_and_profiles_is_stored_once():
    snap, views = _views(200, distinct=10)
    doc = _write(snap, views)
    texts = [
        json.dumps(s) for s in doc["schemas"]
    ]  # key order kept: property order reaches the model
    assert len(texts) == len(set(texts))
    shown = {
        json.dumps(t.model_schema) for v in views for t in v.tools if t.model_schema is not None
    }
    assert set(texts) == shown  # every distinct model-facing schema, and nothing else
    assert len(doc["schemas"]) < len(doc["tools"])  # 200 tools, far fewer distinct schemas


def test_findings_and_evidence_are_stored_once_and_referenced_by_number():
    snap, views = _views(120)
    doc = _write(snap, views)
    findings = [json.dumps(f) for f in doc["findings"]]
    assert len(findings) == len(set(findings))
    assert len({json.dumps(e, sort_keys=True) for e in doc["evidence"]}) == len(doc["evidence"])
    rows = [row for p in doc["profiles"] for row in p["cells"]]
    assert len(rows) == 120 * len(views)
    assert all(isinstance(ref, int) for row in rows for ref in row[4])


def test_version_1_documents_are_still_read():
    snap, views = _views(20)
    old = _version_1(snap, views)
    assert read_discovery(old) == old


@pytest.mark.parametrize(
    "broken, says",
    [
        (lambda d: d["profiles"][0]["cells"][0].__setitem__(3, 10**6), "not an entry of the table"),
        (lambda d: d["profiles"][0]["cells"].__setitem__(0, [0, "visible"]), "is not a row of"),
        (lambda d: d.pop("schemas"), "malformed version-2 discovery document"),
        (lambda d: d.__setitem__("version", 9), "version 9 is not supported"),
    ],
)
def test_a_damaged_document_is_an_input_error_naming_what_is_wrong(broken, says):
    snap, views = _views(20)
    doc = _write(snap, views)
    broken(doc)
    with pytest.raises(InputError, match=says):
        read_discovery(doc, where="d.json")
