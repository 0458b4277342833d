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

import math
import numbers
import re
from collections import deque
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from fastjsonschema import JsonSchemaValueException
from jsonschema._utils import equal

from mcp_matrix.behaviours.plain_schemas import _target
from mcp_matrix.core.jsontypes import JSON

MAX_DEPTH = 40  # deeper descents go to jsonschema (it may give up there: its own answer)
_UNSET = object()


class TooDeep(Exception):
    """A descent deeper than ``MAX_DEPTH``: ask jsonschema."""


class Unresolved(Exception):
    """A reference to nothing was reached: jsonschema raises there, and its check says nothing."""


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
    target = _target(root, v)
    if target is None:  # is_plain(unresolved=True): the entry is not there
        raise Unresolved
    yield from _descend(x, target, root, depth)


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


__all__ = ["MAX_DEPTH", "PlainError", "TooDeep", "Unresolved", "errors_2020"]


# -- fastjsonschema's first draft-07 error (a client's own validation) ------------------------


class NotLikeFast(Exception):
    """A schema or value whose words fastjsonschema writes in ways not followed here: compile."""


_SIMPLE = re.compile(r"[A-Za-z0-9_]*\Z")
_FAST_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "number": (int, float, Decimal),
    "integer": (int,),
    "string": (str,),
    "array": (list, tuple),
    "object": (dict,),
}


def _plain_value(v: JSON) -> bool:
    """A value fastjsonschema writes into its words as ``str`` does (no escape to undo)."""
    if v is None or isinstance(v, (bool, int)):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, str):
        return bool(_SIMPLE.match(v))
    if isinstance(v, list):
        return all(_plain_value(x) for x in v)
    if isinstance(v, dict):
        return all(_SIMPLE.match(k) and _plain_value(x) for k, x in v.items())
    return False


