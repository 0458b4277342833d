"""Driver: LiteLLM's MCP client (``litellm.mcp_client``, formerly ``experimental_mcp_client``) with ``litellm.acompletion``.

As LiteLLM's MCP docs show: an ``mcp`` ``ClientSession`` over stdio (or Streamable HTTP),
``load_mcp_tools(session, format="openai")``, ``acompletion(model=..., tools=...)`` and
``call_openai_tool`` for each call the model makes. The provider prefix of the model
(``openai/``, ``anthropic/``, ``gemini/``) picks LiteLLM's own translation of the OpenAI-format
tools; ``api_base`` is the fake endpoint.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager

import litellm
from litellm import mcp_client as experimental_mcp_client
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

MAX_TURNS = 8


@asynccontextmanager
async def _session(env: DriverEnv):
    if env.server_url:
        from mcp.client.streamable_http import streamable_http_client

        async with (
            streamable_http_client(env.server_url) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            yield session
        return
    params = StdioServerParameters(command=env.command, args=env.args)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        yield session


def _route(env: DriverEnv) -> tuple[str, str]:
    """(LiteLLM model string, api_base) for the provider."""
    if env.provider == "openai-chat":
        return f"openai/{env.model}", f"{env.model_url}/v1"
    if env.provider == "anthropic":
        return f"anthropic/{env.model}", env.model_url
    if env.provider == "gemini":
        return f"gemini/{env.model}", f"{env.model_url}/v1beta"
    raise ValueError(
        f"provider {env.provider!r}: this driver speaks openai-chat, anthropic, gemini"
    )


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in ("litellm", "mcp")}
    model, api_base = _route(env)
    async with _session(env) as session:
        await session.initialize()
        tools = await experimental_mcp_client.load_mcp_tools(session=session, format="openai")
        out.tools_seen = [t["function"]["name"] for t in tools]
        messages: list = [{"role": "user", "content": PROMPT}]
        calls = []
        for _ in range(MAX_TURNS):
            resp = await litellm.acompletion(
                model=model, messages=messages, tools=tools, api_base=api_base, api_key=FAKE_KEY
            )
            msg = resp.choices[0].message
            if not msg.tool_calls:
                out.notes["final_text"] = (msg.content or "")[:300]
                break
            messages.append(msg.model_dump())
            for tc in msg.tool_calls:
                calls.append({"name": tc.function.name, "arguments": tc.function.arguments})
                result = await experimental_mcp_client.call_openai_tool(
                    session=session, openai_tool=tc
                )
                text = json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))
                messages.append({"role": "tool", "tool_call_id": tc.id, "content": text})
        out.notes["calls"] = calls


if __name__ == "__main__":
    run(main)
