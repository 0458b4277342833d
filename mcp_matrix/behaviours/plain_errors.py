"""jsonschema's own errors for a plain schema, without building a validator.

Why: the modelled server of an offline replay refuses many calls (a stringified object, a
retyped value), and each refusal went through jsonschema's ``iter_errors`` for its words:
a tenth of a large replay. For a plain schema (``plain_schemas.is_plain``: a few keywords,
each well typed, references local) the 2020-12 errors are written here exactly as
jsonschema writes them, in its order, with its keyword, value, paths, instance and message
(and this package's bounded ``additionalProperties`` words, ``validation._BOUNDED``): the
same ``Violation`` values. ``words_match`` checks that on a set of cases against the
installed jsonschema once a process; if any differs (another jsonschema release), nothing
here is used and jsonschema is asked as before.
"""

from __future__ import annotations

import numbers
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from jsonschema._utils import equal

from mcp_matrix.behaviours.plain_schemas import _target
from mcp_matrix.core.jsontypes import JSON

MAX_DEPTH = 40  # deeper descents go to jsonschema (it may give up there: its own answer)
_UNSET = object()


class TooDeep(Exception):
    """A descent deeper than ``MAX_DEPTH``: ask jsonschema."""


class PlainError:
    """One error as jsonschema's ``ValidationError`` carries it (the fields ``Violation`` reads)."""

    __slots__ = (
        "instance",
        "message",
        "path",
        "schema",
        "schema_path",
        "validator",
        "validator_value",
    )

    def __init__(
        self,
        message: str,
        validator: object = _UNSET,
        value: object = _UNSET,
        instance: object = _UNSET,
        schema: object = _UNSET,
    ) -> None:
        self.message = message
        self.validator = validator
        self.validator_value = value
        self.instance = instance
        self.schema = schema
        self.path: deque = deque()
        self.schema_path: deque = deque()


def _is_number(x: JSON) -> bool:
    return not isinstance(x, bool) and isinstance(x, numbers.Number)


def _is_integer(x: JSON) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_IS: dict[str, Callable[[JSON], bool]] = {
    "array": lambda x: isinstance(x, list),
    "boolean": lambda x: isinstance(x, bool),
    "integer": _is_integer,
    "null": lambda x: x is None,
    "number": _is_number,
    "object": lambda x: isinstance(x, dict),
    "string": lambda x: isinstance(x, str),
}


def _equal(one: JSON, two: JSON) -> bool:
    return bool(equal(one, two))  # jsonschema's own equality (True is not 1)


_Errors = Iterator[PlainError]


def _descend(
    x: JSON, schema: JSON, root: JSON, depth: int, path: object = None, spath: object = None
) -> _Errors:
    """``Validator.descend``: a ``False`` schema's error is not given the path or schema path."""
    if schema is True:
        return
    if schema is False:
        yield PlainError(f"False schema does not allow {x!r}", None, None, x, False)
        return
    for error in _node(schema, x, root, depth + 1):
        if path is not None:
            error.path.appendleft(path)
        if spath is not None:
            error.schema_path.appendleft(spath)
        yield error


def _node(schema: Any, x: JSON, root: JSON, depth: int) -> _Errors:
    """The keywords of one schema object in its order, as ``Validator.iter_errors`` runs them."""
    if depth > MAX_DEPTH:
        raise TooDeep
    for key, value in schema.items():
        rule = _RULES.get(key)
        if rule is None:
            continue
        for error in rule(value, x, schema, root, depth):
            if error.validator is _UNSET:
                error.validator = key
            if error.validator_value is _UNSET:
                error.validator_value = value
            if error.instance is _UNSET:
                error.instance = x
            if error.schema is _UNSET:
                error.schema = schema
            if key != "$ref":
                error.schema_path.appendleft(key)
            yield error


