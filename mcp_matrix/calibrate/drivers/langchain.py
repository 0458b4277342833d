"""Driver: LangChain MCP adapters (``langchain-mcp-adapters``) with one chat-model provider.

As the adapters' README shows: ``MultiServerMCPClient({...}).get_tools()`` and a LangGraph
ReAct agent (``create_react_agent``) over the chosen chat model: ``ChatOpenAI`` (Chat
Completions, or the Responses API), ``ChatAnthropic`` or ``ChatGoogleGenerativeAI``, each
pointed at the fake endpoint with a fake key. The provider's own tool conversion is part of
what is observed.
"""

from __future__ import annotations

from langchain_mcp_adapters.client import MultiServerMCPClient
from langgraph.prebuilt import create_react_agent

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)

PACKAGES = (
    "langchain-mcp-adapters",
    "langchain-core",
    "langgraph",
    "langchain-openai",
    "langchain-anthropic",
    "langchain-google-genai",
    "mcp",
)


def _connection(env: DriverEnv) -> dict:
    if env.server_url:
        return {"transport": "streamable_http", "url": env.server_url}
    return {"transport": "stdio", "command": env.command, "args": env.args}


def _chat_model(env: DriverEnv) -> object:
    if env.provider in ("openai-chat", "openai-responses"):
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(
            model=env.model,
            base_url=f"{env.model_url}/v1",
            api_key=FAKE_KEY,
            use_responses_api=env.provider == "openai-responses",
        )
    if env.provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=env.model, base_url=env.model_url, api_key=FAKE_KEY)
    if env.provider == "gemini":
        from langchain_google_genai import ChatGoogleGenerativeAI

        return ChatGoogleGenerativeAI(
            model=env.model, google_api_key=FAKE_KEY, base_url=env.model_url
        )
    raise ValueError(f"unknown provider {env.provider!r}")


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    client = MultiServerMCPClient({env.server_name: _connection(env)})
    tools = await client.get_tools()
    out.tools_seen = [t.name for t in tools]
    agent = create_react_agent(_chat_model(env), tools)
    result = await agent.ainvoke({"messages": [("user", PROMPT)]}, {"recursion_limit": 20})
    messages = result.get("messages", [])
    out.notes["calls"] = [
        {"name": c["name"], "arguments": c["args"]}
        for m in messages
        for c in (getattr(m, "tool_calls", None) or [])
    ]
    out.notes["tool_errors"] = [
        {"name": m.name, "content": str(m.content)[:300]}
        for m in messages
        if getattr(m, "type", "") == "tool" and getattr(m, "status", "") == "error"
    ]
    out.notes["final_text"] = str(messages[-1].content)[:300] if messages else None


if __name__ == "__main__":
    run(main)
