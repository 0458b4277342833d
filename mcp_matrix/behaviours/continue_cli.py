"""Continue CLI (npm ``@continuedev/cli``): the one check it makes on a call before sending it.

- ``require-present``: every name in the top-level ``required`` of the schema the model was shown
  must be in the arguments and not null, or the call is refused before ``tools/call`` (the model
  gets ``Required parameter "a" missing for tool "t"``). Nothing else is checked: types, nested
  ``required`` and unknown keys pass. ``validateToolCallArgsPresent`` in
  ``src/tools/index.tsx`` of @continuedev/cli 1.5.47; observed with a hand-written tool list
  (tests/calibration/test_cline_continue.py).
"""

from __future__ import annotations

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.model import CallContext, CallPlan, Finding


def missing_required(schema: object, arguments: object, null_is_missing: bool = True) -> list[str]:
    """The top-level required names ``arguments`` leaves out (or gives as null), in schema order."""
    required = schema.get("required") if isinstance(schema, dict) else None
    if not isinstance(required, list):
        return []
    args = arguments if isinstance(arguments, dict) else {}
    if not null_is_missing:
        return [k for k in required if isinstance(k, str) and k not in args]
    return [k for k in required if isinstance(k, str) and args.get(k) is None]


@behaviour(
    "require-present",
    "call",
    params={
        "null_is_missing": {
            "type": "boolean",
            "default": True,
            "description": "a required key given as null is refused too (Continue CLI); "
            "false: only a key left out (openai-agents 0.24, code)",
        }
    },
)
def require_present(plan: CallPlan, ctx: CallContext, null_is_missing: bool = True) -> CallPlan:
    """Refuse a call that omits a top-level required argument (or sends it as null).

    Observed: tests/calibration/test_cline_continue.py (docs/calibration.md#continue-cli), and
    the validation probe set (v_required) on Continue CLI and openai-agents."""
    missing = missing_required(ctx.held_schema, plan.arguments, null_is_missing)
    if not missing:
        return plan
    return plan.changed(
        "require-present",
        refused=Finding(
            code="client-refused",
            message=(
                f"the client refuses the call before sending it: required parameter {missing[0]!r} "
                f"is missing{' or null' if null_is_missing else ''} (it checks only that "
                "top-level required keys are present)"
            ),
            pointer="/arguments",
            blast_radius="call",
        ),
    )
