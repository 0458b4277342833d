"""Driver: Google ADK (``google-adk``) with an MCP toolset and its native Gemini model.

As ADK's MCP docs show: ``McpToolset(connection_params=StdioConnectionParams(...))`` in an
``LlmAgent``, run by an ``InMemoryRunner``; the model is ADK's ``Gemini`` pointed at the fake
endpoint (``base_url``) with a fake API key. ADK's own schema conversion is what is observed.
"""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.models.google_llm import Gemini
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool import (
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from google.genai import types
from mcp import StdioServerParameters

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)


def _connection(env: DriverEnv) -> object:
    if env.server_url:
        return StreamableHTTPConnectionParams(url=env.server_url, timeout=60)
    return StdioConnectionParams(
        server_params=StdioServerParameters(command=env.command, args=env.args), timeout=60
    )


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    if env.provider != "gemini":
        raise ValueError(f"provider {env.provider!r}: this driver runs ADK's native Gemini model")
    os.environ["GOOGLE_API_KEY"] = FAKE_KEY
    os.environ.pop("GOOGLE_GENAI_USE_VERTEXAI", None)
    out.notes["packages"] = {p: installed_version(p) for p in ("google-adk", "google-genai", "mcp")}
    toolset = McpToolset(connection_params=_connection(env))
    try:
        tools = await toolset.get_tools()
        out.tools_seen = [t.name for t in tools]
        agent = LlmAgent(
            name="calibration",
            model=Gemini(model=env.model, base_url=env.model_url),
            instruction=PROMPT,
            tools=[toolset],
        )
        runner = InMemoryRunner(agent=agent, app_name="calibration")
        session = await runner.session_service.create_session(app_name="calibration", user_id="u")
        calls, texts = [], []
        message = types.Content(role="user", parts=[types.Part(text=PROMPT)])
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            for call in event.get_function_calls() or []:
                calls.append({"name": call.name, "arguments": call.args})
            if event.content and event.content.parts:
                texts += [p.text for p in event.content.parts if p.text]
        out.notes["calls"] = calls
        out.notes["final_text"] = texts[-1] if texts else None
    finally:
        await toolset.close()


if __name__ == "__main__":
    run(main)
