"""langchain-google-genai 4.4.3's Gemini Schema (behaviour langchain-genai-schema), through the
langchain-google profile: what the calibration observed, and what the model loses there."""

from __future__ import annotations

import pytest

from mcp_matrix.behaviours import langchain_genai
from tests.behaviours.conftest import discover


def view(*schemas: dict):
    return discover(
        "langchain-google",
        [
            {"name": f"t{i}", "description": "A tool.", "inputSchema": s}
            for i, s in enumerate(schemas)
        ],
    )


def only(schema: dict):
    return view(schema).tools[0]


def test_types_go_upper_case_and_an_unchanged_schema_is_still_visible():
    t = only({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})
    assert t.model_schema == {
        "type": "OBJECT",
        "properties": {"q": {"type": "STRING"}},
        "required": ["q"],
    }
    assert t.verdict == "visible"  # the spelling of a type costs the model nothing


def test_every_nested_property_is_made_required_and_the_root_gets_an_empty_required_list():
    t = only(
        {
            "type": "object",
            "properties": {
                "o": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "string"},
                        "b": {"type": "string", "default": "x"},
                    },
                },
            },
        }
    )
    assert t.model_schema == {
        "type": "OBJECT",
        "required": [],
        "properties": {
            "o": {
                "type": "OBJECT",
                "properties": {"a": {"type": "STRING"}, "b": {"type": "STRING"}},
                "required": ["a"],
            },
        },
    }
    assert any(
        f.lost and f.pointer.endswith("/properties/o/properties/b/default") for f in t.findings
    )


def test_keywords_outside_the_gemini_subset_are_lost_and_reported():
    t = only(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "email": {"type": "string", "format": "email", "maxLength": 80},
                "size": {"type": "integer", "minimum": 1},
                "kind": {"type": "string", "enum": ["a", "b"]},
            },
        }
    )
    assert t.model_schema["properties"] == {
        "email": {"type": "STRING"},
        "size": {"type": "INTEGER"},
        "kind": {"type": "STRING", "enum": ["a", "b"]},
    }
    assert t.verdict == "degraded"
    lost = {f.pointer.removeprefix("/inputSchema") for f in t.findings if f.lost}
    assert {
        "/additionalProperties",
        "/properties/email/format",
        "/properties/email/maxLength",
        "/properties/size/minimum",
    } <= lost


def test_an_object_without_properties_becomes_a_string_and_a_nested_anyof_is_sent_as_any_of():
    t = only(
        {
            "type": "object",
            "properties": {
                "state": {"type": "object"},
                "v": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "maybe": {"type": ["string", "null"]},
            },
        }
    )
    assert t.model_schema["properties"] == {
        "state": {"type": "STRING"},
        "v": {"any_of": [{"type": "STRING"}, {"type": "INTEGER"}]},
        "maybe": {"type": "STRING"},
    }
    lost = {f.pointer.removeprefix("/inputSchema") for f in t.findings if f.lost}
    assert "/properties/state/type" in lost and "/properties/v/anyOf" not in lost


def test_a_function_without_properties_is_sent_with_no_parameters_and_loses_nothing():
    t = only({"type": "object", "properties": {}})
    assert t.verdict == "visible" and t.model_schema is None


def test_a_root_allof_replaces_the_parameters_and_the_model_sees_none_of_them():
    t = only(
        {"type": "object", "properties": {"a": {"type": "string"}}, "allOf": [{"required": ["a"]}]}
    )
    assert t.model_schema is None
    assert t.verdict == "degraded"
    assert any(
        f.code == "parameters-dropped" and "none of a" in f.message and f.lost for f in t.findings
    )


@pytest.mark.parametrize(
    "schema, why",
    [
        (
            {"type": "object", "properties": {"n": {"type": "integer", "enum": [1, 2]}}},
            "enum must be a list of strings",
        ),
        ({"type": ["object", "null"], "properties": {"q": {"type": "string"}}}, "Invalid type"),
    ],
)
def test_a_schema_the_converter_raises_on_breaks_every_request_of_the_session(schema, why):
    out = view(schema, {"type": "object", "properties": {"q": {"type": "string"}}})
    assert out.outcome == "session-broken"
    assert why in out.findings[-1].message and "langchain-google-genai" in out.findings[-1].message


def test_a_schema_deeper_than_the_converters_recursion_breaks_the_session_and_ours_does_not_recurse():
    node: dict = {"type": "string"}
    for _ in range(langchain_genai.MAX_DEPTH + 50):
        node = {"type": "object", "properties": {"c": node}}
    assert view(node).outcome == "session-broken"
    assert "RecursionError" in view(node).findings[-1].message


def test_the_loss_diff_reads_the_gemini_schema_with_json_schema_spellings():
    sent = {
        "type": "OBJECT",
        "properties": {"v": {"any_of": [{"type": "STRING"}]}},
        "items": {"type": "ARRAY"},
    }
    assert langchain_genai.as_json_schema(sent) == {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "string"}]}},
        "items": {"type": "array"},
    }


def test_an_optional_value_keeps_its_null_variant_at_the_first_level_and_loses_it_deeper():
    optional = {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Or none."}
    t = only(
        {
            "type": "object",
            "properties": {
                "tag": optional,
                "o": {"type": "object", "properties": {"email": optional}},
            },
        }
    )
    props = t.model_schema["properties"]
    assert props["tag"] == {"type": "STRING", "nullable": True, "description": "Or none."}
    assert props["o"]["properties"]["email"] == {
        "type": "STRING",
        "description": "Or none.",
    }  # the second pass
    lost = {f.pointer.removeprefix("/inputSchema") for f in t.findings if f.lost}
    assert "/properties/o/properties/email/anyOf" in lost
    assert not any(p.startswith("/properties/tag") for p in lost)
