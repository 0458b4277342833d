"""Cline CLI (npm ``cline``, its agent runtime ``@cline/core``): what it does to a tool on its way to the model.

- ``cline-tool-description``: the description is trimmed, and an empty one is replaced by
  ``Execute MCP tool "<tool>" from server "<server>".`` (``@cline/core`` 0.0.86
  ``dist/index.js``, function ``fy``; observed: a trailing space is gone in the ``core`` set).
- ``default-root-type``: an ``inputSchema`` root without ``type`` goes to the model with
  ``type: "object"`` (observed on the ``no-type`` set); a root of another type is left alone.
- ``keep-last-of-a-name``: of tools with the same model-facing name, the model is shown the last
  one's description and schema (the tools are kept in a map by name); observed with a hand-written
  list (tests/calibration/test_cline_continue.py).

Observed with Cline CLI 3.0.65 (clients/calibrations/cline-cli/).
"""

from __future__ import annotations

from mcp_matrix.behaviours.outcomes import label, note, refuse_tool
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.rewrite import Outcome, schema_rewrite
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import ListState, evolve


def cline_description(description: JSON, server: str, tool: str) -> str:
    """The description Cline CLI shows the model for one MCP tool."""
    text = description.strip() if isinstance(description, str) else ""
    return text or f'Execute MCP tool "{tool}" from server "{server}".'


@behaviour("cline-tool-description", "discovery")
def cline_tool_description(state: ListState) -> ListState:
    """Trim each description; an empty or missing one gets Cline's stand-in sentence.

    Observed: clients/calibrations/cline-cli/3.0.65.json (docs/calibration.md#cline-cli)."""
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
def default_root_type(schema: JSON) -> Outcome:
    """A root without ``type`` is sent as ``type: "object"`` (the model sees what the server meant).

    Observed: clients/calibrations/cline-cli/3.0.65.json (docs/calibration.md#cline-cli)."""
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


@behaviour("keep-last-of-a-name", "discovery")
def keep_last_of_a_name(state: ListState) -> ListState:
    """Of visible tools sharing a model-facing name only the last is shown; the earlier ones are lost.

    Observed: tests/calibration/test_cline_continue.py (docs/clients/cline.md#cline-cli)."""
    if state.outcome != "ok":
        return state
    last: dict[str, int] = {}
    for i, t in enumerate(state.tools):
        if not t.hidden:
            last[t.name] = i
    for i, t in enumerate(state.tools):
        if t.hidden or last.get(t.name, i) == i:
            continue
        later = state.tools[last[t.name]]
        message = (
            f"model-facing name {t.name!r} is also the name of a later tool ({label(later)!r}); "
            "the client shows the model only the later one's description and schema"
        )
        state = refuse_tool(state, i, "drop-tool", "name-collision", message) or state
    return state
