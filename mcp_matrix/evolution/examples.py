"""Representative calls for the diff: a small valid instance of a schema, and edits of it.

``mcp_matrix.run.cases.example_arguments`` gives the minimal required object; this adds what a
minimal instance still lacks to be valid (``minProperties`` filled from the optional
properties), and places or removes one parameter at a nested path.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mcp_matrix.behaviours.validation import Violation
from mcp_matrix.behaviours.validation import validation_errors as _errors
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.schema import is_object, properties
from mcp_matrix.run.cases import example_arguments

ARRAY = "[]"  # a path segment meaning "the items of this array"
DIALECT = "2020-12"  # what an MCP server validates against unless its schema says otherwise


def example(schema: JSON) -> JSON:
    """A small instance of ``schema``, valid when that can be managed cheaply."""
    value = example_arguments(schema)
    if value is None and not isinstance(schema, Mapping):
        return None
    return _fill(schema, value, depth=0)


def sample(schema: JSON) -> JSON:
    """A value for one parameter a call sends on purpose: like ``example``, but never an empty array."""
    value = example(schema)
    if value == [] and isinstance(schema, Mapping) and schema.get("maxItems") != 0:
        item = example(schema.get("items", {"type": "string"}))
        if item is not None:
            value = [item]
    return value


def _fill(schema: JSON, value: JSON, depth: int) -> JSON:
    if depth > 8 or not isinstance(schema, Mapping):
        return value
    if is_object(schema) and isinstance(value, dict):
        props = properties(schema)
        for name, sub in props.items():
            if name in value:
                value[name] = _fill(sub, value[name], depth + 1)
        want = schema.get("minProperties")
        if isinstance(want, int) and not isinstance(want, bool):
            for name, sub in props.items():
                if len(value) >= want:
                    break
                if name not in value:
                    got = example_arguments(sub)
                    if got is not None:
                        value[name] = _fill(sub, got, depth + 1)
    return value


def validation_errors(schema: JSON, value: JSON) -> list[Violation]:
    """What a server validating against ``schema`` says of ``value`` ([] when valid)."""
    return _errors(schema, value, DIALECT)


def sub_schema(schema: JSON, path: tuple[str, ...]) -> JSON:
    """The schema of the parameter at ``path`` (property names, ``[]`` for array items)."""
    node = schema
    for seg in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get("items") if seg == ARRAY else properties(node).get(seg)
    return node


def with_value(schema: JSON, path: tuple[str, ...], value: JSON) -> dict | None:
    """A valid-as-possible call of ``schema`` carrying ``value`` at ``path``; None through arrays."""
    if ARRAY in path or not path:
        return None
    args = example(schema)
    args = copy.deepcopy(args) if isinstance(args, dict) else {}
    node, node_schema = args, schema
    for seg in path[:-1]:
        node_schema = properties(node_schema).get(seg)
        if not isinstance(node.get(seg), dict):
            inner = example(node_schema)
            node[seg] = inner if isinstance(inner, dict) else {}
        node = node[seg]
    node[path[-1]] = copy.deepcopy(value)
    return args


def without(schema: JSON, path: tuple[str, ...]) -> dict | None:
    """A valid-as-possible call of ``schema`` that leaves out the parameter at ``path``."""
    if ARRAY in path or not path:
        return None
    args = example(schema)
    args = copy.deepcopy(args) if isinstance(args, dict) else {}
    node: Any = args
    for seg in path[:-1]:
        node = node.get(seg) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return args
    node.pop(path[-1], None)
    return args


def value_of_type(schema: JSON, type_name: str) -> object:
    """An example value of one JSON type, honouring the schema's other keywords where it can."""
    narrowed = (
        {k: v for k, v in schema.items() if k != "type"} if isinstance(schema, Mapping) else {}
    )
    narrowed["type"] = type_name
    got = example(narrowed)
    if type_name == "number" and isinstance(got, (int, float)) and float(got).is_integer():
        top = narrowed.get("maximum")
        step = 0.5 if not isinstance(top, (int, float)) or got + 0.5 <= top else (top - got) / 2
        return got + step if step else 1.5  # a number that is not an integer
    if got is not None or type_name == "null":
        return got
    return {
        "string": "x",
        "integer": 1,
        "number": 1.5,
        "boolean": False,
        "array": [],
        "object": {},
    }.get(type_name)


__all__ = [
    "ARRAY",
    "DIALECT",
    "example",
    "sample",
    "sub_schema",
    "validation_errors",
    "value_of_type",
    "with_value",
    "without",
]
