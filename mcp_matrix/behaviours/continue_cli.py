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
from mcp_matrix.model import CallContext, CallPlan, Finding


def missing_required(schema: object, arguments: object) -> list[str]:
    """The top-level required names ``arguments`` leaves out or gives as null, in schema order."""
    required = schema.get("required") if isinstance(schema, dict) else None
    if not isinstance(required, list):
        return []
    args = arguments if isinstance(arguments, dict) else {}
    return [k for k in required if isinstance(k, str) and args.get(k) is None]


@behaviour("require-present", "call")
def require_present(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Refuse a call that omits a top-level required argument or sends it as null.

    Observed: tests/calibration/test_cline_continue.py (docs/calibration.md#continue-cli)."""
    missing = missing_required(ctx.held_schema, plan.arguments)
    if not missing:
        return plan
    return plan.changed(
        "require-present",
        refused=Finding(
            code="client-refused",
            message=(
                f"the client refuses the call before sending it: required parameter {missing[0]!r} "
                "is missing or null (it checks only that top-level required keys are present)"
            ),
            pointer="/arguments",
            blast_radius="call",
        ),
    )
