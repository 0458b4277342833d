"""Legible validation: jsonschema errors and payload parsing, in words a model can act on.

Pure functions, no I/O. Every problem names the field (``recipients``,
``details.attachments[0].size_bytes``) and says what was expected and what arrived,
e.g. ``recipients: expected an array of strings, got a string '["a","b"]' (JSON text
inside a string: send the array itself, not its serialisation)``. Nothing is ever
coerced: a stringified array or boolean is a problem, not a value to repair.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

_ARTICLES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
_PLURALS = {
    "string": "strings",
    "integer": "integers",
    "number": "numbers",
    "boolean": "booleans",
    "object": "objects",
    "array": "arrays",
}
_SHORT = 60


def field_path(parts: Iterable[Any]) -> str:
    """``["details", "attachments", 0, "name"]`` -> ``details.attachments[0].name``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def describe_value(value: Any) -> str:
    """A short description of a JSON value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"the number {json.dumps(value)}"
    if isinstance(value, str):
        if value == "":
            return "an empty string"
        shown = value if len(value) <= _SHORT else value[: _SHORT - 3] + "..."
        return f"a string '{shown}'"
    if isinstance(value, list):
        if not value:
            return "an empty array"
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return f"a value of type {type(value).__name__}"


def _range(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" of at least {low}"
    if high is not None:
        return f" of at most {high}"
    return ""


def describe_expected(schema: dict[str, Any]) -> str:
    """What a (sub)schema accepts, in words: ``an array of strings``, ``an integer from 1 to 5``."""
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return "a non-empty string" if schema.get("minLength", 0) >= 1 else "a string"
    if kind in ("integer", "number"):
        return _ARTICLES[kind] + _range(schema)
    if kind == "array":
        item_type = schema.get("items", {}).get("type")
        if item_type in _PLURALS:
            return f"an array of {_PLURALS[item_type]}"
        return "an array"
    if isinstance(kind, str) and kind in _ARTICLES:
        return _ARTICLES[kind]
    return "a value matching the schema"


def _serialised_hint(value: Any, schema: dict[str, Any]) -> str:
    """Explain a string that holds the JSON of the expected type (a stale serialiser's work)."""
    if not isinstance(value, str):
        return ""
    try:
        decoded = json.loads(value)
    except ValueError:
        return ""
    expected = schema.get("type")
    matches = {
        "array": isinstance(decoded, list),
        "object": isinstance(decoded, dict),
        "boolean": isinstance(decoded, bool),
        "integer": isinstance(decoded, int) and not isinstance(decoded, bool),
        "number": isinstance(decoded, (int, float)) and not isinstance(decoded, bool),
    }
    if not matches.get(expected, False):
        return ""
    if expected in ("array", "object"):
        return f" (JSON text inside a string: send the {expected} itself, not its serialisation)"
    return f" (a quoted {expected}: send {json.dumps(decoded)} without quotes)"


def schema_problems(schema: dict[str, Any], instance: Any, *, where: str) -> list[str]:
    """Every way ``instance`` breaks ``schema``, one legible sentence each, in field order.

    ``where`` names the schema in messages about unknown fields, e.g. ``the
    memory_write schema (version 1)``.
    """
    import jsonschema  # here, at the first call: a session that only lists tools never needs it

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(instance),
        key=lambda e: ([str(p) for p in e.absolute_path], str(e.validator)),
    )
    problems: list[str] = []
    for err in errors:
        path = list(err.absolute_path)
        here = field_path(path)
        sub = err.schema if isinstance(err.schema, dict) else {}
        if err.validator == "required":
            properties = sub.get("properties", {})
            for name in sub.get("required", []):
                if isinstance(err.instance, dict) and name not in err.instance:
                    expected = describe_expected(properties.get(name, {}))
                    problems.append(
                        f"{field_path([*path, name])}: required field is missing "
                        f"(expected {expected})"
                    )
        elif err.validator == "additionalProperties":
            allowed = list(sub.get("properties", {}))
            extras = [k for k in err.instance if k not in allowed]
            scope = f"the {here} object in {where}" if here else where
            for name in extras:
                problems.append(
                    f"{field_path([*path, name])}: unknown field, not in {scope}, which allows "
                    f"only {', '.join(allowed)}"
                )
        elif err.validator == "type":
            problems.append(
                f"{here or 'the record'}: expected {describe_expected(sub)}, "
                f"got {describe_value(err.instance)}{_serialised_hint(err.instance, sub)}"
            )
        elif err.validator in (
            "enum",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
        ):
            problems.append(
                f"{here}: expected {describe_expected(sub)}, got {describe_value(err.instance)}"
            )
        elif err.validator == "minItems":
            count = sub["minItems"]
            problems.append(
                f"{here}: expected at least {count} item{'s' if count != 1 else ''}, "
                f"got {describe_value(err.instance)}"
            )
        else:
            problems.append(f"{here}: {err.message}" if here else err.message)
    # jsonschema reports each missing required field as its own error, and this loop
    # names every missing one per error: drop repeats, then keep field order.
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: p.split(":", 1)[0])


class PayloadError(ValueError):
    """A twin's payload string is not one JSON object; the message says why, legibly."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise PayloadError(
                f"payload repeats the field {json.dumps(key)}; JSON parsers disagree about "
                "which copy wins, so send each field once"
            )
        seen[key] = value
    return seen


def _no_constants(name: str) -> Any:
    raise PayloadError(f"payload contains {name}, which is not valid JSON (numbers are finite)")


def _excerpt(text: str, pos: int) -> str:
    start = max(0, pos - 20)
    end = min(len(text), pos + 20)
    return (
        ("..." if start else "")
        + text[start:pos]
        + " >>> "
        + text[pos:end]
        + ("..." if end < len(text) else "")
    )


def parse_payload(payload: str) -> dict[str, Any]:
    """Parse a twin's payload into the record, or raise :class:`PayloadError`.

    The parsed object is returned as is: no field is dropped, renamed or coerced.
    """
    try:
        value = json.loads(payload, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        if not payload.strip():
            raise PayloadError("payload is empty; it must be a JSON object") from exc
        raise PayloadError(
            f"payload is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} "
            f"(near: {_excerpt(payload, exc.pos)})"
        ) from exc
    except RecursionError as exc:
        raise PayloadError("payload is nested too deeply to parse") from exc
    if not isinstance(value, dict):
        kind = "a JSON " + {
            list: "array",
            str: "string",
            bool: "boolean",
            int: "number",
            float: "number",
            type(None): "null",
        }.get(type(value), type(value).__name__)
        hint = ""
        if isinstance(value, str):
            hint = " (the record was serialised twice: serialise the object once)"
        raise PayloadError(
            f"payload must be a JSON object holding the whole record, got {kind}{hint}"
        )
    return value
