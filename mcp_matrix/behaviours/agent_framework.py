"""Microsoft Agent Framework (PyPI ``agent-framework-core``): what it checks before an MCP call, as of
1.23.0 (``agent_framework/_tools.py`` ``_validate_arguments_against_schema``,
``_matches_json_schema_type``).

- ``agent-framework-validate``: top-level checks against the tool's schema before ``tools/call``:
  a missing ``required`` key, a key not in ``properties`` when ``additionalProperties`` is false, a
  value outside a property's ``enum``, or a value of another JSON type than the property's
  ``type`` (a string or a list of strings; an integer passes for a number, a boolean for neither)
  is refused, and the model is told ``Error: Argument parsing failed.``. Nothing nested, no
  ``format``, bounds or pattern. ``stop_after_error_turns``: after that many model turns in a row
  with a failed call (refused here, raised, or ``isError``), the next request of the same
  ``agent.run`` is sent with ``tool_choice: "none"``: no tool is called again until the user's
  next request (``max_consecutive_errors_per_request``, default 3).

Observed with agent-framework-core 1.23.0 (clients/calibrations/agent-framework/1.23.0.json).
"""

from __future__ import annotations

from mcp_matrix.behaviours.outcomes import refuse_call
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan

_CHECK = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _matches(value: JSON, kind: str) -> bool:
    check = _CHECK.get(kind)
    return True if check is None else check(value)


def refusal(schema: JSON, arguments: JSON) -> str | None:
    """Why ``_validate_arguments_against_schema`` raises for ``arguments``, or None."""
    if not isinstance(schema, dict) or not isinstance(arguments, dict):
        return None
    required = [k for k in schema.get("required", []) if isinstance(k, str)]
    missing = sorted(k for k in required if k not in arguments)
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    props = schema.get("properties", {})
    props = props if isinstance(props, dict) else {}
    if schema.get("additionalProperties") is False:
        extra = sorted(k for k in arguments if k not in props)
        if extra:
            return f"unexpected argument(s): {', '.join(extra)}"
    for key, value in arguments.items():
        prop = props.get(key)
        if not isinstance(prop, dict):
            continue
        enum = prop.get("enum")
        if isinstance(enum, list) and enum and value not in enum:
            return f"{key!r} is not in {enum!r}"
        kind = prop.get("type")
        if isinstance(kind, str) and not _matches(value, kind):
            return f"{key!r} is not of type {kind}"
        if isinstance(kind, list):
            kinds = [k for k in kind if isinstance(k, str)]
            if kinds and not any(_matches(value, k) for k in kinds):
                return f"{key!r} is not of any type in {kinds}"
    return None


@behaviour(
    "agent-framework-validate",
    "call",
    params={
        "stop_after_error_turns": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "model turns in a row with a failed call after which no tool is "
            "called for the rest of the request (0: never; 1.23.0: 3)",
        }
    },
)
def agent_framework_validate(
    plan: CallPlan, ctx: CallContext, stop_after_error_turns: int = 0
) -> CallPlan:
    """Refuse what Agent Framework's top-level argument check refuses.

    Observed: clients/calibrations/agent-framework/1.23.0.json."""
    why = refusal(ctx.held_schema, plan.arguments)
    if why is None:
        return plan
    if stop_after_error_turns:
        why += (
            f"; a failed call counts toward Agent Framework's stop: after "
            f"{stop_after_error_turns} model turns in a row with one, no tool is called for "
            "the rest of the request"
        )
    return refuse_call(plan, "agent-framework-validate", why)
