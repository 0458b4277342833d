"""llm (PyPI ``llm``) with the ``llm-tools-mcp`` plugin: what becomes of an MCP tool, as of llm 0.36
and llm-tools-mcp 0.4 (``llm_tools_mcp/register_tools.py`` ``_create_tool_for_mcp``).

- ``llm-tools-mcp-description``: the tool keeps its name and its ``inputSchema`` as served; its
  description (empty when it has none) gets ``\\n[from MCP server: <server>]`` appended.

Observed with llm 0.36 and llm-tools-mcp 0.4 (clients/calibrations/llm/0.36.json).
"""

from __future__ import annotations

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import ListState, evolve


def llm_description(description: JSON, server: str) -> str:
    """The description llm-tools-mcp gives the model for one MCP tool."""
    text = description if isinstance(description, str) else ""
    return f"{text}\n[from MCP server: {server}]"


@behaviour("llm-tools-mcp-description", "discovery")
def llm_tools_mcp_description(state: ListState) -> ListState:
    """Append the server line to every description.

    Observed: clients/calibrations/llm/0.36.json."""
    if state.outcome != "ok":
        return state
    tools = tuple(
        t if t.hidden else evolve(t, description=llm_description(t.description, state.server))
        for t in state.tools
    )
    return evolve(state, tools=tools)
