"""Cline CLI (npm ``cline``, its agent runtime ``@cline/core``): what it does to a tool on its way to the model.

- ``cline-tool-description``: the description is trimmed, and an empty one is replaced by
  ``Execute MCP tool "<tool>" from server "<server>".`` (``@cline/core`` 0.0.86
  ``dist/index.js``, function ``fy``; observed: a trailing space is gone in the ``core`` set).
- ``default-root-type``: an ``inputSchema`` root without ``type`` goes to the model with
  ``type: "object"`` (observed on the ``no-type`` set); a root of another type is left alone.

Observed with Cline CLI 3.0.65 (clients/calibrations/cline-cli/).
"""

from __future__ import annotations

from typing import Any

from matrix.behaviours.outcomes import note
from matrix.behaviours.registry import behaviour
from matrix.behaviours.rewrite import Outcome, schema_rewrite
from matrix.model import ListState, evolve


def cline_description(description: Any, server: str, tool: str) -> str:
    """The description Cline CLI shows the model for one MCP tool."""
    text = description.strip() if isinstance(description, str) else ""
    return text or f'Execute MCP tool "{tool}" from server "{server}".'


@behaviour("cline-tool-description", "discovery")
def cline_tool_description(state: ListState) -> ListState:
    """Trim each description; an empty or missing one gets Cline's stand-in sentence.

    Observed: clients/calibrations/cline-cli/3.0.65.json (docs/calibration.md § Cline CLI)."""
    if state.outcome != "ok":
        return state
    tools = []
    changed = False
    for t in state.tools:
        new = cline_description(t.description, state.server, t.server_name)
        if t.hidden or new == t.description:
            tools.append(t)
            continue
        tools.append(evolve(t, description=new))
        changed = True
    return evolve(state, tools=tuple(tools)) if changed else state


@schema_rewrite(
    "default-root-type", skip=lambda schema: not isinstance(schema, dict) or "type" in schema
)
def default_root_type(schema: Any) -> Outcome:
    """A root without ``type`` is sent as ``type: "object"`` (the model sees what the server meant).

    Observed: clients/calibrations/cline-cli/3.0.65.json (docs/calibration.md § Cline CLI)."""
    if not isinstance(schema, dict) or "type" in schema:
        return Outcome()
    return Outcome(
        schema={**schema, "type": "object"},
        findings=(
            note(
                "root-type-added",
                "inputSchema has no type; the client sends it to the model as type object",
            ),
        ),
    )
