"""Plain schemas are judged without compiling: the judge may only say "valid" where every
validator accepts and "invalid" where every one refuses, and a plain schema is valid against
both metaschemas (so jsonschema is built for it without the metaschema check)."""

from __future__ import annotations

import fastjsonschema
import jsonschema
import pytest

from mcp_matrix.behaviours import validation
from mcp_matrix.behaviours.plain_schemas import INVALID, VALID, is_plain, judge
from tests.unit.test_validation_screen import INSTANCES as SCREENED

SCHEMAS = [
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}},
    {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/item", "description": "an item"}},
        "$defs": {"item": {"type": "object", "properties": {"id": {"type": "string"}}}},
    },
    {
        "type": "object",
        "properties": {"k": {"enum": [1, "a", None]}, "e": {"enum": [[1], {"a": 1}]}},
        "additionalProperties": False,
    },
    {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "object", "properties": {"c": {"const": True}, "z": {"const": 0}}},
    {
        "type": "object",
        "properties": {
            "x": {"type": ["number", "null"], "exclusiveMaximum": 5, "maximum": 9},
            "s": {"type": "string", "minLength": 2, "maxLength": 3, "format": "email"},
            "l": {"type": "array", "minItems": 1, "maxItems": 2, "items": False},
        },
        "additionalProperties": {"type": "boolean"},
    },
    {"$ref": "#/definitions/root", "definitions": {"root": {"allOf": [{"required": ["a"]}]}}},
    True,
]
INSTANCES = [
    *SCREENED,  # the 2020-12 screen's instances, and more
    {"n": 1.5},
    {"k": 1.0},
    {"e": [True]},
    {"e": [1]},
    {"z": False},
    {"x": 4.5, "s": "ab", "l": []},
    {"x": 5, "s": "abcd"},
    {"x": True, "other": False},
    {"x": None, "other": "yes"},
]


def _accepts(schema, instance) -> set[bool]:
    said = {
        jsonschema.Draft7Validator(schema).is_valid(instance),
        jsonschema.Draft202012Validator(schema).is_valid(instance),
    }
    try:
        fastjsonschema.compile(schema, use_default=False, use_formats=False)(instance)
        said.add(True)
    except fastjsonschema.JsonSchemaValueException:
        said.add(False)
    return said


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_judge_is_sure_only_where_every_validator_agrees(schema):
    assert is_plain(schema)
    sure = 0
    for instance in INSTANCES:
        said = _accepts(schema, instance)
        verdict = judge(schema, instance)
        if verdict == VALID:
            assert said == {True}, instance
        if verdict == INVALID:
            assert said == {False}, instance
        sure += verdict in (VALID, INVALID)
    assert sure > 0  # a judge that is never sure would pass the checks above and save nothing


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_a_plain_schema_is_valid_against_both_metaschemas(schema):
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a"},
        {"$id": "https://example.com/s", "type": "object"},
        {"type": "array", "prefixItems": [{"type": "string"}]},
        {"type": "array", "items": [{"type": "string"}]},
        {"properties": {"a": {"$ref": "#/$defs/a", "maxLength": 2}}, "$defs": {"a": {}}},
        {"properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"properties": {"a": {"$ref": "https://example.com/a"}}},
        {"required": "a"},
        {"type": "text"},
        {"minLength": -1},
        {"anyOf": []},
        {"oneOf": [{"type": "string"}]},
        {"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}},
    ],
)
def test_anything_else_is_not_plain(schema):
    assert not is_plain(schema)


def test_a_valid_call_of_a_plain_schema_compiles_nothing(monkeypatch):
    """The server's 2020-12 side and a client's draft-07 check take a valid call without
    fastjsonschema's compile or the metaschema walk (fails before: both compiled)."""
    compiled, checked = [], []
    real_compile, real_check = validation._fast_compile_new, validation._check_schema
    monkeypatch.setattr(
        validation, "_fast_compile_new", lambda s: compiled.append(s) or real_compile(s)
    )
    monkeypatch.setattr(
        validation, "_check_schema", lambda s, m: checked.append(s) or real_check(s, m)
    )
    schema = {"type": "object", "properties": {"q": {"type": "integer", "minimum": 4099}}}
    for dialect in ("2020-12", "draft-07"):
        assert not validation.validate(schema, {"q": 4100}, dialect).errors
    assert compiled == [] and checked == []
    errors = validation.validate(schema, {"q": 1}, "2020-12").errors  # jsonschema's words
    assert [e.message for e in errors] == ["1 is less than the minimum of 4099"]
    assert checked == []  # a plain schema is valid: no metaschema walk
