"""Claude Code behaviours first seen in calibration runs (clients/calibrations/claude-code-278/).

- ``forbid-tuple-items``: Claude Code 2.1.332 leaves out a tool whose schema gives ``items``
  as a list (draft-07 tuple form, not valid 2020-12) while its siblings stay.
- ``forbid-property-keys``: the Anthropic API refuses a request whose tool has a root property
  key outside ``^[a-zA-Z0-9_.-]{1,64}$`` (every turn of the session fails, claude-code#34771);
  Claude Code 2.1.332 and 2.1.278 leave out only that tool (observed, probe set bad-key).
- ``parse-stringified-arguments``: Claude Code 2.1.332 parses a string argument holding a JSON
  array or object back into that value when the held schema types the parameter as array or
  object, before it sends ``tools/call`` (the model's stringified arguments arrive as values).
"""

from __future__ import annotations

import json
import re

from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.outcomes import Outcome, consequence, refuse, typenames
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan
from mcp_matrix.core.tools import escape

POLICIES = ["drop-tool", "server-dropped", "session-broken"]


@schema_rewrite(
    "forbid-tuple-items",
    params={
        "policy": {
            "enum": POLICIES,
            "default": "drop-tool",
            "description": "What a tuple items list does.",
        }
    },
)
def forbid_tuple_items(schema: JSON, policy: str = "drop-tool") -> Outcome:
    """A tool whose schema has ``items`` as a list is refused (Claude Code 2.1.332, observed).

    clients/calibrations/claude-code/2.1.332.json; 2.1.278 kept such tools (docs/clients/anthropic.md#claude-code).
    """
    for node in W.visit(schema, W.WALKS["all"]):
        if isinstance(node.value, dict) and isinstance(node.value.get("items"), list):
            return refuse(
                policy,
                "tuple-items-refused",
                f"inputSchema gives items as a list at {node.pointer or '/'}; {consequence(policy)}",
                node.pointer + "/items",
            )
    return Outcome()


API_KEY_PATTERN = "^[a-zA-Z0-9_.-]{1,64}$"


@schema_rewrite(
    "forbid-property-keys",
    params={
        "policy": {
            "enum": POLICIES,
            "default": "session-broken",
            "description": "What a root property key outside the pattern does.",
        },
        "pattern": {
            "type": "string",
            "default": API_KEY_PATTERN,
            "description": "The pattern every root property key must match.",
        },
    },
)
def forbid_property_keys(
    schema: JSON, policy: str = "session-broken", pattern: str = API_KEY_PATTERN
) -> Outcome:
    """A root property key outside ``pattern`` is refused (the Anthropic API checks
    ``input_schema.properties`` only, so nested keys pass).

    https://github.com/anthropics/claude-code/issues/34771; Claude Code 2.1.332 leaves out the
    tool instead (clients/calibrations/claude-code/2.1.332.json, probe set bad-key).
    """
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return Outcome()
    bad = [k for k in props if not re.fullmatch(pattern, k)]
    if not bad:
        return Outcome()
    key = bad[0]
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    return refuse(
        policy,
        "property-key-refused",
        f"property key {key!r}{more} does not match {pattern}; {consequence(policy)}",
        f"/properties/{escape(key)}",
    )


def _parsed(value: JSON, sub: JSON) -> JSON:
    if not isinstance(value, str) or not isinstance(sub, dict):
        return value
    wanted = set(typenames(sub.get("type"))) & {"array", "object"}
    text = value.strip()
    if not wanted or not text[:1] in ("[", "{"):
        return value
    try:
        got = json.loads(text)
    except ValueError:
        return value
    kind = "array" if isinstance(got, list) else "object" if isinstance(got, dict) else ""
    return got if kind in wanted else value


@behaviour("parse-stringified-arguments", "call")
def parse_stringified_arguments(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Top-level string arguments holding a JSON array/object are parsed back where the schema wants one.

    Observed on Claude Code 2.1.278 and 2.1.332 (clients/calibrations/); issues report
    the strings reaching servers in older versions (docs/clients/anthropic.md#claude-code).
    """
    args = plan.arguments
    props = ctx.held_schema.get("properties") if isinstance(ctx.held_schema, dict) else None
    if not isinstance(args, dict) or not isinstance(props, dict):
        return plan
    out = {k: _parsed(v, props.get(k)) for k, v in args.items()}
    if all(out[k] is args[k] for k in args):
        return plan
    return plan.changed("parse-stringified-arguments", arguments=out)
