"""tool-name leaves a list it changes nothing in as the very same state, so discovery's stamping
skips it at once (it runs once a tool for profiles with many culprits)."""

from __future__ import annotations

from mcp_matrix.behaviours.names import tool_name
from mcp_matrix.simulate.discovery import initial_state


def test_a_list_tool_name_changes_nothing_in_is_the_same_state():
    """Fails before: a copy of the list, equal but another object."""
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("get_a", "put_b")]
    state = initial_state([(0, t) for t in tools], "srv")
    assert tool_name(state) is state
    renamed = tool_name(state, template="{server}__{name}")
    assert renamed is not state
    assert [t.name for t in renamed.tools] == ["srv__get_a", "srv__put_b"]