def _type(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    types = [v] if isinstance(v, str) else v
    if not any(_IS[t](x) for t in types):  # type: ignore[union-attr, index]
        reprs = ", ".join(repr(t) for t in types)  # type: ignore[union-attr]
        yield PlainError(f"{x!r} is not of type {reprs}")


def _enum(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    if all(not _equal(each, x) for each in v):  # type: ignore[union-attr]
        yield PlainError(f"{x!r} is not one of {v!r}")


def _const(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    if not _equal(x, v):
        yield PlainError(f"{v!r} was expected")


def _bound(test: Callable[[Any, Any], bool], words: str) -> Callable[..., _Errors]:
    def rule(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
        if _is_number(x) and test(x, v):
            yield PlainError(f"{x!r} is {words} {v!r}")

    return rule


def _size(kind: type, too_few: bool, one: str, other: str) -> Callable[..., _Errors]:
    """minLength, maxLength, minItems, maxItems: jsonschema's words for each bound."""

    def rule(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
        if isinstance(x, kind) and (len(x) < v if too_few else len(x) > v):  # type: ignore[arg-type, operator]
            yield PlainError(f"{x!r} {one if v == (1 if too_few else 0) else other}")

    return rule


def _required(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    if isinstance(x, dict):
        for name in v:  # type: ignore[union-attr]
            if name not in x:
                yield PlainError(f"{name!r} is a required property")


def _properties(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    if isinstance(x, dict):
        for name, sub in v.items():  # type: ignore[union-attr]
            if name in x:
                yield from _descend(x[name], sub, root, depth, name, name)


def _additional(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    """``validation._additional_properties`` (no ``patternProperties`` in a plain schema)."""
    if not isinstance(x, dict):
        return
    listed = schema.get("properties", {})
    extras = [k for k in x if k not in listed]
    if isinstance(v, dict):
        for extra in extras:
            yield from _descend(x[extra], v, root, depth, extra)
    elif not v and extras:
        named = ", ".join(repr(e) for e in sorted(extras, key=str))
        yield PlainError(f"Additional properties are not allowed ({named} unexpected)")


def _items(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    """2020-12 ``items`` (no ``prefixItems`` in a plain schema)."""
    if not isinstance(x, list) or not x:
        return
    if v is False:
        rest = x if len(x) != 1 else x[0]
        yield PlainError(f"Expected at most 0 items but found {len(x)} extra: {rest!r}")
        return
    for index, item in enumerate(x):
        yield from _descend(item, v, root, depth, index)


def _all_of(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    for index, sub in enumerate(v):  # type: ignore[arg-type]
        yield from _descend(x, sub, root, depth, spath=index)


def _any_of(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    for index, sub in enumerate(v):  # type: ignore[arg-type]
        if not list(_descend(x, sub, root, depth, spath=index)):
            return
    yield PlainError(f"{x!r} is not valid under any of the given schemas")


def _ref(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> _Errors:
    yield from _descend(x, _target(root, v), root, depth)


_RULES: dict[str, Callable[..., _Errors]] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "minimum": _bound(lambda x, b: x < b, "less than the minimum of"),
    "maximum": _bound(lambda x, b: x > b, "greater than the maximum of"),
    "exclusiveMinimum": _bound(lambda x, b: x <= b, "less than or equal to the minimum of"),
    "exclusiveMaximum": _bound(lambda x, b: x >= b, "greater than or equal to the maximum of"),
    "minLength": _size(str, True, "should be non-empty", "is too short"),
    "maxLength": _size(str, False, "is expected to be empty", "is too long"),
    "minItems": _size(list, True, "should be non-empty", "is too short"),
    "maxItems": _size(list, False, "is expected to be empty", "is too long"),
    "required": _required,
    "properties": _properties,
    "additionalProperties": _additional,
    "items": _items,
    "allOf": _all_of,
    "anyOf": _any_of,
    "$ref": _ref,
}


# Checked against the installed jsonschema once a process (``validation._plain_words_hold``):
# every keyword and every wording above, nested, in order, past the error limit.
CASES: tuple[tuple[JSON, JSON], ...] = (
    (
        {
            "type": "object",
            "properties": {
                "s": {"type": "string", "minLength": 2, "maxLength": 3},
                "e": {"minLength": 1, "maxLength": 0},
                "n": {"type": ["integer", "null"], "minimum": 1, "maximum": 3},
                "x": {"exclusiveMinimum": 1, "exclusiveMaximum": 0},
            },
            "required": ["s", "missing"],
        },
        {"s": "abcd", "e": "", "n": 2.5, "x": 1},
    ),
    (
        {
            "properties": {
                "s": {"minLength": 3, "maxLength": 1},
                "n": {"minimum": 3, "maximum": 1},
                "k": {"enum": ["a", 1, None], "const": "b"},
            },
            "required": ["other"],
        },
        {"s": "ab", "n": 2, "k": True},
    ),
    (
        {
            "properties": {
                "a": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 1},
                "b": {"minItems": 1, "maxItems": 0},
                "f": False,
            },
        },
        {"a": [1, "b"], "b": [], "f": 0},
    ),
    (
        {
            "properties": {
                "c": {"maxItems": 0},
                "r": {"$ref": "#/$defs/item"},
                "o": {"properties": {"deep": {"allOf": [{"type": "string"}, {"enum": [True]}]}}},
            },
            "additionalProperties": False,
            "$defs": {"item": {"type": "object", "required": ["id"]}},
        },
        {"c": [1], "r": {"x": 1}, "o": {"deep": 1}, "u": 1, "t": 2},
    ),
    (
        {
            "properties": {
                "a": {"items": False},
                "b": {"items": False},
                "c": {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/d"}]},
                "d": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "additionalProperties": {"type": "integer"},
            "definitions": {"d": {"type": "null"}},
        },
        {"a": [1], "b": [1, 2], "c": 2.0, "d": 2.0, "z": "z"},
    ),
    ({"type": "object", "additionalProperties": False}, {"one": 1}),
    ({"required": ["a", "b"], "const": "b"}, {"a": 1}),
    ({"type": ["object", "array"], "required": ["a"]}, "text"),
    (False, {"a": 1}),
)


def errors_2020(schema: JSON, instance: JSON, limit: int) -> list[PlainError]:
    """The first ``limit`` errors jsonschema's 2020-12 validator (with this package's bounded
    keywords) gives ``instance`` against the plain ``schema``; raises ``TooDeep`` past
    ``MAX_DEPTH`` levels."""
    if schema is True:
        return []
    if schema is False:
        return [
            PlainError(f"False schema does not allow {instance!r}", None, None, instance, False)
        ]
    out: list[PlainError] = []
    assert isinstance(schema, dict)  # a plain schema: a boolean or an object
    for error in _node(schema, instance, schema, 0):
        out.append(error)
        if len(out) >= limit:
            break
    return out


__all__ = ["MAX_DEPTH", "PlainError", "TooDeep", "errors_2020"]
