"""The draft-07 metaschema check of a tool's inputSchema (VS Code core and Copilot Chat).

VS Code omits a tool whose schema is invalid, Copilot Chat throws for the whole list
(docs/clients/vscode.md). The check is python-jsonschema's draft-07 metaschema, answered first by
a plain walk of its keyword rules and a compiled check, so the common valid schema costs
microseconds and only an invalid one is worded by jsonschema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import best_match

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import consequence, note, param, refuse
from mcp_matrix.behaviours.rewrite import Outcome, fingerprint, memo_cache, mentions, schema_rewrite
from mcp_matrix.core.jsontypes import JSON

_DEPTH_GUARD = 200
_FAST_META: dict = {}


def _fast_metaschema_valid(schema: JSON, formats: bool) -> bool:
    """The draft-07 metaschema compiled once with fastjsonschema (about 50x faster than
    walking it with jsonschema). Only "valid" is trusted: an invalid schema goes to the
    jsonschema path, which words the error, so both paths agree on every reported failure."""
    if formats not in _FAST_META:
        import fastjsonschema

        meta = dict(Draft7Validator.META_SCHEMA)
        meta.pop("$id", None)
        _FAST_META[formats] = fastjsonschema.compile(
            meta, use_formats=formats, use_default=False
        )  # never write defaults into the schema
    try:
        _FAST_META[formats](schema)
        return True
    except Exception:  # invalid, or a schema the compiled check cannot handle: ask jsonschema
        return False


# The draft-07 metaschema, keyword by keyword, for ``_surely_valid``.
_SIMPLE_TYPES = frozenset(("array", "boolean", "integer", "null", "number", "object", "string"))
_META_STRINGS = frozenset(
    (
        "$id",
        "$schema",
        "$ref",
        "$comment",
        "title",
        "description",
        "pattern",
        "format",
        "contentMediaType",
        "contentEncoding",
    )
)
_META_NUMBERS = frozenset(("maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"))
_META_COUNTS = frozenset(
    ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")
)
_META_SCHEMAS = frozenset(
    (
        "additionalItems",
        "contains",
        "additionalProperties",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
    )
)
_META_MAPS = frozenset(("definitions", "properties", "patternProperties"))
_META_ARRAYS = frozenset(("allOf", "anyOf", "oneOf"))
_META_BOOLEANS = frozenset(("readOnly", "uniqueItems"))
_META_LISTS = frozenset(("enum", "examples"))
# Where the metaschema says "format", and which: checked only when that format is asked for.
_META_FORMATS = {
    "$id": "uri-reference",
    "$schema": "uri",
    "$ref": "uri-reference",
    "pattern": "regex",
    "patternProperties": "regex",  # its property names
}
_SURE_BRACKETS = 100  # nesting small enough that no validator can run out of stack


def _number(x: JSON) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _string_set(x: JSON) -> bool:
    """A draft-07 ``stringArray``: a list of distinct strings."""
    return isinstance(x, list) and all(isinstance(v, str) for v in x) and len(set(x)) == len(x)


def _surely_valid(schema: JSON, formats: Any) -> bool:
    """True only if ``schema`` is valid against the draft-07 metaschema; False: not sure.

    A plain walk of the metaschema's keyword rules (a few microseconds, against tens for
    the compiled check): it answers True for the ordinary schemas every server sends and
    leaves anything unusual (floats as counts, format-checked keywords when formats are
    asked for, deep nesting) to ``_fast_metaschema_valid`` and jsonschema, so it never
    changes a verdict (a schema is valid when either of those says so; jsonschema checks
    only the ``formats`` asked for).
    """
    text = fingerprint(schema)
    if text.startswith("<unserialisable") or text.count("{") + text.count("[") > _SURE_BRACKETS:
        return False
    checked = [key for key, fmt in _META_FORMATS.items() if fmt in formats]
    if checked and mentions(schema, *checked):
        return False
    sure = _SURE.get(text)
    if sure is None:  # the rules below do not depend on formats: once per schema
        sure = _SURE[text] = _keywords_valid(schema)
    return sure


_SURE = memo_cache()


# complexity: one branch per metaschema keyword family, in one loop over an explicit stack (no recursion)
def _keywords_valid(schema: JSON) -> bool:
    """``_surely_valid`` without the format rules."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for key, value in node.items():
            if key in _META_STRINGS:
                if not isinstance(value, str):
                    return False
            elif key in _META_MAPS:
                if not isinstance(value, dict):
                    return False
                stack.extend(value.values())
            elif key in _META_SCHEMAS:
                stack.append(value)
            elif key == "type":
                if isinstance(value, str):
                    if value not in _SIMPLE_TYPES:
                        return False
                elif not (
                    isinstance(value, list)
                    and value
                    and all(isinstance(t, str) and t in _SIMPLE_TYPES for t in value)
                    and len(set(value)) == len(value)
                ):
                    return False
            elif key == "required":
                if not _string_set(value):
                    return False
            elif key == "items":
                if isinstance(value, list):
                    if not value:
                        return False
                    stack.extend(value)
                else:
                    stack.append(value)
            elif key in _META_ARRAYS:
                if not (isinstance(value, list) and value):
                    return False
                stack.extend(value)
            elif key in _META_NUMBERS:
                if not _number(value):
                    return False
            elif key in _META_COUNTS:
                if not (type(value) is int and value >= 0):
                    return False
            elif key in _META_LISTS:
                if not isinstance(value, list):
                    return False
            elif key in _META_BOOLEANS:
                if not isinstance(value, bool):
                    return False
            elif key == "multipleOf":
                if not (_number(value) and value > 0):
                    return False
            elif key == "dependencies":
                if not isinstance(value, dict):
                    return False
                for dep in value.values():
                    if isinstance(dep, list):
                        if not _string_set(dep):
                            return False
                    else:
                        stack.append(dep)
            elif not isinstance(key, str):
                return False
            # any other keyword (default, const, $defs, x-...): anything goes
    return True


