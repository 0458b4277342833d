"""Validation errors are fields (keyword, paths, the properties involved), the same from both engines."""

from __future__ import annotations

import pytest

from mcp_matrix.behaviours.validation import plain_errors, validate

SCHEMA = {
    "type": "object",
    "properties": {
        "account_id": {"type": "string"},
        "fields": {
            "type": "object",
            "properties": {"plan": {"type": "string"}},
            "required": ["plan"],
        },
    },
    "required": ["account_id"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("dialect", ["draft-07", "2020-12"])  # fastjsonschema, then jsonschema
def test_a_missing_and_an_unknown_property_are_named_in_fields(dialect):
    errors = validate(SCHEMA, {"customer_id": "acct_8Q2R"}, dialect).errors
    by = {e.validator: e for e in errors}
    assert by["required"].names == ("account_id",) and by["required"].path == ()
    if "additionalProperties" in by:  # fastjsonschema stops at the first error
        assert by["additionalProperties"].names == ("customer_id",)
        assert by["additionalProperties"].validator_value is False


@pytest.mark.parametrize("dialect", ["draft-07", "2020-12"])
def test_a_nested_error_carries_its_instance_path_and_the_failing_value(dialect):
    (error,) = validate(SCHEMA, {"account_id": "a", "fields": {"plan": 3}}, dialect).errors
    assert (error.validator, error.validator_value, error.path, error.instance) == (
        "type",
        "string",
        ("fields", "plan"),
        3,
    )
    if dialect == "2020-12":
        assert error.schema_path == ("properties", "fields", "properties", "plan", "type")


def test_plain_words_come_from_the_fields_whatever_the_validator_says():
    errors = validate(SCHEMA, {"customer_id": "acct_8Q2R", "fields": {}}, "2020-12").errors
    assert (
        plain_errors(errors)
        == "customer_id is unknown, fields.plan is missing, account_id is missing"
    )
