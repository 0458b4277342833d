"""Driver: smolagents (PyPI ``smolagents[mcp,openai]``) with one MCP server.

As its docs show: ``ToolCollection.from_mcp(server_parameters, trust_remote_code=True)`` (MCPAdapt
turns each MCP tool into a ``smolagents.Tool``) and a ``ToolCallingAgent`` (JSON tool calls, not
code) on ``OpenAIServerModel`` (Chat Completions) at the fake endpoint. ``from_mcp`` is a
synchronous context manager (MCPAdapt runs its own event loop in a thread), so it runs off the
driver's loop.

The fake model never ends a smolagents run (it answers with the scripted calls, never
``final_answer``), so the driver bounds it: ``max_steps`` 4, the most turns a probe set's script
spans (``error-streak``: three failing calls, then the control). The other sets of the 1.26.0
record ran with 3 steps; none of them spans more than one turn.
"""

from __future__ import annotations

import asyncio

from mcp import StdioServerParameters
from smolagents import OpenAIServerModel, ToolCallingAgent, ToolCollection

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

PACKAGES = ("smolagents", "mcpadapt", "mcp", "openai")


def _server(env: DriverEnv) -> object:
    if env.server_url:
        return {"url": env.server_url, "transport": "streamable-http"}
    return StdioServerParameters(command=env.command, args=env.args)


def _run(env: DriverEnv, out: DriverOutcome) -> None:
    with ToolCollection.from_mcp(_server(env), trust_remote_code=True) as collection:
        tools = list(collection.tools)
        out.tools_seen = [t.name for t in tools]
        model = OpenAIServerModel(
            model_id=env.model, api_base=f"{env.model_url}/v1", api_key=FAKE_KEY
        )
        agent = ToolCallingAgent(tools=tools, model=model, max_steps=4, verbosity_level=0)
        result = agent.run(PROMPT)
        out.notes["final_text"] = str(result)[:500]


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    await asyncio.to_thread(_run, env, out)


if __name__ == "__main__":
    run(main)
