"""The published JSON Schemas (draft 2020-12) of every document mcp-matrix reads or writes.

They ship inside the package (``mcp_matrix/core/schemas/*.schema.json``) so other tools can validate
our output, and our readers validate input against the same files (docs/schemas.md lists
them with the format and versions each covers).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mcp_matrix.core.jsontypes import JSON


@dataclass(frozen=True)
class Published:
    """One published schema: the document it describes and the versions it covers."""

    name: str
    format: str  # the document's ``format`` value, or what the file is when it has none
    versions: tuple[int, ...]
    written_by: str

    @property
    def file(self) -> str:
        return f"{self.name}.schema.json"


SCHEMAS: tuple[Published, ...] = (
    Published(
        "results",
        "mcp-matrix.results",
        (1, 2, 3),
        "run --results, merge (JSON lines: one event or table entry a line)",
    ),
    Published("snapshot", "mcp-matrix.snapshot", (1, 2), "snapshot -o, snapshot (stdout)"),
    Published("discovery", "mcp-matrix.discovery", (1, 2, 3, 4), "discover --json"),
    Published(
        "report", "mcp-matrix.report", (1, 2, 3), "report --format json, run --report json:FILE"
    ),
    Published("diff", "mcp-matrix.diff", (1,), "diff --json"),
    Published("replay", "mcp-matrix.replay", (1,), "replay --json"),
    Published("fix", "mcp-matrix.fix", (1,), "fix --format json"),
    Published(
        "replay-events",
        "mcp-matrix.replay",
        (1,),
        "replay --results (JSON lines: one event a line)",
    ),
    Published("cases", "cases file (YAML)", (1,), "read by run --cases"),
    Published(
        "policy",
        "policy file (YAML or [tool.mcp-matrix] in pyproject.toml)",
        (1,),
        "read by check --policy",
    ),
)


@cache
def load_schema(name: str) -> Any:
    """The schema ``name`` (one of SCHEMAS) as parsed JSON; callers must not change it."""
    text = (
        resources.files("mcp_matrix.core.schemas")
        .joinpath(f"{name}.schema.json")
        .read_text("utf-8")
    )
    return json.loads(text)


# An MCP Tool's keys and its annotations' (https://modelcontextprotocol.io/specification/2025-11-25/
# schema#tool, #toolannotations): the snapshot stores each listed tool as the server sent it, and
# version 3 numbers its inputSchema.
MCP_TOOL_KEYS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "listChanged",
)
# JSON Schema's keywords and type names (https://json-schema.org/draft/2020-12/json-schema-core,
# json-schema-validation; draft-07's where they differ): every tool's schema is written in it, so
# a masked "type" or "string" would change what a report says of the tool.
JSON_SCHEMA_WORDS = (
    *("$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary"),
    *("$comment", "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum"),
    *("minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems"),
    *("uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required"),
    *("dependentRequired", "dependencies", "format", "contentEncoding", "contentMediaType"),
    *("contentSchema", "title", "description", "default", "deprecated", "readOnly", "writeOnly"),
    *("examples", "object", "array", "string", "number", "integer", "boolean", "null"),
)


@cache
def format_words() -> frozenset[str]:
    """Every word the published formats write themselves: their keys (each schema's property
    names, an MCP tool's, JSON Schema's keywords, whose schema-holding ones version 3's nodes
    number) and their fixed values (``enum`` and ``const`` strings, JSON Schema's type names).
    A secret equal to one
    (``--env LOG_FORMAT=text``, ``--env MODE=visible``) is no reason to mask it where a string
    is that word whole (mcp_matrix.core.text.redact_json): masked, the document would not read."""
    from mcp_matrix.core.schema_nodes import SCHEMA_KEYS

    words: set[str] = {*SCHEMA_KEYS, *MCP_TOOL_KEYS, *JSON_SCHEMA_WORDS}
    todo: list[Any] = [load_schema(p.name) for p in SCHEMAS]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            words.update(node.get("properties") or {})
            fixed = (
                [*node.get("enum", ()), node.get("const")]
                if "enum" in node or "const" in node
                else []
            )
            words.update(v for v in fixed if isinstance(v, str))
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return frozenset(words)


@dataclass(frozen=True)
class Problem:
    """The first way a document breaks a schema: ``key`` is its dotted path ('' for the whole)."""

    key: str
    message: str


@cache
def checker(
    name: str, part: str | None = None, drop: tuple[str, ...] = ()
) -> Callable[[JSON], Problem | None]:
    """A check of documents against schema ``name`` (or its ``$defs`` entry ``part``), without
    the top-level keywords in ``drop``: the first Problem, or None.

    fastjsonschema decides (compiled once: fast enough for 100,000 lines); jsonschema, only on
    a failure, says which key and why."""
    import fastjsonschema
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    whole = load_schema(name)
    if part is None:
        schema = {k: v for k, v in whole.items() if k not in drop}
    else:
        schema = {"$defs": whole["$defs"], "$ref": f"#/$defs/{part}"}
    fast = fastjsonschema.compile(
        {k: v for k, v in schema.items() if k != "$schema"}, use_default=False
    )
    slow = Draft202012Validator(schema)

    def check(document: JSON) -> Problem | None:
        try:
            fast(document)
        except fastjsonschema.JsonSchemaException:  # jsonschema explains it
            pass
        else:
            return None
        error = best_match(slow.iter_errors(document))
        if error is None:  # both validators agree on every document we write
            return Problem("", f"does not follow {name}.schema.json")
        path = ".".join(str(k) for k in error.absolute_path)
        if error.validator == "required":
            missing = next((k for k in error.validator_value if k not in error.instance), "")
            key = f"{path}.{missing}" if path else missing
            return Problem(key, f"missing key {key!r}")
        return Problem(
            path, f"key {path!r}: {error.message[:300]}" if path else error.message[:300]
        )

    return check


__all__ = ["SCHEMAS", "Problem", "Published", "checker", "format_words", "load_schema"]
