"""Amp (npm ``@sourcegraph/amp``, the native ``@ampcode/cli`` binary): the name Amp gives an MCP
tool, as listed by ``amp tools list --json`` (observed with 0.0.1790142911-g7618fb; Amp is closed
source, so every rule here is what it listed for hand-written names, 2026-12-02).

- ``amp-tool-name``: ``mcp__<server>__<tool>``, each part with every run of characters outside
  ``[A-Za-z0-9]`` (``_`` included) as one ``_`` and ``_`` stripped from both ends (``x__y`` ->
  ``x_y``, ``café`` -> ``caf``, ``Ünïcode`` -> ``n_code``, ``my-srv.x`` -> ``my_srv_x``); a tool
  part left empty is ``tool``. A name that would be 64 characters or more is the cleaned tool part
  alone, cut to 64 (``mcp__srv__`` + 53 characters stays, + 54 does not). Of tools that end with
  one name only the last listed is kept (``keep-last-of-a-name``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from mcp_matrix.behaviours.outcomes import note
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.materiality import renamed
from mcp_matrix.core.model import ListState, evolve

LIMIT = 64


def clean(part: str) -> str:
    """One part of the name: runs of characters outside [A-Za-z0-9] as '_', none at the ends."""
    return re.sub(r"[^A-Za-z0-9]+", "_", part).strip("_")


def amp_name(server: str, tool: str) -> str:
    """The name ``amp tools list`` shows for ``tool`` of ``server``."""
    part = clean(tool) or "tool"
    name = f"mcp__{clean(server)}__{part}"
    return name if len(name) < LIMIT else part[:LIMIT]


@behaviour("amp-tool-name", "discovery")
def amp_tool_name(state: ListState) -> ListState:
    """The model-facing name of each tool (see the module doc); two tools may end with one name.

    Observed: clients/calibrations/amp/0.0.1790142911-g7618fb.json and hand-written names
    (tests/behaviours/test_amp.py); docs/clients/amp.md."""
    if state.outcome != "ok":
        return state
    tools = list(state.tools)
    for i, tool in enumerate(tools):
        name = amp_name(state.server, tool.server_name)
        if tool.hidden or name == tool.name:
            continue
        # The mcp__<server>__ prefix is a namespace, as in Claude Code: only a tool part that
        # differs from the server's name (characters replaced, or cut) is a finding.
        prefix = f"mcp__{clean(state.server)}__"
        part = name.removeprefix(prefix)
        if part == tool.server_name:
            tools[i] = evolve(tool, name=name)
            continue
        finding = note(
            "name-sanitised",
            f"tool name {tool.server_name!r} becomes {name!r}: mcp__<server>__<tool>, runs of "
            "characters outside [A-Za-z0-9] as '_', the tool part alone when that is 64 or more",
            materiality=renamed(tool.server_name, part),
        )
        tools[i] = evolve(tool, name=name, findings=tool.findings + (finding,))
    return replace(state, tools=tuple(tools))
