"""The 2020-12 validator's compiled screen: it may only ever say "valid" where jsonschema does,
and every error still comes from jsonschema, in its words."""

from __future__ import annotations

import jsonschema
import pytest

from mcp_matrix.behaviours import validation
from mcp_matrix.behaviours.validation import validate

SCHEMAS = [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
    {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/item"}},
        "$defs": {"item": {"type": "object", "properties": {"id": {"type": "string"}}}},
    },
    {
        "type": "object",
        "properties": {"k": {"enum": [1, "a", None]}},
        "additionalProperties": False,
    },
    {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "object", "properties": {"c": {"const": True}}},
    {"type": "object", "properties": {"u": {"type": "array", "uniqueItems": True}}},
]
INSTANCES = [
    {},
    {"n": 0},
    {"n": 1},
    {"n": 1.0},
    {"n": True},
    {"tags": ["x", 1]},
    {"tags": ["x"]},
    {"item": {"id": 5}},
    {"item": {"id": "5"}},
    {"k": 1},
    {"k": True},
    {"k": "b"},
    {"k": None, "extra": 1},
    {"a": 1},
    {"c": 1},
    {"c": True},
    {"u": [1, True]},
    {"u": [1, 1.0]},
    [],
    "text",
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_screened_2020_12_check_agrees_with_jsonschema_on_every_instance(schema):
    plain = jsonschema.Draft202012Validator(schema)
    for instance in INSTANCES:
        ours = validate(schema, instance, "2020-12")
        theirs = sorted(e.message for e in plain.iter_errors(instance))
        assert bool(ours.errors) == bool(theirs), (schema, instance)


def test_an_error_under_the_screen_is_jsonschemas_own_message():
    schema = SCHEMAS[0]
    errors = validate(schema, {"n": 0}, "2020-12").errors
    assert [e.message for e in errors] == ["0 is less than the minimum of 1"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "prefixItems": [{"type": "string"}]},
        {"type": "array", "items": [{"type": "string"}]},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/a", "maxLength": 2}}},
        {"type": "object", "unevaluatedProperties": False},
        {"type": "object", "dependentRequired": {"a": ["b"]}},
    ],
)
def test_schemas_that_draft_07_reads_differently_get_no_screen(schema):
    assert not validation._reads_the_same_in_draft7(schema)


def test_a_ref_with_only_a_description_beside_it_keeps_the_screen():
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a", "description": "A"}}}
    assert validation._reads_the_same_in_draft7(schema)


def test_a_ref_sibling_that_2020_12_applies_is_enforced():
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/s", "maxLength": 2}},
        "$defs": {"s": {"type": "string"}},
    }
    assert validate(schema, {"a": "long"}, "2020-12").errors
