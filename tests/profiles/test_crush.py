"""Crush (0.90.0 to nightly 37f36e9, code evidence; clients/crush.yaml): what its profile predicts
for a real bundled server, and fantasy's Normalize (docs/clients/crush.md#crush).

Crush cannot be run here, so these tests check the profile's predictions against what the read
source says: tools named mcp_<server>_<tool>, only the first tools/list page, the root rebuilt
from type/properties/required (a root anyOf and additionalProperties dropped), type lists as anyOf.
"""

from __future__ import annotations

import json

from mcp_matrix.behaviours.fantasy import fantasy_normalize
from mcp_matrix.report.discovery_doc import read_discovery
from tests.behaviours.conftest import discover
from tests.conftest import run_cli_in_process


def test_a_bundled_server_seen_through_crush_shows_its_names_page_and_root_rewrites():
    done = run_cli_in_process(
        "discover", "--server", "memory --schema anyof --page-size 4", "--client", "crush", "--json"
    )
    assert done.returncode in (0, 1), done.stderr
    tools = {t["tool"]: t for t in read_discovery(json.loads(done.stdout))["profiles"][0]["tools"]}
    shown = [n for n, t in tools.items() if t["verdict"] != "hidden"]
    assert shown == ["memory_store", "memory_recall", "memory_forget", "memory_reflect"]
    assert {t["model_name"] for n, t in tools.items() if n in shown} == {
        f"mcp_memory_{n}" for n in shown
    }
    hidden = {c["code"] for t in tools.values() if t["verdict"] == "hidden" for c in t["findings"]}
    assert hidden == {"page-not-read"}
    reflect = tools["memory_reflect"]
    assert set(reflect["model_schema"]) == {"type", "properties", "required"}
    assert reflect["model_schema"]["type"] == "object"
    removed = {f["pointer"] for f in reflect["findings"] if f["code"] == "removed-by-client"}
    assert removed == {"/inputSchema/anyOf", "/inputSchema/additionalProperties"}


def test_only_type_properties_and_required_survive_at_the_root():
    tool = {
        "name": "t",
        "inputSchema": {
            "description": "root words",
            "$defs": {"Id": {"type": "string"}},
            "properties": {"id": {"$ref": "#/$defs/Id"}, "n": {"type": ["integer", "null"]}},
            "required": ["id"],
            "additionalProperties": False,
        },
    }
    view = discover("crush", [tool], server="s").tools[0]
    assert view.model_name == "mcp_s_t"
    assert view.model_schema == {
        "properties": {
            "id": {"$ref": "#/$defs/Id"},  # dangles: Crush keeps no $defs
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["id"],
        "type": "object",
    }


def test_fantasy_normalize_writes_type_lists_as_anyof_and_gives_arrays_items():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": ["array", "string"], "minLength": 1},
            "b": {"type": "array"},
            "c": {"type": "array", "items": {"type": "string"}},
        },
    }
    out = fantasy_normalize.rewrite(schema).schema
    assert out["properties"] == {
        "a": {"minLength": 1, "anyOf": [{"type": "array", "items": {}}, {"type": "string"}]},
        "b": {"type": "array", "items": {}},
        "c": {"type": "array", "items": {"type": "string"}},
    }
    assert fantasy_normalize.skip({"type": "object", "properties": {"x": {"type": "string"}}})


def test_a_type_list_said_as_anyof_is_no_loss_but_an_anyof_it_replaces_is():
    restated = fantasy_normalize.rewrite(
        {"type": "object", "properties": {"flag": {"type": ["boolean", "string"]}}}
    )
    assert restated.findings == ()
    replaced = fantasy_normalize.rewrite(
        {
            "type": "object",
            "properties": {
                "v": {"type": ["string", "null"], "anyOf": [{"minLength": 3}, {"type": "null"}]}
            },
        }
    )
    assert {(f.code, f.pointer) for f in replaced.findings} == {
        ("removed-by-client", "/inputSchema/properties/v/anyOf/0/minLength")
    }
