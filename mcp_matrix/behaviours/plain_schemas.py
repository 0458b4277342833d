"""Sure answers about plain schemas without compiling one: is it valid, is an instance valid.

Why: compiling (fastjsonschema's generated Python, jsonschema's walk of the 2020-12
metaschema) was most of a large offline replay's fixed cost, and most tools are called a few
times with valid arguments. A plain schema uses only keywords that draft-07 and 2020-12,
fastjsonschema and jsonschema read alike (types, properties, required, additionalProperties,
a schema ``items``, enum, const, bounds, lengths, anyOf, allOf, local references to ``$defs``
or ``definitions`` with nothing beside them that validates, annotations), each well typed, so
it is valid against both metaschemas. ``judge`` says ``VALID`` only when every validator
accepts an instance, ``INVALID`` only when every one refuses it, and ``UNSURE`` otherwise
(a float where an integer is asked, a boolean where a number is, an enum member equal to
``True`` and ``1``): the caller then asks the compiled validator, so errors and their words
still come from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mcp_matrix.core.jsontypes import JSON

INVALID, VALID, UNSURE = 0, 1, 2

_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "$comment",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",  # an annotation: no validator here is given a format checker
    }
)
_BESIDE_A_REF = _ANNOTATIONS | {"$ref", "$defs", "definitions", "$schema"}
_REF = re.compile(r"#/(\$defs|definitions)/([A-Za-z0-9_\-]+)\Z")
MAX_DEPTH = 64  # deeper schemas, and reference chains, are left to the validators
MAX_NODES = 20_000


def _number(v: JSON) -> bool:
    return type(v) in (int, float)


def _count(v: JSON) -> bool:
    return type(v) is int and v >= 0


def _type_names(v: JSON) -> bool:
    if isinstance(v, str):
        return v in _TYPES
    return (
        type(v) is list
        and bool(v)
        and all(isinstance(t, str) and t in _TYPES for t in v)
        and len(set(v)) == len(v)  # type: ignore[arg-type]
    )


def _names(v: JSON) -> bool:
    return type(v) is list and all(isinstance(n, str) for n in v) and len(set(v)) == len(v)  # type: ignore[arg-type]


_WELL_TYPED: dict[str, Callable[[JSON], bool]] = {
    "type": _type_names,
    "enum": lambda v: type(v) is list,
    "const": lambda v: True,
    "required": _names,
    "minimum": _number,
    "maximum": _number,
    "exclusiveMinimum": _number,
    "exclusiveMaximum": _number,
    "minLength": _count,
    "maxLength": _count,
    "minItems": _count,
    "maxItems": _count,
    "description": lambda v: isinstance(v, str),
    "title": lambda v: isinstance(v, str),
    "$comment": lambda v: isinstance(v, str),
    "format": lambda v: isinstance(v, str),
    "default": lambda v: True,
    "examples": lambda v: type(v) is list,
    "deprecated": lambda v: type(v) is bool,
    "readOnly": lambda v: type(v) is bool,
    "writeOnly": lambda v: type(v) is bool,
}
_ONE_SCHEMA = frozenset({"additionalProperties", "items"})
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions"})
_SCHEMA_LISTS = frozenset({"anyOf", "allOf"})


def _target(root: JSON, ref: JSON) -> JSON:
    """What a plain local reference names (None when it is not one, or names nothing)."""
    m = _REF.match(ref) if isinstance(ref, str) else None
    holder = root.get(m.group(1)) if m and isinstance(root, dict) else None
    found = holder.get(m.group(2)) if m and isinstance(holder, dict) else None
    return found if isinstance(found, (dict, bool)) else None


def _parts(key: str, value: JSON) -> list[JSON] | None:
    """The subschemas under ``key`` (None: not a plain keyword, or not well typed)."""
    if key in _ONE_SCHEMA:
        return [value]
    if key in _SCHEMA_MAPS:
        return list(value.values()) if isinstance(value, dict) else None
    if key in _SCHEMA_LISTS:
        return list(value) if type(value) is list and value else None
    check = _WELL_TYPED.get(key)
    return [] if check is not None and check(value) else None


def is_plain(schema: JSON, unresolved: bool = False) -> bool:
    """Whether ``schema`` is plain (module docstring): then it is valid against the draft-07
    and the 2020-12 metaschemas, and ``judge`` may answer for it. ``unresolved``: a local
    reference to a ``$defs`` or ``definitions`` entry that is not there is plain too (still
    valid against both; a validator that reaches it fails, and ``judge`` is unsure there)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict) or not isinstance(schema.get("$schema", ""), str):
        return False
    stack: list[tuple[JSON, int]] = [(schema, 0)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, bool):
            continue
        seen += 1
        if not isinstance(node, dict) or depth > MAX_DEPTH or seen > MAX_NODES:
            return False
        if "$ref" in node and (
            not node.keys() <= _BESIDE_A_REF
            or (
                _target(schema, node["$ref"]) is None
                and not (unresolved and isinstance(node["$ref"], str) and _REF.match(node["$ref"]))
            )
        ):
            return False
        for key, value in node.items():
            if key in ("$ref", "$schema") and (key == "$ref" or node is schema):
                continue
            parts = _parts(key, value)
            if parts is None:
                return False
            stack.extend((p, depth + 1) for p in parts)
    return True


