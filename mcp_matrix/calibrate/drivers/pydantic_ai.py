"""Driver: Pydantic AI (``pydantic-ai-slim``) with an MCP toolset and one model provider.

As its MCP docs show: ``MCPToolset`` (built on a FastMCP ``Client``; a ``StdioTransport`` for a
command, the URL for HTTP) in ``Agent(toolsets=[...])``, ``agent.run``; the model is
``OpenAIChatModel`` / ``OpenAIResponsesModel`` / ``AnthropicModel`` / ``GoogleModel`` with a
provider on the fake endpoint and a fake key.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)


def _toolset(env: DriverEnv) -> MCPToolset:
    if env.server_url:
        return MCPToolset(env.server_url)
    from fastmcp.client.transports import StdioTransport

    return MCPToolset(StdioTransport(command=env.command, args=env.args))


def _model(env: DriverEnv) -> object:
    if env.provider in ("openai-chat", "openai-responses"):
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = OpenAIProvider(base_url=f"{env.model_url}/v1", api_key=FAKE_KEY)
        cls = OpenAIChatModel if env.provider == "openai-chat" else OpenAIResponsesModel
        return cls(env.model, provider=provider)
    if env.provider == "anthropic":
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(
            env.model, provider=AnthropicProvider(base_url=env.model_url, api_key=FAKE_KEY)
        )
    if env.provider == "gemini":
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(
            env.model, provider=GoogleProvider(api_key=FAKE_KEY, base_url=env.model_url)
        )
    raise ValueError(f"unknown provider {env.provider!r}")


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {
        p: installed_version(p) for p in ("pydantic-ai-slim", "fastmcp-slim", "mcp")
    }
    toolset = _toolset(env)
    agent = Agent(_model(env), toolsets=[toolset], instructions=PROMPT)
    async with agent:
        tools = await toolset.list_tools()
        out.tools_seen = [t.name for t in tools]
        result = await agent.run(PROMPT)
    calls = []
    for message in result.all_messages():
        for part in getattr(message, "parts", []):
            if getattr(part, "part_kind", "") == "tool-call":
                calls.append({"name": part.tool_name, "arguments": part.args})
    out.notes["calls"] = calls
    out.notes["final_text"] = str(result.output)[:300]


if __name__ == "__main__":
    run(main)
