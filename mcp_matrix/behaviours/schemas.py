"""Schema rules that refuse or reshape a tool: root combinators, refused keywords, arrays without items.

The Anthropic API root rule (docs/clients/anthropic.md), VS Code and Copilot (docs/clients/vscode.md),
Cursor and Zed's refused keywords. Refusals follow a policy: drop the tool, break the session, or
drop the server. The draft-07 metaschema check is ``metaschema``'s, the ``$ref`` rules
``ref_rewrites``'s.
"""

from __future__ import annotations

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import (
    COMBINATORS,
    KEYWORDS_PARAM,
    TOOL_POLICIES,
    WHERE_PARAM,
    consequence,
    incomplete,
    note,
    param,
    refuse,
    typenames,
)
from mcp_matrix.behaviours.rewrite import Outcome, contains, mentions, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.verdicts import V


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
    if policy in (V.SESSION_BROKEN.name, "drop-tool"):
        why = (
            "the model API rejects root combinators, so every request of the session fails"
            if policy == V.SESSION_BROKEN.name
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
