"""A caller that changes its arguments in place and validates them again gets the verdict of
what they hold now.

``validate`` keeps the plain-schema judge's verdict for the last (schema, arguments) objects
(the client and the modelled server judge the very same ones, one after the other); since
6da3240 a hit was checked by identity only, so arguments changed in place kept the verdict
of what they held before. The saving itself is counted in test_validation_judged_once."""

from __future__ import annotations

from mcp_matrix.behaviours import validation
from mcp_matrix.behaviours.validation import validate


def schema(n: int) -> dict:
    return {
        "type": "object",
        "properties": {"a": {"type": "string"}, "n": {"type": "integer", "minimum": n}},
        "required": ["a"],
    }


def test_arguments_changed_in_place_are_judged_again():
    held, arguments = schema(9101), {"a": "x"}
    for dialect in ("draft-07", "2020-12"):
        assert validate(held, arguments, dialect).errors == ()
    arguments["a"] = 5
    for dialect in ("draft-07", "2020-12"):
        found = validate(held, arguments, dialect).errors
        assert [e.validator for e in found] == ["type"]  # fails before: [] (the stale verdict)


def test_a_change_deep_inside_or_of_a_type_only_is_judged_again():
    held = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}
    arguments: dict = {"xs": [1, 2]}
    assert validate(held, arguments, "2020-12").errors == ()
    arguments["xs"][1] = True  # equal to 1 in Python, not an integer in JSON Schema
    assert [e.validator for e in validate(held, arguments, "2020-12").errors] == ["type"]
    arguments["xs"][1] = 2.5
    assert [e.validator for e in validate(held, arguments, "2020-12").errors] == ["type"]


def test_the_same_unchanged_objects_are_still_judged_once(monkeypatch):
    judged: list = []
    real = validation.judge
    monkeypatch.setattr(validation, "judge", lambda *a: judged.append(a) or real(*a))
    held, arguments = schema(9301), {"a": "x", "n": 9302}
    validate(held, arguments, "draft-07")
    validate(held, arguments, "2020-12")
    assert len(judged) == 1
    arguments["n"] = 1
    assert validate(held, arguments, "2020-12").errors
    assert len(judged) == 2


def test_contents_tell_apart_what_python_calls_equal():
    from mcp_matrix.behaviours.validation import contents

    assert contents({"a": 1}) != contents({"a": True}) != contents({"a": 1.0})
    assert contents({"a": 1, "b": 2}) != contents({"b": 2, "a": 1})
    assert contents({"a": [1]}) == contents({"a": [1]})
    assert contents({"a": "x" * 20_000}) is None  # too large to keep: judged every time
    assert contents({"a": ["x" * 9_000, "y" * 9_000]}) is None
    assert contents({"a": object()}) is None


def test_a_long_string_is_not_copied_to_find_it_too_long(monkeypatch):
    import marshal

    from mcp_matrix.behaviours.validation import contents

    copied: list = []
    real = marshal.dumps
    monkeypatch.setattr(marshal, "dumps", lambda *a: copied.append(a) or real(*a))
    assert contents({"text": "x" * (1 << 20), "n": 1}) is None
    assert contents(["y" * (1 << 20)]) is None
    assert copied == []  # fails before 8ac4702: 2 copies of 1 MiB