def _kind(x: JSON) -> str | None:
    """The JSON type of an instance value as the validators name it (None: not JSON)."""
    return _KINDS.get(type(x))


_KINDS: dict[type, str] = {
    str: "string",
    dict: "object",
    list: "array",
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
}


def _all(results: object) -> int:
    """Every part must hold: one sure refusal decides, any doubt leaves it unsure."""
    out = VALID
    for r in results:  # type: ignore[attr-defined]
        if r == INVALID:
            return INVALID
        if r == UNSURE:
            out = UNSURE
    return out


def _type(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    names = (v,) if isinstance(v, str) else v
    kind = _kind(x)
    if kind is None:
        return UNSURE
    if kind in names or (kind == "integer" and "number" in names):  # type: ignore[operator]
        return VALID
    if (kind == "number" and "integer" in names and x.is_integer()) or (  # type: ignore[operator, union-attr]
        kind == "boolean" and ("integer" in names or "number" in names)  # type: ignore[operator]
    ):
        return UNSURE  # 2.0 as an integer, True as a number: validators differ
    return INVALID


def _scalar_member(x: JSON, members: list) -> int:
    try:
        found = x in members
    except TypeError:
        return UNSURE
    if not found:
        return INVALID  # jsonschema's equality is stricter than Python's
    if x is None or type(x) in (str, int, float, bool):
        same = any((type(m) is type(x) or (_number(m) and _number(x))) and m == x for m in members)
        return VALID if same else UNSURE
    return UNSURE  # a container: True and 1 inside it are equal to Python only


def _bound(test: Callable[[float, float], bool]) -> Callable[..., int]:
    def rule(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
        if type(x) is bool:
            return UNSURE  # a number to fastjsonschema, not to jsonschema
        if type(x) in (int, float):
            return VALID if test(x, v) else INVALID  # type: ignore[arg-type]
        return VALID

    return rule


def _length(of: type, test: Callable[[int, int], bool]) -> Callable[..., int]:
    def rule(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
        if type(x) is of:
            return VALID if test(len(x), v) else INVALID  # type: ignore[arg-type]
        return VALID

    return rule


def _required(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    if type(x) is dict:
        return VALID if all(n in x for n in v) else INVALID  # type: ignore[union-attr]
    return VALID


def _properties(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    if type(x) is not dict:
        return VALID
    return _all(_judge(sub, x[k], root, depth + 1) for k, sub in v.items() if k in x)  # type: ignore[union-attr]


def _additional(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    if type(x) is not dict:
        return VALID
    listed = schema.get("properties") or {}
    extras = [k for k in x if k not in listed]
    if v is False:
        return INVALID if extras else VALID
    return _all(_judge(v, x[k], root, depth + 1) for k in extras)


def _items(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    if type(x) is not list:
        return VALID
    return _all(_judge(v, item, root, depth + 1) for item in x)


def _all_of(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    return _all(_judge(sub, x, root, depth + 1) for sub in v)  # type: ignore[union-attr]


def _any_of(v: JSON, x: JSON, schema: dict, root: JSON, depth: int) -> int:
    out = INVALID
    for sub in v:  # type: ignore[union-attr]
        r = _judge(sub, x, root, depth + 1)
        if r == VALID:
            return VALID
        if r == UNSURE:
            out = UNSURE
    return out


_RULES: dict[str, Callable[..., int]] = {
    "type": _type,
    "enum": lambda v, x, schema, root, depth: _scalar_member(x, v),
    "const": lambda v, x, schema, root, depth: _scalar_member(x, [v]),
    "minimum": _bound(lambda x, b: x >= b),
    "maximum": _bound(lambda x, b: x <= b),
    "exclusiveMinimum": _bound(lambda x, b: x > b),
    "exclusiveMaximum": _bound(lambda x, b: x < b),
    "minLength": _length(str, lambda n, b: n >= b),
    "maxLength": _length(str, lambda n, b: n <= b),
    "minItems": _length(list, lambda n, b: n >= b),
    "maxItems": _length(list, lambda n, b: n <= b),
    "required": _required,
    "properties": _properties,
    "additionalProperties": _additional,
    "items": _items,
    "allOf": _all_of,
    "anyOf": _any_of,
}


def _judge(schema: JSON, x: JSON, root: JSON, depth: int) -> int:
    if schema is True:
        return VALID
    if schema is False:
        return INVALID
    if depth > MAX_DEPTH or not isinstance(schema, dict):
        return UNSURE
    if "$ref" in schema:  # nothing beside it validates (is_plain)
        return _judge(_target(root, schema["$ref"]), x, root, depth + 1)
    out = VALID
    for key, value in schema.items():
        rule = _RULES.get(key)
        if rule is None:
            continue
        r = rule(value, x, schema, root, depth)
        if r == INVALID:
            return INVALID
        if r == UNSURE:
            out = UNSURE
    return out


def judge(schema: JSON, instance: JSON) -> int:
    """``VALID``, ``INVALID`` or ``UNSURE`` (module docstring) for a plain ``schema`` (``is_plain``)."""
    return _judge(schema, instance, schema, 0)


__all__ = ["INVALID", "UNSURE", "VALID", "is_plain", "judge"]
