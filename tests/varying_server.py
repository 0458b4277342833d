"""A read-only MCP server for the tests of the intact call's comparison (tests/test_reference_state.py).

Two tools, both ``readOnlyHint: true`` with no listed properties, on the official SDK's
low-level server (served like the bundled ones):

- ``tick`` answers ``call N``, N counting this process's calls: the same call gets another
  answer every time (a clock, a counter, a server whose data others change);
- ``show`` answers the ``arguments`` it got, as JSON text: deterministic, and it tells a call
  without ``arguments`` (``null``) from one with ``{}``.

Run: ``python tests/varying_server.py`` (stdio).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import anyio
import mcp_types as types
from matrix_servers.serving import exit_now, serve_stdio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

TOOLS = [
    {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    for name, description in (
        ("tick", "How many calls this server has answered, this one included."),
        ("show", "The arguments this call carried, as JSON text."),
    )
]


def build() -> Server[Any]:
    calls = itertools.count(1)

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in TOOLS])

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        n = next(calls)
        text = f"call {n}" if params.name == "tick" else json.dumps(params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(
        "varying", version="0.1.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool
    )


if __name__ == "__main__":
    anyio.run(serve_stdio, build())
    exit_now()
