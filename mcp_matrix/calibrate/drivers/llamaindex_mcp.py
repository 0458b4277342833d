"""Driver: LlamaIndex MCP tools (PyPI ``llama-index-tools-mcp``) with one MCP server.

As its README shows: ``McpToolSpec(BasicMCPClient(command, args=...))``, ``to_tool_list_async()``
(each MCP tool becomes a ``FunctionTool`` whose parameters are a pydantic model rebuilt from the
``inputSchema``), and a ``FunctionAgent`` on ``llama_index.llms.openai.OpenAI`` (Chat Completions)
at the fake endpoint.
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.openai import OpenAI
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

PACKAGES = ("llama-index-tools-mcp", "llama-index-core", "llama-index-llms-openai", "mcp")


def _client(env: DriverEnv) -> BasicMCPClient:
    if env.server_url:
        return BasicMCPClient(env.server_url)
    return BasicMCPClient(env.command, args=env.args)


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    tools = await McpToolSpec(_client(env)).to_tool_list_async()
    out.tools_seen = [t.metadata.name for t in tools]
    llm = OpenAI(model=env.model, api_base=f"{env.model_url}/v1", api_key=FAKE_KEY)
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt=PROMPT)
    result = await agent.run(user_msg=PROMPT, max_iterations=6)
    out.notes["final_text"] = str(result)[:500]


if __name__ == "__main__":
    run(main)
