"""The ``$ref`` rules: root definitions removed, references inlined, reference cycles refused.

Older LiteLLM strips root ``$defs`` (docs/clients/google.md#litellm); Codex, the Agents SDK,
Vercel's Google provider, Zed and ADK inline references, each its own way (``refs.inline``);
the Gemini API refuses a cycle (docs/clients/google.md#gemini-api).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.codex import cyclic_fallback
from mcp_matrix.behaviours.outcomes import (
    KEYWORDS_PARAM,
    TOOL_POLICIES,
    consequence,
    diff_findings,
    note,
    param,
    refuse,
)
from mcp_matrix.behaviours.refs import FORMS, inline
from mcp_matrix.behaviours.rewrite import Outcome, mentions, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding


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
