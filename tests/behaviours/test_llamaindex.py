"""LlamaIndex MCP tools (profile ``llamaindex``) on tool lists beyond the probe sets: the schema the
model was shown, run by hand on 2026-12-02 (mcp-matrix calibrate --client llamaindex --stdio ... on
the tool below; llama-index-tools-mcp 0.6.0, llama-index-core 0.14.25, llama-index-llms-openai 0.8.3),
and the names and refusals read in clients/calibrations/llamaindex/0.6.0.json."""

from __future__ import annotations

from mcp_matrix.behaviours.llamaindex import llamaindex_call_name, openai_name, parameters
from mcp_matrix.core.model import CallContext, CallPlan
from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}
SERVED = {
    "type": "object",
    "$defs": {
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "integer", "minimum": 0}},
            "required": ["x"],
        },
        "Unused": {"type": "object", "properties": {"u": {"type": "string"}}},
    },
    "properties": {
        "point": {"$ref": "#/$defs/Point", "description": "A point."},
        "maybe": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
        "kind": {"enum": ["a", "b"]},
        "one": {"enum": ["only"]},
        "mixed": {"enum": [1, "x"]},
        "n": {"type": "integer", "default": 5},
        "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        "arr": {"type": "array"},
    },
    "required": ["point", "kind"],
}
SHOWN = {
    "$defs": {
        "Point": {
            "properties": {
                "x": {"description": "", "title": "X", "type": "number"},
                "y": {
                    "anyOf": [{"type": "integer"}, {"type": "null"}],
                    "default": None,
                    "description": "",
                    "title": "Y",
                },
            },
            "required": ["x"],
            "title": "Point",
            "type": "object",
        }
    },
    "properties": {
        "point": {"$ref": "#/$defs/Point", "description": "A point."},
        "maybe": {
            "anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}],
            "default": None,
            "description": "",
        },
        "kind": {"description": "", "enum": ["a", "b"], "title": "Kind", "type": "string"},
        "one": {
            "anyOf": [{"const": "only", "type": "string"}, {"type": "null"}],
            "default": None,
            "description": "",
            "title": "One",
        },
        "mixed": {
            "anyOf": [{"enum": [1, "x"]}, {"type": "null"}],
            "default": None,
            "description": "",
            "title": "Mixed",
        },
        "n": {"default": 5, "description": "", "title": "N", "type": "integer"},
        "m": {
            "anyOf": [
                {"additionalProperties": {"type": "integer"}, "type": "object"},
                {"type": "null"},
            ],
            "default": None,
            "description": "",
            "title": "M",
        },
        "arr": {
            "anyOf": [{"items": {}, "type": "array"}, {"type": "null"}],
            "default": None,
            "description": "",
            "title": "Arr",
        },
    },
    "required": ["point", "kind"],
    "type": "object",
    "additionalProperties": False,
}


def test_the_schema_is_the_pydantic_models_as_observed():
    assert parameters(SERVED) == SHOWN


def test_names_have_invalid_characters_as_underscore():
    assert [openai_name(n) for n in ("files.read", "café", "a b", "ok-1_x")] == [
        "files_read",
        "caf_",
        "a_b",
        "ok-1_x",
    ]


def test_a_tuple_items_list_fails_the_whole_run():
    tup = {"type": "object", "properties": {"t": {"type": "array", "items": [{"type": "string"}]}}}
    view = discover(
        "llamaindex", [{"name": "ok", "inputSchema": OBJ}, {"name": "t", "inputSchema": tup}]
    )
    assert view.outcome == "server-dropped"
    assert all(t.verdict != "visible" for t in view.tools)


def test_a_renamed_tool_is_shown_but_its_calls_are_never_sent():
    view = discover("llamaindex", [{"name": "files.read", "inputSchema": OBJ}])
    assert view.tools[0].verdict != "hidden" and view.tools[0].model_name == "files_read"
    ctx = CallContext(tool="files.read", held_schema=OBJ, held_tool={"inputSchema": OBJ})
    refused = llamaindex_call_name(CallPlan(tool="files.read", arguments={"q": "x"}), ctx).refused
    assert refused is not None and "Tool files_read not found" in refused.message
    same = CallContext(tool="files_read", held_schema=OBJ, held_tool={"inputSchema": OBJ})
    assert llamaindex_call_name(CallPlan(tool="files_read", arguments={}), same).refused is None