def _shallow(schema: JSON) -> bool:
    """True when ``schema`` certainly nests no deeper than ``_DEPTH_GUARD`` (no walk needed).

    Every level of nesting opens a ``{`` or ``[`` in the fingerprint, so a schema with at
    most ``_DEPTH_GUARD`` of them cannot nest deeper.
    """
    text = fingerprint(schema)
    return (
        not text.startswith("<unserialisable") and text.count("{") + text.count("[") <= _DEPTH_GUARD
    )


def _checker(formats: list) -> FormatChecker | None:
    known = [f for f in formats if f in FormatChecker.checkers]
    return FormatChecker(formats=known) if known else None


@schema_rewrite(
    "metaschema-validate",
    params={
        "on_invalid": param(
            ["drop-tool", "session-broken"],
            "drop-tool: VS Code core omits the tool; "
            "session-broken: Copilot Chat throws for the whole list.",
            "drop-tool",
        ),
        "formats": {
            "type": "array",
            "items": {"enum": ["uri", "regex"]},
            "default": [],
            "description": "Formats checked in the metaschema (Copilot's Ajv: uri, regex).",
        },
    },
)
def metaschema_validate(
    schema: JSON, on_invalid: str = "drop-tool", formats: Sequence[str] = ()
) -> Outcome:
    """Validate inputSchema against the draft-07 metaschema (VS Code core docs/clients/vscode.md#vs-code, Copilot docs/clients/vscode.md#copilot-chat).

    VS Code omits an invalid tool and notifies ("tools with invalid parameters which will
    be omitted"); Copilot's normalizer throws "tool parameters do not match JSON schema".
    mcp-matrix uses python-jsonschema's draft-07 metaschema (not VS Code's JSON language
    service or Ajv); schemas nesting past 200 levels are not checked (a note says so).
    """

    def skipped(nesting: int) -> Outcome:
        return Outcome(
            findings=(
                note(
                    "not-checked",
                    f"schema nests {nesting} levels; mcp-matrix "
                    f"checks the draft-07 metaschema only up to {_DEPTH_GUARD} levels",
                ),
            )
        )

    if not _shallow(schema):
        nesting = W.depth(schema)
        if nesting > _DEPTH_GUARD:
            return skipped(nesting)
    try:
        if _surely_valid(schema, formats) or _fast_metaschema_valid(schema, bool(formats)):
            return Outcome()  # the common case, compiled; the slow path words the error
        validator = Draft7Validator(
            Draft7Validator.META_SCHEMA, format_checker=_checker(list(formats))
        )
        error = best_match(validator.iter_errors(schema))
    except RecursionError:
        return skipped(W.depth(schema))
    if error is None:
        return Outcome()
    ptr = "".join("/" + W.escape(t) for t in error.absolute_path)
    return refuse(
        on_invalid,
        "invalid-json-schema",
        f"inputSchema is not a valid draft-07 schema: "
        f"{error.message[:200]} (at {ptr or '/'}); {consequence(on_invalid)}",
        ptr,
    )
