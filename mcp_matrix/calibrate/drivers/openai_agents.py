"""Driver: the OpenAI Agents SDK for Python (``openai-agents``) with one MCP server.

As its docs show: ``MCPServerStdio`` (or ``MCPServerStreamableHttp``) in ``Agent(mcp_servers=...)``,
``Runner.run``; the model is an ``AsyncOpenAI`` client on the fake endpoint, over Chat
Completions or Responses. Option ``strict`` sets ``mcp_config={"convert_schemas_to_strict": True}``.
Tracing is off (it would upload to OpenAI).
"""

from __future__ import annotations

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from openai import AsyncOpenAI

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)


def _server(env: DriverEnv) -> MCPServerStreamableHttp | MCPServerStdio:
    if env.server_url:
        return MCPServerStreamableHttp(params={"url": env.server_url}, name=env.server_name)
    return MCPServerStdio(
        params={"command": env.command, "args": env.args},
        name=env.server_name,
        client_session_timeout_seconds=60,
    )


def _model(env: DriverEnv) -> object:
    client = AsyncOpenAI(base_url=f"{env.model_url}/v1", api_key=FAKE_KEY)
    if env.provider == "openai-chat":
        return OpenAIChatCompletionsModel(model=env.model, openai_client=client)
    if env.provider == "openai-responses":
        return OpenAIResponsesModel(model=env.model, openai_client=client)
    raise ValueError(f"provider {env.provider!r}: this driver speaks OpenAI only")


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    set_tracing_disabled(True)
    strict = bool(env.options.get("strict"))
    out.notes.update(
        {
            "openai-agents": installed_version("openai-agents"),
            "mcp": installed_version("mcp"),
            "strict": strict,
        }
    )
    async with _server(env) as server:
        agent = Agent(
            name="calibration",
            instructions=PROMPT,
            model=_model(env),
            mcp_servers=[server],
            mcp_config={"convert_schemas_to_strict": strict},
        )
        tools = await agent.get_all_tools(_run_context())
        out.tools_seen = [t.name for t in tools]
        out.notes["strict_tools"] = [
            t.name for t in tools if getattr(t, "strict_json_schema", False)
        ]
        result = await Runner.run(agent, PROMPT, max_turns=8)
        out.notes["final_text"] = str(result.final_output)[:500]


def _run_context() -> object:
    from agents.run_context import RunContextWrapper

    return RunContextWrapper(context=None)


if __name__ == "__main__":
    run(main)
