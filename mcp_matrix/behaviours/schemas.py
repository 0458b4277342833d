"""Schema rules that refuse or reshape a tool: root combinators, metaschema, arrays, refs.

The Anthropic API root rule (docs/clients/anthropic.md), VS Code and Copilot (docs/clients/vscode.md),
reference inlining (Codex, Vercel's Google provider, ADK) and Gemini cycles
(docs/clients/google.md#gemini-api). Refusals follow a policy: drop the tool, break
the session, or drop the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jsonschema import Draft7Validator, FormatChecker
from jsonschema.exceptions import best_match

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.codex import cyclic_fallback
from mcp_matrix.behaviours.outcomes import (
    COMBINATORS,
    KEYWORDS_PARAM,
    TOOL_POLICIES,
    WHERE_PARAM,
    consequence,
    diff_findings,
    incomplete,
    note,
    param,
    refuse,
    typenames,
)
from mcp_matrix.behaviours.refs import FORMS, inline
from mcp_matrix.behaviours.rewrite import (
    Outcome,
    contains,
    fingerprint,
    memo_cache,
    mentions,
    schema_rewrite,
)
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding


@schema_rewrite(
    "root-combinators",
    params={
        "policy": param(
            [
                "session-broken",
                "drop-tool",
                "delete-keyword",
                "flatten-first-object",
                "collapse-empty-object",
                "pass",
            ],
            "What a root combinator does: the API fails every request (Claude Code legacy), the "
            "tool is dropped (Claude Code current), the keyword is deleted (Copilot), the first "
            "object variant replaces it (Roo), the root collapses to an empty object (Codex).",
            "pass",
        ),
        "keywords": {
            **KEYWORDS_PARAM,
            "default": COMBINATORS,
            "description": "Root keywords the policy applies to, in preference order.",
        },
    },
)
def root_combinators(schema: JSON, policy: str = "pass", keywords: list = COMBINATORS) -> Outcome:
    """What a client does with root anyOf/oneOf/allOf (docs/clients/anthropic.md#anthropic-api).

    Also docs/clients/: vscode.md#copilot-chat, roo-code.md, openai.md#codex.

    Anthropic API: "input_schema does not support oneOf, allOf, or anyOf at the top level"
    (claude-code#4886): legacy Claude Code fails every turn (#45106), current Claude Code
    drops the tool (#95504); Copilot deletes root oneOf/anyOf/allOf/not/if/then/else;
    Roo flattens to the first object variant; Codex collapses a root oneOf to ``{}``.
    """
    if not isinstance(schema, dict) or policy == "pass":
        return Outcome()
    found = [k for k in keywords if k in schema]
    if not found:
        return Outcome()
    kws = ", ".join(found)
    if policy in ("session-broken", "drop-tool"):
        why = (
            "the model API rejects root combinators, so every request of the session fails"
            if policy == "session-broken"
            else "the client leaves the tool out"
        )
        return refuse(
            policy, "root-combinator", f"inputSchema has {kws} at the root; {why}", "/" + found[0]
        )
    rest = {k: v for k, v in schema.items() if k not in keywords}
    if policy == "delete-keyword":
        return Outcome(
            schema=rest,
            findings=(
                note(
                    "root-combinator-deleted",
                    f"root {kws} deleted "
                    "(sibling keys kept): the model no longer sees the alternatives",
                    "/" + found[0],
                ),
            ),
        )
    if policy == "flatten-first-object":
        return _flatten_first_object(schema, keywords)
    # collapse-empty-object
    out = dict(rest)
    if out.get("type") != "object":
        out["type"] = "object"
    out.setdefault("properties", {})
    return Outcome(
        schema=out,
        findings=(
            note(
                "root-combinator-collapsed",
                f"root {kws} removed; the root becomes an object with only its own properties",
                "/" + found[0],
            ),
        ),
    )


def _flatten_first_object(schema: dict, keywords: list) -> Outcome:
    """Roo (docs/clients/roo-code.md#roo-code): the first variant with type object or properties replaces the root."""
    comb = next((k for k in keywords if isinstance(schema.get(k), list) and schema[k]), None)
    if comb is None:
        return Outcome()
    rest = {k: v for k, v in schema.items() if k not in keywords}
    variants = schema[comb]
    pick = next(
        (
            i
            for i, v in enumerate(variants)
            if isinstance(v, dict) and (v.get("type") == "object" or "properties" in v)
        ),
        None,
    )
    if pick is None:
        out = {"type": "object", "additionalProperties": False, **rest}
        msg = f"root {comb} has no object variant; the root becomes its other keys only"
    else:
        out = {**rest, **variants[pick]}
        msg = f"root {comb} flattened to variant {pick}: the model sees only that alternative"
    return Outcome(schema=out, findings=(note("root-combinator-flattened", msg, "/" + comb),))


@schema_rewrite(
    "forbid-keywords",
    params={
        "keywords": {
            **KEYWORDS_PARAM,
            "description": "Keywords the client (or its model API) refuses.",
        },
        "where": WHERE_PARAM,
        "policy": param(TOOL_POLICIES, "What a refused keyword does.", "drop-tool"),
    },
    required=("keywords",),
    skip=lambda schema, keywords, where="all", policy="drop-tool": not mentions(schema, *keywords),
)
def forbid_keywords(
    schema: JSON, keywords: list, where: str = "all", policy: str = "drop-tool"
) -> Outcome:
    """Refuse a tool whose schema uses one of ``keywords`` (generic form of docs/clients/cursor-windsurf.md#cursor, docs/clients/zed.md#zed rules)."""
    wanted = set(keywords)
    for node in W.visit(schema, W.WALKS[where]):
        if isinstance(node.value, dict):
            hit = next((k for k in node.value if k in wanted), None)
            if hit is not None:
                return refuse(
                    policy,
                    "keyword-refused",
                    f"inputSchema uses {hit} at {node.pointer or '/'}; {consequence(policy)}",
                    node.pointer + "/" + W.escape(hit),
                )
    return Outcome()


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


def _is_array(value: JSON, match: str) -> bool:
    return value == "array" if match == "exact" else "array" in typenames(value)


@schema_rewrite(
    "array-items-required",
    params={
        "on_missing": param(
            ["session-broken", "drop-tool", "add-string-items"],
            "Copilot throws for the whole list; Codex and ADK add items: string.",
            "session-broken",
        ),
        "match": param(
            ["exact", "contains"],
            'exact: type == "array" (Copilot: ["array","null"] '
            'is not caught); contains: "array" among the types.',
            "exact",
        ),
        "where": WHERE_PARAM,
    },
    skip=lambda schema, on_missing="session-broken", match="exact", where="all": (
        not contains(schema, '"array"')
        or not W.some_dict(schema, lambda v: _is_array(v.get("type"), match) and "items" not in v)
    ),
)
def array_items_required(
    schema: JSON, on_missing: str = "session-broken", match: str = "exact", where: str = "all"
) -> Outcome:
    """An array schema without ``items`` (Copilot throws docs/clients/vscode.md#copilot-chat; Codex docs/clients/openai.md#codex, ADK docs/clients/google.md#google-adk add items)."""
    if on_missing != "add-string-items":
        for node in W.visit(schema, W.WALKS[where]):
            v = node.value
            if isinstance(v, dict) and _is_array(v.get("type"), match) and "items" not in v:
                return refuse(
                    on_missing,
                    "array-without-items",
                    f"array at {node.pointer or '/'} "
                    "has no items; the client throws 'tool parameters array type must "
                    f"have items'; {consequence(on_missing)}",
                    node.pointer,
                )
        return Outcome()
    added: list[W.Node] = []

    def fn(v: JSON, node: W.Node) -> JSON:
        if isinstance(v, dict) and _is_array(v.get("type"), match) and "items" not in v:
            added.append(node)
            return {**v, "items": {"type": "string"}}
        return v

    result = W.rewrite(schema, fn, W.WALKS[where])
    findings = tuple(
        note(
            "items-added",
            f"array at {n.pointer or '/'} has no items; the client adds "
            "items: {type: string}, so the model is told it holds strings",
            n.pointer,
            True,
        )
        for n in added[:20]
    )
    return Outcome(
        schema=result.schema, findings=findings + incomplete(result, "array-items-required")
    )


@schema_rewrite(
    "strip-defs",
    params={
        "keywords": {
            **KEYWORDS_PARAM,
            "default": ["$defs", "definitions"],
            "description": "Root definition containers the client removes.",
        },
    },
)
def strip_defs(schema: JSON, keywords: Sequence[str] = ("$defs", "definitions")) -> Outcome:
    """Remove root ``$defs``/``definitions``; report each dangling ``$ref`` (docs/clients/google.md#litellm older LiteLLM)."""
    if not isinstance(schema, dict) or not any(k in schema for k in keywords):
        return Outcome()
    out = {k: v for k, v in schema.items() if k not in keywords}
    return Outcome(schema=out, findings=_dangling(out))


def _dangling(schema: JSON) -> tuple[Finding, ...]:
    return tuple(
        note(
            "dangling-ref",
            f"$ref {ref!r} at {ptr} no longer resolves: the model sees a "
            "reference it cannot follow",
            ptr,
            True,
        )
        for ptr, ref in W.dangling_refs(schema)[:20]
    )


_CYCLE_VALUE = {
    "circular-description": lambda node, target, ref: {
        "type": "object",
        "description": f"Circular ref to {ref.split('/')[-1]}",
    },
    "typed-stand-in": lambda node, target, ref: cyclic_fallback(target, node),
    "empty": lambda node, target, ref: {},  # langchain-core dereference_refs (observed)
}


@schema_rewrite(
    "resolve-refs",
    params={
        "forms": param(
            list(FORMS),
            "Which references resolve: any #/ pointer (Codex, Agents SDK), "
            "only #/$defs/<n> and #/definitions/<n> (Vercel, Zed), the last path segment "
            "looked up in $defs+definitions (ADK).",
            "any-pointer",
        ),
        "on_cycle": param(
            [
                "keep",
                "circular-description",
                "typed-stand-in",
                "empty",
                "drop-tool",
                "session-broken",
            ],
            "A reference already being expanded: left as $ref, replaced by "
            "{type: object, description: 'Circular ref to X'} (ADK docs/clients/google.md#google-adk), by a stand-in "
            "typed like the target (Codex cyclic_fallback docs/clients/openai.md#codex), by {} (langchain-core), or refused.",
            "keep",
        ),
        "on_missing": param(
            ["keep", "drop-tool", "session-broken"], "An unresolvable local reference.", "keep"
        ),
        "remove_defs": param("boolean", "Delete root $defs/definitions afterwards (ADK).", False),
        "walk": param(
            ["all", "every"],
            "Where references are looked for: subschemas, or every value (ADK).",
            "all",
        ),
    },
    report_losses=False,
    skip=lambda schema, remove_defs=False, **_: not remove_defs and not mentions(schema, "$ref"),
)
def resolve_refs(
    schema: JSON,
    forms: str = "any-pointer",
    on_cycle: str = "keep",
    on_missing: str = "keep",
    remove_defs: bool = False,
    walk: str = "all",
) -> Outcome:
    """Inline local ``$ref`` targets, siblings overriding (docs/clients/vercel.md#google-provider, docs/clients/openai.md#agents-sdk, docs/clients/google.md#google-adk; Codex: codex-sanitize)."""
    done = inline(schema, forms, W.WALKS[walk], on_cycle=_CYCLE_VALUE.get(on_cycle))
    if done.cycles and on_cycle in TOOL_POLICIES:
        ptr, ref = done.cycles[0]
        return refuse(
            on_cycle,
            "ref-cycle",
            f"$ref {ref!r} at {ptr or '/'} refers back to itself; "
            f"the client cannot inline it; {consequence(on_cycle)}",
            ptr,
        )
    if done.missing and on_missing in TOOL_POLICIES:
        ptr, ref = done.missing[0]
        return refuse(
            on_missing,
            "ref-unresolved",
            f"$ref {ref!r} at {ptr or '/'} cannot be "
            f"resolved by the client; {consequence(on_missing)}",
            ptr,
        )
    out = done.schema
    if remove_defs and isinstance(out, dict) and ("$defs" in out or "definitions" in out):
        out = {k: v for k, v in out.items() if k not in ("$defs", "definitions")}
    findings = [
        note(
            "ref-cycle",
            f"$ref {ref!r} at {ptr or '/'} is circular: the client "
            + {
                "circular-description": "replaces it with an empty object",
                "typed-stand-in": "replaces it with a stand-in typed like its target",
                "empty": "replaces it with an empty schema (anything goes)",
            }.get(on_cycle, "leaves it as a reference"),
            ptr,
            on_cycle != "keep",
        )
        for ptr, ref in done.cycles[:20]
    ]
    if remove_defs:
        findings += _dangling(out)
    if not done.complete:
        findings.append(
            note(
                "walk-limit",
                f"inlining stopped after {W.MAX_NODES} subschemas; the rest is left as references",
            )
        )
    return Outcome(
        schema=out,
        findings=tuple(findings) + diff_findings(schema, out, "resolve-refs", through_refs=True),
    )


@schema_rewrite(
    "ref-cycles",
    params={
        "policy": param(TOOL_POLICIES, "What a schema with a $ref cycle does.", "session-broken"),
    },
    skip=lambda schema, policy="session-broken": not mentions(schema, "$ref"),
)
def ref_cycles(schema: JSON, policy: str = "session-broken") -> Outcome:
    """A schema whose local ``$ref``s form a cycle (Gemini API "schema depth" errors, docs/clients/google.md#gemini-api)."""
    done = inline(schema, "any-pointer", W.ALL)
    if not done.cycles:
        return Outcome()
    ptr, ref = done.cycles[0]
    return refuse(
        policy,
        "ref-cycle",
        f"$ref {ref!r} at {ptr or '/'} is circular; the model API "
        f"reports a schema depth error; {consequence(policy)}",
        ptr,
    )
