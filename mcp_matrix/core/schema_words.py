"""A JSON Schema error in words a user can act on: the key path it is about and a message
(``expected an integer, got string "64"``, ``unknown key 'lmit'; did you mean 'limit'?``).

``core.yamlfile`` places each at its file and line; this module knows only jsonschema's errors
(one of the places a foreign exception becomes ours, ARCHITECTURE.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema.exceptions import ValidationError

from mcp_matrix.core.errors import did_you_mean

KeyPath = tuple  # of str (mapping keys) and int (list indexes)
Described = list[tuple[KeyPath, str]]

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def _show(value: object) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _about(schema: Mapping[str, Any]) -> str:
    """`` (its description)`` of a schema that has one, else nothing."""
    about = schema.get("description", "") if isinstance(schema, Mapping) else ""
    return f" ({about.rstrip('.')})" if about else ""


class _Error:
    """One jsonschema error, read once: where, the keyword's value, the value checked, the schema."""

    def __init__(self, error: ValidationError, noun: str, owner: str) -> None:
        self.path: KeyPath = tuple(error.absolute_path)
        self.expected: Any = error.validator_value  # JSON: the keyword's value in the schema
        self.value: Any = error.instance  # JSON: the value checked
        self.schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
        self.props: Mapping[str, Any] = self.schema.get("properties", {})
        self.noun, self.owner, self.message = noun, owner, error.message


def _required(e: _Error) -> Described:
    if not isinstance(e.value, dict):
        return []
    return [
        (e.path + (name,), f"missing required {e.noun}" + _about(e.props.get(name) or {}))
        for name in e.expected
        if name not in e.value
    ]


def _additional(e: _Error) -> Described:
    if not isinstance(e.value, dict):
        return [(e.path, e.message)]
    if e.props:
        listed = ", ".join(e.props)
        valid = f"; {e.owner} takes: {listed}" if e.owner else f"; valid {e.noun}s: {listed}"
    else:
        valid = f"; {e.owner or 'this'} takes no {e.noun}s"
    return [
        (e.path + (name,), f"unknown {e.noun} {name!r}{did_you_mean(str(name), e.props)}{valid}")
        for name in e.value
        if name not in e.props
    ]


def _type(e: _Error) -> Described:
    expected = e.expected
    types = [expected] if isinstance(expected, str) else [t for t in expected if t != "null"]
    words = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
    message = f"expected {words}, got {_json_type(e.value)} {_show(e.value)}"
    if "string" in types and isinstance(e.value, (int, float)):
        message += f' (quote it in YAML: "{e.value}")'
    return [(e.path, message)]


def _enum(e: _Error) -> Described:
    hint = did_you_mean(str(e.value), [str(x) for x in e.expected])
    listed = ", ".join(map(str, e.expected))
    return [(e.path, f"expected one of {listed}, got {_show(e.value)}{hint}")]


def _pattern(e: _Error) -> Described:
    return [(e.path, f"{_show(e.value)} does not match {e.expected}" + _about(e.schema))]


def _min_items(e: _Error) -> Described:
    n = e.expected
    return [(e.path, f"expected at least {n} item{'s' if n != 1 else ''}, got {len(e.value)}")]


def _unique_items(e: _Error) -> Described:
    seen, twice = [], None
    for item in e.value:
        if item in seen:
            twice = item
            break
        seen.append(item)
    return [(e.path, f"lists {_show(twice)} more than once")]


_BY_KEYWORD: dict[str, Callable[[_Error], Described]] = {
    "required": _required,
    "additionalProperties": _additional,
    "type": _type,
    "enum": _enum,
    "pattern": _pattern,
    "minItems": _min_items,
    "minLength": lambda e: [(e.path, "must not be empty")],
    "uniqueItems": _unique_items,
}


def describe_error(error: ValidationError, noun: str = "key", owner: str = "") -> Described:
    """Turn one jsonschema error into ``(key path, message)`` pairs a user can act on.

    ``noun`` is what the keys are called here ("key" in a file, "param" in a behaviour's
    ``with``); ``owner`` names the behaviour whose params they are.
    """
    e = _Error(error, noun, owner)
    words = _BY_KEYWORD.get(str(error.validator))
    return words(e) if words else [(e.path, e.message)]
