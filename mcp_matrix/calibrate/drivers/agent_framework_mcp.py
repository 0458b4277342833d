"""Driver: Microsoft Agent Framework (PyPI ``agent-framework-core``, ``agent-framework-openai``).

As its docs show: ``async with MCPStdioTool(name, command, args=...)`` (or
``MCPStreamableHTTPTool`` for a URL), ``Agent(client=..., tools=mcp_tool).run(prompt)``; the chat
client is ``OpenAIChatCompletionClient`` (Chat Completions) at the fake endpoint.
"""

from __future__ import annotations

from typing import Any

from agent_framework import Agent, MCPStdioTool, MCPStreamableHTTPTool
from agent_framework.openai import OpenAIChatCompletionClient

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

PACKAGES = ("agent-framework-core", "agent-framework-openai", "mcp", "openai")


def _tool(env: DriverEnv) -> Any:
    if env.server_url:
        return MCPStreamableHTTPTool(name=env.server_name, url=env.server_url)
    return MCPStdioTool(name=env.server_name, command=env.command, args=env.args)


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    client = OpenAIChatCompletionClient(
        model=env.model, api_key=FAKE_KEY, base_url=f"{env.model_url}/v1"
    )
    async with _tool(env) as mcp_tool:
        out.tools_seen = [f.name for f in getattr(mcp_tool, "functions", [])]
        agent = Agent(client=client, name="probe", instructions=PROMPT, tools=mcp_tool)
        result = await agent.run(PROMPT)
        out.notes["final_text"] = str(result)[:500]


if __name__ == "__main__":
    run(main)
