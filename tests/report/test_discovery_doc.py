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
    texts = [json.dumps(s) for s in doc["schemas"]]  # key order kept: it reaches the model
    assert len(texts) == len(set(texts))
    shown = {
        json.dumps(t.model_schema) for v in views for t in v.tools if t.model_schema is not None
    }
    read = read_discovery(doc)["profiles"]
    assert {json.dumps(t["model_schema"]) for p in read for t in p["tools"]} - {"null"} == shown
    tops = {row[2] for row in doc["cells"] if row[2] is not None}
    assert len(tops) == len(shown) < len(doc["tools"])  # 200 tools, far fewer schemas


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_a_sub_schema_and_a_model_name_shared_by_many_cells_are_written_once():
    """The profiles' rewrites of one tool differ in a few places: every sub-schema (a property,
    a ``$defs`` entry, an ``anyOf`` branch, at any depth) is an entry of ``schemas`` named by
    number, so a part no profile touched is written once, not per variant; model-facing names
    are a table too."""
    _, views = _views(60)
    out = io.StringIO()
    write_discovery(out, views, [t.tool for t in views[0].tools], None, None)
    text, doc = out.getvalue(), json.loads(out.getvalue())
    assert doc["version"] == 4
    written = [_compact(s) for s in doc["schemas"]]
    assert len(written) == len(set(written))
    refs = [
        n for s in doc["schemas"] if isinstance(s, dict) for n in s.get("properties", {}).values()
    ]
    assert all(isinstance(n, int) for n in refs) and len(refs) > 2 * len(written)
    nested = [s for s in doc["schemas"] if isinstance(s, dict) and isinstance(s.get("$defs"), dict)]
    assert nested and all(isinstance(n, int) for s in nested for n in s["$defs"].values())
    whole = {_compact(t.model_schema) for v in views for t in v.tools if t.model_schema is not None}
    assert sum(map(len, written)) < 0.5 * sum(map(len, whole))
    names = [t.model_name for v in views for t in v.tools if t.model_name is not None]
    assert len(doc["names"]) == len(set(names)) < len(names)
    raw = {t.tool for t in views[0].tools}
    renamed = [n for n in doc["names"] if n not in raw][:20]
    assert renamed and all(text.count(f'"{n}"') == 1 for n in renamed)


def test_a_cell_many_profiles_share_is_one_row_and_findings_share_their_kind():
    snap, views = _views(120)
    doc = _write(snap, views)
    assert all(len(p["cells"]) == 120 for p in doc["profiles"])  # a number a tool, in order
    rows = [_compact(r) for r in doc["cells"]]
    assert len(rows) == len(set(rows)) < 120 * len(views)
    for table in ("findings", "kinds"):
        assert len({_compact(f) for f in doc[table]}) == len(doc[table])
    assert len(doc["kinds"]) < len(doc["findings"])
    assert len({json.dumps(e, sort_keys=True) for e in doc["evidence"]}) == len(doc["evidence"])
    assert all(isinstance(ref, int) for row in doc["cells"] for ref in row[3])


def test_a_deeply_nested_schema_reads_back_whole():
    deep: dict = {"type": "string"}
    for i in range(200):
        deep = {"type": "object", "properties": {f"p{i}": deep}, "anyOf": [{"required": []}]}
    tool = {"name": "deep", "description": "d", "inputSchema": deep}
    snap = Snapshot(snapshot_doc([tool]))
    views = discover_all(snap, select_profiles(load_profiles(), ["claude-code", "cursor"]))
    assert read_discovery(_write(snap, views)) == _version_1(snap, views)


def test_a_version_3_document_reads_as_it_did():
    """``discover --json`` wrote version 3 before: the reader still takes it, to the same cells."""
    data = json.loads((Path(__file__).parent / "data" / "discovery-v3.json").read_text("utf-8"))
    assert data["version-3"]["version"] == 3
    assert read_discovery(data["version-3"]) == data["version-1"]


def test_version_1_documents_are_still_read():
    snap, views = _views(20)
    old = _version_1(snap, views)
    assert read_discovery(old) == old


@pytest.mark.parametrize(
    "broken, says",
    [
        (lambda d: d["profiles"][0]["cells"].__setitem__(0, 10**6), "not an entry of the table"),
        (lambda d: d["profiles"][0]["cells"].pop(), "has not one cell per tool"),
        (lambda d: d["cells"].__setitem__(0, ["visible", None]), "is not a row of"),
        (lambda d: d.pop("schemas"), "malformed version-4 discovery document"),
        (lambda d: d["schemas"][-1].__setitem__("properties", {"x": 10**6}), "not an entry"),
        (  # a schema that holds itself: was a RecursionError
            lambda d: d["schemas"][-1].__setitem__("not", len(d["schemas"]) - 1),
            "contains itself",
        ),
        (lambda d: d["findings"].__setitem__(0, [0]), "a finding is not a row of"),
        (lambda d: d.__setitem__("version", 9), "version 9 is not supported"),
    ],
)
def test_a_damaged_document_is_an_input_error_naming_what_is_wrong(broken, says):
    snap, views = _views(20)
    doc = _write(snap, views)
    broken(doc)
    with pytest.raises(InputError, match=says):
        read_discovery(doc, where="d.json")
