"""Keyword-level schema rewrites: keep/strip lists, nullable, additionalProperties, properties.

The generic forms of what Copilot, Gemini CLI, Vercel, Roo, Zed, Codex, the Agents SDK and Goose
do to keywords (each client's page in docs/clients/).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import (
    KEYWORDS_PARAM,
    WHERE_PARAM,
    incomplete,
    note,
    param,
    typenames,
)
from mcp_matrix.behaviours.rewrite import Outcome, contains, fingerprint, mentions, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding


def _keyword_filter(
    schema: JSON, keep: set | None, strip: set | None, where: str, name: str
) -> Outcome:
    def fn(v: JSON, node: W.Node) -> JSON:
        if not isinstance(v, dict):
            return v
        if keep is not None and not keep.issuperset(v):
            return {k: x for k, x in v.items() if k in keep}
        if strip is not None and not strip.isdisjoint(v):
            return {k: x for k, x in v.items() if k not in strip}
        return v

    result = W.rewrite(schema, fn, W.WALKS[where])
    return Outcome(schema=result.schema, findings=incomplete(result, name))


@schema_rewrite(
    "keep-keywords",
    params={
        "keywords": {
            **KEYWORDS_PARAM,
            "description": "The only keywords the client keeps on a schema node.",
        },
        "where": WHERE_PARAM,
    },
    required=("keywords",),
)
def keep_keywords(schema: JSON, keywords: list, where: str = "all") -> Outcome:
    """Keep only the listed keywords on each schema node (a client's whitelist, e.g. docs/clients/openai.md#codex, docs/clients/google.md#litellm)."""
    return _keyword_filter(schema, set(keywords), None, where, "keep-keywords")


@schema_rewrite(
    "strip-keywords",
    params={
        "keywords": {
            **KEYWORDS_PARAM,
            "description": "Keywords the client deletes from each schema node.",
        },
        "where": WHERE_PARAM,
    },
    required=("keywords",),
    skip=lambda schema, keywords, where="all": not mentions(schema, *keywords),
)
def strip_keywords(schema: JSON, keywords: list, where: str = "all") -> Outcome:
    """Delete the listed keywords from schema nodes (Copilot gpt-4* docs/clients/vscode.md#copilot-chat rule 4, Zed root docs/clients/zed.md#zed)."""
    return _keyword_filter(schema, None, set(keywords), where, "strip-keywords")


def _has_optional_property(node: dict) -> bool:
    props = node.get("properties")
    listed = node.get("required")
    required = listed if isinstance(listed, list) else []
    return isinstance(props, dict) and any(k not in required for k in props)


@schema_rewrite(
    "open-objects-with-optional-properties",
    params={"where": WHERE_PARAM},
    skip=lambda schema, where="all": not contains(schema, '"additionalProperties":false'),
)
def open_objects_with_optional_properties(schema: JSON, where: str = "all") -> Outcome:
    """``additionalProperties: false`` is deleted from each object with a property not in its
    ``required``, and kept where every property is required (Qwen Code 0.24.4,
    relaxSchemaForFunctionCalling in chunks/chunk-CF5KXZZX.js: a closed object with optional
    properties is relaxed for function calling; observed in clients/calibrations/qwen-code/0.24.4.json)."""

    def fn(v: JSON, node: W.Node) -> JSON:
        if (
            isinstance(v, dict)
            and v.get("additionalProperties") is False
            and _has_optional_property(v)
        ):
            return {k: x for k, x in v.items() if k != "additionalProperties"}
        return v

    result = W.rewrite(schema, fn, W.WALKS[where])
    return Outcome(
        schema=result.schema, findings=incomplete(result, "open-objects-with-optional-properties")
    )


@schema_rewrite(
    "nullable-type-arrays",
    params={
        "walk": param(
            ["every", "all", "copilot"],
            "every: every key of every object, enum and "
            "default values included (Gemini CLI docs/clients/google.md#gemini-cli); all/copilot: subschemas only.",
            "every",
        ),
        "longer": param(
            ["keep", "drop-null"],
            "Type arrays of 3+ names: left alone (Gemini CLI) "
            "or 'null' removed (Copilot Gemini family).",
            "keep",
        ),
    },
    report_losses=False,
    skip=lambda schema, walk="every", longer="keep": not contains(schema, '"type":['),
)
def nullable_type_arrays(schema: JSON, walk: str = "every", longer: str = "keep") -> Outcome:
    """``type: [T, "null"]`` becomes ``T`` + ``nullable: true`` (Gemini CLI docs/clients/google.md#gemini-cli, Copilot docs/clients/vscode.md#copilot-chat)."""
    rewritten: list[W.Node] = []
    dropped: list[W.Node] = []

    def fn(v: JSON, node: W.Node) -> JSON:
        if not isinstance(v, dict) or not isinstance(v.get("type"), list):
            return v
        types = v["type"]
        if len(types) == 2 and "null" in types:
            other = types[1 - types.index("null")]
            if isinstance(other, str):
                rewritten.append(node)
                return {**v, "type": other, "nullable": True}
        if longer == "drop-null" and len(types) > 2 and "null" in types:
            dropped.append(node)
            return {**v, "type": [t for t in types if t != "null"]}
        return v

    result = W.rewrite(schema, fn, W.WALKS[walk])
    findings = [
        note(
            "nullable-rewritten",
            f'type [T, "null"] at {n.pointer or "/"} becomes T '
            "with nullable: true (the OpenAPI form; null stays allowed)",
            n.pointer + "/type",
        )
        for n in rewritten[:20]
    ]
    findings += [
        note(
            "type-changed",
            f"'null' removed from the type list at {n.pointer or '/'}: the "
            "model is no longer told null is allowed",
            n.pointer + "/type",
            True,
        )
        for n in dropped[:20]
    ]
    return Outcome(
        schema=result.schema, findings=tuple(findings) + incomplete(result, "nullable-type-arrays")
    )


def _no_string_over(schema: JSON, max_length: int) -> bool:
    """No string anywhere in ``schema`` is longer than ``max_length`` (exact when True).

    A string's JSON form is at least as long as the string; without escaped quotes the
    fingerprint splits on ``"`` into exactly its strings and the text between them.
    """
    text = fingerprint(schema)
    if text.startswith("<unserialisable"):
        return False
    if len(text) <= max_length + 2:
        return True
    if '\\"' in text:
        return False
    return max(map(len, text.split('"'))) <= max_length


_OBJECT_PROPERTIES = W.Walk(maps=("properties",))


def _object_ish(v: dict) -> bool:
    return "object" in typenames(v.get("type")) or "properties" in v


@schema_rewrite(
    "force-additional-properties-false",
    params={
        "where": param(
            ["root", "all-objects"], "The root only (Vercel, Zed) or every object (Roo).", "root"
        ),
        "when": param(
            ["always", "type-object", "object-ish"],
            "always (Vercel root), type is "
            "'object' (Zed), or object-ish: type includes object or has properties (Roo).",
            "always",
        ),
        "mode": param(
            ["override", "setdefault"],
            "override: true/schema values become false "
            "(Vercel, Roo); setdefault: only when absent (Zed).",
            "override",
        ),
    },
)
def force_additional_properties_false(
    schema: JSON, where: str = "root", when: str = "always", mode: str = "override"
) -> Outcome:
    """Set ``additionalProperties: false`` (Vercel root docs/clients/vercel.md#vercel-ai-sdk, Roo every object docs/clients/roo-code.md#roo-code, Zed root docs/clients/zed.md#zed)."""
    added: list[W.Node] = []

    def fn(v: JSON, node: W.Node) -> JSON:
        if not isinstance(v, dict):
            return v
        if when == "type-object" and v.get("type") != "object":
            return v
        if when == "object-ish" and not _object_ish(v):
            return v
        if v.get("additionalProperties") is False or (
            mode == "setdefault" and "additionalProperties" in v
        ):
            return v
        if "additionalProperties" not in v:
            added.append(node)
        return {**v, "additionalProperties": False}

    result = W.rewrite(schema, fn, W.ROOT if where == "root" else W.ALL)
    findings: tuple[Finding, ...] = ()
    if added:
        findings = (
            note(
                "additional-properties-forced",
                f"additionalProperties: false added at "
                f"{', '.join(n.pointer or '/' for n in added[:5])}"
                f"{' ...' if len(added) > 5 else ''}: the model is "
                "told no other keys are allowed",
            ),
        )
    return Outcome(
        schema=result.schema,
        findings=findings + incomplete(result, "force-additional-properties-false"),
    )


@schema_rewrite(
    "insert-properties",
    params={
        "when": param(
            ["absent", "absent-or-null", "falsy"], "When properties counts as missing.", "absent"
        ),
        "require": param(
            ["any", "type-object", "type-missing-or-object"],
            "Which roots get it (Zed: type object; Goose: type missing or object).",
            "any",
        ),
        "also": {
            "type": "array",
            "items": {"enum": ["required", "type"]},
            "default": [],
            "description": "Also insert required: [] and type: object (Goose).",
        },
        "where": param(
            ["root", "object-properties"],
            "The root, or the root and every object-typed property, recursively (Goose).",
            "root",
        ),
    },
)
def insert_properties(
    schema: JSON,
    when: str = "absent",
    require: str = "any",
    also: Sequence[str] = (),
    where: str = "root",
) -> Outcome:
    """Insert ``properties: {}`` if missing (Codex docs/clients/openai.md#codex, Agents SDK docs/clients/openai.md#agents-sdk, Vercel docs/clients/vercel.md#vercel-ai-sdk, Goose docs/clients/goose.md#goose)."""

    def fn(v: JSON, node: W.Node) -> Any:
        if not isinstance(v, dict):
            return v
        if not node.is_root and v.get("type") != "object":
            return v
        t = v.get("type")
        if require == "type-object" and t != "object":
            return v
        if require == "type-missing-or-object" and t not in (None, "object"):
            return v
        props = v.get("properties", None)
        missing = (
            "properties" not in v
            if when == "absent"
            else props is None
            if when == "absent-or-null"
            else not props
        )
        add: dict[str, object] = {"properties": {}} if missing else {}
        if "required" in also and "required" not in v:
            add["required"] = []
        if "type" in also and "type" not in v:
            add["type"] = "object"
        return {**v, **add} if add else v

    walk = W.ROOT if where == "root" else _OBJECT_PROPERTIES
    result = W.rewrite(schema, fn, walk)
    return Outcome(schema=result.schema, findings=incomplete(result, "insert-properties"))


@schema_rewrite("coerce-object-root")
def coerce_object_root(schema: JSON) -> Outcome:
    """A root not ``type: object`` becomes ``{type: object, properties: {}}`` (Copilot docs/clients/vscode.md#copilot-chat)."""
    if isinstance(schema, dict) and schema.get("type") == "object":
        return Outcome()
    return Outcome(
        schema={"type": "object", "properties": {}},
        findings=(
            note(
                "root-replaced",
                "inputSchema is not type object; the client replaces it with an empty "
                "object, so the model sees a tool without parameters",
                "",
                True,
            ),
        ),
    )


@schema_rewrite(
    "truncate-descriptions",
    params={
        "max_length": param("integer", "Longest description kept.", 1024, minimum=1),
        "where": WHERE_PARAM,
    },
    skip=lambda schema, max_length=1024, where="all": _no_string_over(schema, max_length),
)
def truncate_descriptions(schema: JSON, max_length: int = 1024, where: str = "all") -> Outcome:
    """Cut schema descriptions to ``max_length`` characters (Copilot gpt-4* docs/clients/vscode.md#copilot-chat rule 3)."""

    def fn(v: JSON, node: W.Node) -> JSON:
        if (
            isinstance(v, dict)
            and isinstance(v.get("description"), str)
            and len(v["description"]) > max_length
        ):
            return {**v, "description": v["description"][:max_length]}
        return v

    result = W.rewrite(schema, fn, W.WALKS[where])
    return Outcome(schema=result.schema, findings=incomplete(result, "truncate-descriptions"))


def _prunable(v: dict) -> bool:
    """An object node naming a required property it does not define (or a non-string)."""
    if v.get("type") == "object" and isinstance(v.get("properties"), dict):
        required = v.get("required")
        if isinstance(required, list):
            props = v["properties"]
            return not all(isinstance(r, str) and r in props for r in required)
    return False


@schema_rewrite(
    "prune-required",
    params={"where": WHERE_PARAM},
    skip=lambda schema, where="all": (
        not mentions(schema, "required") or not W.some_dict(schema, _prunable)
    ),
)
def prune_required(schema: JSON, where: str = "all") -> Outcome:
    """Drop ``required`` names that are not in ``properties`` (Copilot docs/clients/vscode.md#copilot-chat rule 6)."""

    def fn(v: JSON, node: W.Node) -> JSON:
        if (
            isinstance(v, dict)
            and v.get("type") == "object"
            and isinstance(v.get("properties"), dict)
            and isinstance(v.get("required"), list)
        ):
            kept = [r for r in v["required"] if isinstance(r, str) and r in v["properties"]]
            if len(kept) != len(v["required"]):
                return {**v, "required": kept}
        return v

    result = W.rewrite(schema, fn, W.WALKS[where])
    return Outcome(schema=result.schema, findings=incomplete(result, "prune-required"))


@schema_rewrite(
    "tuple-items-to-anyof",
    params={"where": WHERE_PARAM},
    skip=lambda schema, where="all": not contains(schema, '"items":['),
)
def tuple_items_to_anyof(schema: JSON, where: str = "all") -> Outcome:
    """``items`` given as a list becomes ``{anyOf: items}`` (Copilot gpt-4/claude/o4, docs/clients/vscode.md#copilot-chat)."""

    def fn(v: JSON, node: W.Node) -> JSON:
        if isinstance(v, dict) and isinstance(v.get("items"), list):
            return {**v, "items": {"anyOf": v["items"]}}
        return v

    result = W.rewrite(schema, fn, W.WALKS[where])
    return Outcome(schema=result.schema, findings=incomplete(result, "tuple-items-to-anyof"))
