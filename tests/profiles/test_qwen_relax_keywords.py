"""Qwen Code 0.24.4 drops $schema, $id and uniqueItems at every level of a tool's parameters
(relaxSchemaForFunctionCalling, npm @qwen-code/qwen-code@0.24.4 chunks/chunk-CF5KXZZX.js, run by
convertLlmToolsToOpenAI on every function declaration): the qwen-code profile's relax-keywords
rule, with code evidence (no probe set has these keywords nested)."""

from __future__ import annotations

from tests.behaviours.conftest import discover, load

TOOL = {
    "name": "tagged",
    "inputSchema": {
        "type": "object",
        "$id": "urn:example:tagged",
        "properties": {
            "$id": {"type": "string", "description": "a property named $id"},
            "tags": {
                "type": "array",
                "items": {"type": "string", "$schema": "http://json-schema.org/draft-07/schema#"},
                "uniqueItems": True,
            },
            "kind": {"enum": [{"uniqueItems": True}]},
        },
        "required": ["$id", "tags"],
    },
}


def test_qwen_code_drops_id_unique_items_and_nested_schema_everywhere():
    view = discover("qwen-code", [TOOL]).tools[0]
    assert view.model_schema == {
        "type": "object",
        "properties": {
            "$id": {"type": "string", "description": "a property named $id"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"enum": [{"uniqueItems": True}]},  # a value, copied untouched
        },
        "required": ["$id", "tags"],
    }
    removed = {f.pointer for f in view.findings if f.code == "removed-by-client"}
    assert removed == {
        "/inputSchema/$id",
        "/inputSchema/properties/tags/uniqueItems",
        "/inputSchema/properties/tags/items/$schema",
    }
    assert view.verdict == "degraded"  # uniqueItems was a constraint the model no longer sees


def test_the_rule_cites_the_installed_source_as_code_evidence():
    rule = next(u for u in load("qwen-code").discovery if u.id == "relax-keywords")
    assert dict(rule.params) == {"keywords": ["$schema", "$id", "uniqueItems"], "where": "all"}
    assert [e.level for e in rule.evidence] == ["code"]
    assert "@qwen-code/qwen-code@0.24.4" in rule.evidence[0].source
    assert "relaxSchemaForFunctionCalling" in rule.evidence[0].source
