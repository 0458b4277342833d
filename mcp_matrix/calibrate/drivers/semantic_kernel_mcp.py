"""Driver: Semantic Kernel (PyPI ``semantic-kernel[mcp]``) with one MCP server.

As its samples show: ``async with MCPStdioPlugin(name, command, args=...)`` (or
``MCPStreamableHttpPlugin`` for a URL), a ``ChatCompletionAgent`` with ``plugins=[plugin]`` on
``OpenAIChatCompletion`` (Chat Completions) whose ``AsyncOpenAI`` client points at the fake endpoint.
"""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI
from semantic_kernel.agents import ChatCompletionAgent
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
from semantic_kernel.connectors.mcp import MCPStdioPlugin, MCPStreamableHttpPlugin

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

PACKAGES = ("semantic-kernel", "mcp", "openai")


def _plugin(env: DriverEnv) -> Any:
    if env.server_url:
        return MCPStreamableHttpPlugin(name=env.server_name, url=env.server_url)
    return MCPStdioPlugin(name=env.server_name, command=env.command, args=env.args)


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    client = AsyncOpenAI(api_key=FAKE_KEY, base_url=f"{env.model_url}/v1")
    service = OpenAIChatCompletion(ai_model_id=env.model, async_client=client)
    async with _plugin(env) as plugin:
        agent = ChatCompletionAgent(
            service=service, name="probe", instructions=PROMPT, plugins=[plugin]
        )
        response = await agent.get_response(messages=PROMPT)
        out.notes["final_text"] = str(response)[:500]


if __name__ == "__main__":
    run(main)