def like_fast(schema: JSON) -> bool:
    """Whether ``fast_first_error`` follows fastjsonschema for this plain ``schema``: simple
    names and values, and nothing fastjsonschema refuses to compile (a required property that
    ``additionalProperties`` forbids)."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key in ("properties", "$defs", "definitions"):
            if isinstance(node.get(key), dict) and not all(_SIMPLE.match(k) for k in node[key]):
                return False
        for key in ("enum", "const", "required"):
            if key in node and not _plain_value(node[key]):
                return False
        if "required" in node and not node.get("additionalProperties", True):
            listed = node.get("properties") or {}
            if any(name not in listed for name in node["required"]):
                return False
        stack.extend(
            v for k, v in node.items() if k not in ("enum", "const", "default", "examples")
        )
    return True


def _expand(root: JSON, node: JSON) -> JSON:
    """fastjsonschema's ``_expand_refs``: a reference replaced by what it names (as it is)."""
    if isinstance(node, list):
        return [_expand(root, v) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node and isinstance(node["$ref"], str):
        return _target(root, node["$ref"])
    return {k: _expand(root, v) for k, v in node.items()}


def _matches(x: JSON, value: JSON) -> bool:
    """fastjsonschema's ``_enum_value_matches``."""
    if isinstance(value, bool):
        return isinstance(x, bool) and x is value
    if isinstance(value, (int, float)):
        return isinstance(x, (int, float)) and not isinstance(x, bool) and x == value
    if value is None:
        return x is None
    if isinstance(value, str):
        return isinstance(x, str) and x == value
    if isinstance(value, dict):
        if not value:
            return isinstance(x, dict) and not x
        return (
            isinstance(x, dict)
            and len(x) == len(value)
            and all(k in x and _matches(x[k], v) for k, v in value.items())
        )
    if isinstance(value, list):
        if not value:
            return isinstance(x, (list, tuple)) and not x
        return (
            isinstance(x, (list, tuple))
            and len(x) == len(value)
            and all(_matches(x[i], v) for i, v in enumerate(value))
        )
    return bool(x == value)


class _Fast:
    """One walk of fastjsonschema's draft-07 checks, in its keyword order; the first error."""

    def __init__(self, root: JSON) -> None:
        self.root = root

    def error(
        self, message: str, x: JSON, name: str, node: JSON, rule: str | None
    ) -> JsonSchemaValueException:
        return JsonSchemaValueException(
            message, value=x, name=name, definition=_expand(self.root, node), rule=rule
        )

    def first(self, node: Any, x: Any, name: str, depth: int) -> JsonSchemaValueException | None:
        """The first error in fastjsonschema's keyword order (type, enum, allOf, anyOf, the
        bounds, items, required, properties, additionalProperties, the exclusive bounds,
        const), or None."""
        if depth > MAX_DEPTH:
            raise TooDeep
        if node is True:
            return None
        if node is False:
            return self.error(f"{name} must not be there", x, name, node, None)
        if "$ref" in node:
            return self.first(_target(self.root, node["$ref"]), x, name, depth + 1)
        return (
            self._head(node, x, name, depth)
            or self._bounds(_BOUNDS_BEFORE, node, x, name)
            or self._items(node, x, name, depth)
            or self._object(node, x, name, depth)
            or self._bounds(_BOUNDS_AFTER, node, x, name)
            or self._const(node, x, name)
        )

    def _head(self, node: Any, x: Any, name: str, depth: int) -> JsonSchemaValueException | None:
        if "type" in node:
            types = node["type"] if isinstance(node["type"], list) else [node["type"]]
            wrong = not isinstance(x, tuple(t for n in types for t in _FAST_TYPES[n]))
            if "integer" in types:
                wrong = wrong and not (isinstance(x, float) and x.is_integer())
            if ("number" in types or "integer" in types) and "boolean" not in types:
                wrong = wrong or isinstance(x, bool)
            if wrong:
                return self.error(f"{name} must be {' or '.join(types)}", x, name, node, "type")
        if "enum" in node and not any(_matches(x, v) for v in node["enum"]):
            return self.error(f"{name} must be one of {node['enum']}", x, name, node, "enum")
        for sub in node.get("allOf", ()):
            found = self.first(sub, x, name, depth + 1)
            if found is not None:
                return found
        if "anyOf" in node and all(
            self.first(sub, x, name, depth + 1) is not None for sub in node["anyOf"]
        ):
            return self.error(
                f"{name} cannot be validated by any definition", x, name, node, "anyOf"
            )
        return None

    def _bounds(
        self, bounds: tuple[_Bound, ...], node: Any, x: Any, name: str
    ) -> JsonSchemaValueException | None:
        for key, applies, broken, words in bounds:
            if key in node and applies(x) and broken(x, node[key]):
                return self.error(f"{name} {words.format(node[key])}", x, name, node, key)
        return None

    def _items(self, node: Any, x: Any, name: str, depth: int) -> JsonSchemaValueException | None:
        items = node.get("items", True)
        if not isinstance(x, (list, tuple)) or items is True:
            return None
        if items is False:
            return self.error(f"{name} must not be there", x, name, node, "items") if x else None
        for i, item in enumerate(x if items else ()):
            found = self.first(items, item, f"{name}[{i}]", depth + 1)
            if found is not None:
                return found
        return None

    def _object(self, node: Any, x: Any, name: str, depth: int) -> JsonSchemaValueException | None:
        """required, properties and additionalProperties: one set of keys, as fastjsonschema
        keeps it (the properties' keys taken out; its order is that set's)."""
        if not isinstance(x, dict):
            return None
        missing = set(node.get("required", ())) - x.keys()
        if missing:
            words = f"{name} must contain {sorted(missing)} properties"
            return self.error(words, x, name, node, "required")
        keys = set(x.keys())
        for key, sub in node.get("properties", {}).items():
            if key in keys:
                keys.remove(key)
                found = self.first(sub, x[key], f"{name}.{key}", depth + 1)
                if found is not None:
                    return found
        extra = node.get("additionalProperties", True)
        if extra is True or extra == {}:
            return None
        if not extra:
            words = f"{name} must not contain {keys} properties"
            return self.error(words, x, name, node, "additionalProperties") if keys else None
        listed = list(node.get("properties", {}).keys())
        for key in keys:
            if key not in listed:
                found = self.first(extra, x.get(key), f"{name}.{key}", depth + 1)
                if found is not None:
                    return found
        return None

    def _const(self, node: Any, x: Any, name: str) -> JsonSchemaValueException | None:
        if "const" in node and not _matches(x, node["const"]):
            words = f"{name} must be same as const definition: {node['const']}"
            return self.error(words, x, name, node, "const")
        return None


def _number(x: Any) -> bool:
    return isinstance(x, (int, float, Decimal)) and not isinstance(x, bool)


# (keyword, the instances it reads, whether the value breaks it, fastjsonschema's words)
_Bound = tuple[str, Callable[[Any], bool], Callable[[Any, Any], bool], str]
_BOUNDS_BEFORE: tuple[_Bound, ...] = (
    (
        "minLength",
        _IS["string"],
        lambda x, b: len(x) < b,
        "must be longer than or equal to {} characters",
    ),
    (
        "maxLength",
        _IS["string"],
        lambda x, b: len(x) > b,
        "must be shorter than or equal to {} characters",
    ),
    ("minimum", _number, lambda x, b: x < b, "must be bigger than or equal to {}"),
    ("maximum", _number, lambda x, b: x > b, "must be smaller than or equal to {}"),
    (
        "minItems",
        lambda x: isinstance(x, (list, tuple)),
        lambda x, b: len(x) < b,
        "must contain at least {} items",
    ),
    (
        "maxItems",
        lambda x: isinstance(x, (list, tuple)),
        lambda x, b: len(x) > b,
        "must contain less than or equal to {} items",
    ),
)
_BOUNDS_AFTER: tuple[_Bound, ...] = (
    ("exclusiveMinimum", _number, lambda x, b: x <= b, "must be bigger than {}"),
    ("exclusiveMaximum", _number, lambda x, b: x >= b, "must be smaller than {}"),
)


def fast_first_error(schema: JSON, instance: JSON) -> JsonSchemaValueException | None:
    """The error fastjsonschema's compiled draft-07 check raises for ``instance`` against the
    plain ``schema`` (``like_fast``), or None; ``TooDeep`` past ``MAX_DEPTH``."""
    return _Fast(schema).first(schema, instance, "data", 0)


# Checked against the installed fastjsonschema once a process (``validation._fast_words_hold``):
# one schema, one instance for each wording above (one compile).
FAST_CASE_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "t": {"type": ["integer", "null"]},
        "n": {"type": "number", "minimum": 1, "maximum": 3},
        "x": {"exclusiveMinimum": 1, "exclusiveMaximum": 3},
        "e": {"enum": ["a", 1, None, [1], {"k": True}]},
        "c": {"const": "b"},
        "s": {"minLength": 2, "maxLength": 3},
        "a": {"items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        "f": {"items": False},
        "o": {"allOf": [{"required": ["p"]}], "anyOf": [{"type": "string"}, {"type": "object"}]},
        "r": {"$ref": "#/$defs/item"},
        "z": False,
        "m": {
            "properties": {"i": {"type": "integer"}},
            "additionalProperties": {"type": "boolean"},
        },
        "q": {"additionalProperties": False, "properties": {"p": {}}},
    },
    "required": ["t"],
    "$defs": {"item": {"type": "object", "properties": {"id": {"type": "string"}}}},
}
FAST_CASE_INSTANCES: tuple[JSON, ...] = (
    {},
    {"t": True},
    {"t": 2.5},
    {"t": 1, "n": "1"},
    {"t": 1, "n": 0},
    {"t": 1, "n": 4.5},
    {"t": 1, "x": 1},
    {"t": 1, "x": 3.0},
    {"t": 1, "e": True},
    {"t": 1, "e": [True]},
    {"t": 1, "c": "a"},
    {"t": 1, "s": "a"},
    {"t": 1, "s": "abcd"},
    {"t": 1, "a": []},
    {"t": 1, "a": ["a", "b", "c"]},
    {"t": 1, "a": ["a", 2]},
    {"t": 1, "f": [1]},
    {"t": 1, "o": {}},
    {"t": 1, "o": 1},
    {"t": 1, "r": {"id": 1}},
    {"t": 1, "z": 0},
    {"t": 1, "m": {"i": 1.5}},
    {"t": 1, "m": {"i": 1, "j": True, "k": 0}},
    {"t": 1, "q": {"p": 1, "u": 2, "v": 3}},
    {"t": None, "n": 2, "x": 2, "e": {"k": True}, "c": "b", "s": "ab", "o": {"p": 1}},
)
