"""Driver: mcp-use (PyPI ``mcp-use``) with one MCP server.

As its README shows: ``MCPClient.from_dict({"mcpServers": {name: {command, args}}})`` (or
``{url}`` for Streamable HTTP), and ``MCPAgent(llm=ChatOpenAI(...), client=client)`` whose
``run(prompt)`` lists the tools, converts each to a LangChain tool (the ``inputSchema`` rebuilt as
a pydantic model) and runs its LangChain agent loop on Chat Completions at the fake endpoint.
"""

from __future__ import annotations

from langchain_openai import ChatOpenAI
from mcp_use import MCPAgent, MCPClient

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

PACKAGES = ("mcp-use", "langchain-core", "langchain-openai", "jsonschema-pydantic", "mcp")


def _server(env: DriverEnv) -> dict:
    if env.server_url:
        return {"url": env.server_url}
    return {"command": env.command, "args": env.args}


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    client = MCPClient.from_dict({"mcpServers": {env.server_name: _server(env)}})
    llm = ChatOpenAI(model=env.model, base_url=f"{env.model_url}/v1", api_key=FAKE_KEY)
    agent = MCPAgent(llm=llm, client=client, max_steps=30)  # as its README shows
    try:
        result = await agent.run(PROMPT)
        out.notes["final_text"] = str(result)[:500]
    finally:
        await client.close_all_sessions()


if __name__ == "__main__":
    run(main)
