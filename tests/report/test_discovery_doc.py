"""The ``discover --json`` document: each distinct schema and finding stored once, read back whole."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.core.errors import InputError
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.report.discovery_doc import read_discovery, write_discovery
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.snapshot import Snapshot

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


def test_the_written_version_reads_back_to_exactly_the_version_1_document():
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
    assert len(texts) == len(shown)  # every distinct model-facing schema, and nothing else
    read = read_discovery(doc)["profiles"]
    assert {json.dumps(t["model_schema"]) for p in read for t in p["tools"]} - {"null"} == shown
    assert len(doc["schemas"]) < len(doc["tools"])  # 200 tools, far fewer distinct schemas


def test_a_property_schema_and_a_model_name_shared_by_many_cells_are_written_once():
    """The profiles' rewrites of one tool differ in a few places: each variant names its
    property schemas by number, so a property no profile touched is written once, not per
    variant (version 2 repeated it in every variant); model-facing names are a table too."""
    _, views = _views(60)
    out = io.StringIO()
    write_discovery(out, views, [t.tool for t in views[0].tools], None, None)
    text, doc = out.getvalue(), json.loads(out.getvalue())
    assert doc["version"] == 3
    compact = [json.dumps(p, ensure_ascii=False, separators=(",", ":")) for p in doc["properties"]]
    assert len(compact) == len(set(compact))
    refs = [n for s in doc["schemas"] for n in s.get("properties", {}).values()]
    assert all(isinstance(n, int) for n in refs) and len(refs) > 2 * len(compact)
    whole = {
        json.dumps(t.model_schema, ensure_ascii=False, separators=(",", ":"))
        for v in views
        for t in v.tools
        if t.model_schema is not None
    }
    written = [json.dumps(s, ensure_ascii=False, separators=(",", ":")) for s in doc["schemas"]]
    assert sum(map(len, written + compact)) < 0.7 * sum(map(len, whole))
    names = [t.model_name for v in views for t in v.tools if t.model_name is not None]
    assert len(doc["names"]) == len(set(names)) < len(names)
    # A model-facing name is written once (a name equal to its tool's raw name is also in the
    # tool list: profiles that keep raw names, such as agent-framework, are not the point here).
    raw = {t.tool for t in views[0].tools}
    renamed = [n for n in doc["names"] if n not in raw][:20]
    assert renamed and all(text.count(f'"{n}"') == 1 for n in renamed)


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
        (lambda d: d.pop("schemas"), "malformed version-3 discovery document"),
        (lambda d: d["schemas"][0].__setitem__("properties", {"x": 10**6}), "not an entry"),
        (lambda d: d.__setitem__("version", 9), "version 9 is not supported"),
    ],
)
def test_a_damaged_document_is_an_input_error_naming_what_is_wrong(broken, says):
    snap, views = _views(20)
    doc = _write(snap, views)
    broken(doc)
    with pytest.raises(InputError, match=says):
        read_discovery(doc, where="d.json")
