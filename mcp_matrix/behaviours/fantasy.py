"""charm.land/fantasy's ``schema.Normalize``: what Crush's tool parameters go through last.

Why: fantasy (the Go agent library Crush builds its tool definitions with) normalises every
tool's ``inputSchema`` before a provider sees it (``agent.prepareTools`` calls
``schema.Normalize``, schema/schema.go @ v0.41.2, docs/clients/crush.md#crush). No other
behaviour writes a type list as ``anyOf``, so Crush's profile needs this one.
"""

from __future__ import annotations

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import diff_findings, incomplete
from mcp_matrix.behaviours.rewrite import Outcome, contains, schema_rewrite
from mcp_matrix.core.jsontypes import JSON


def _variant(t: JSON) -> JSON:
    return {"type": t, "items": {}} if t == "array" else {"type": t}


def _normalise(v: JSON, node: W.Node) -> JSON:
    if not isinstance(v, dict):
        return v
    t = v.get("type")
    if isinstance(t, list):
        out = {k: x for k, x in v.items() if k != "type"}
        out["anyOf"] = [_variant(x) for x in t]  # an anyOf beside it is replaced, as in Go
        return out
    if t == "array" and "items" not in v:
        return {**v, "items": {}}
    return v


@schema_rewrite(
    "fantasy-normalize",
    skip=lambda schema: not contains(schema, '"type":[', '"type":"array"'),
    report_losses=False,
)
def fantasy_normalize(schema: JSON) -> Outcome:
    """A type list becomes ``anyOf`` of single types; an array gets ``items: {}`` (Crush, docs/clients/crush.md#crush).

    An array arm of the ``anyOf`` gets ``items: {}`` too. Like Go's Normalize, every object in
    the schema is visited, values inside ``enum``, ``default`` or ``examples`` included. A type
    list said as ``anyOf`` arms keeps what it said (no finding); an ``anyOf`` it replaces, or a
    value it rewrites, is a loss."""
    result = W.rewrite(schema, _normalise, W.EVERY)
    findings = diff_findings(schema, result.schema, "fantasy-normalize")
    return Outcome(
        schema=result.schema, findings=findings + incomplete(result, "fantasy-normalize")
    )
