"""Driver: Semantic Kernel (PyPI ``semantic-kernel[mcp]``) with one MCP server.

As its samples show: ``async with MCPStdioPlugin(name, command, args=...)`` (or
``MCPStreamableHttpPlugin`` for a URL), a ``ChatCompletionAgent`` with ``plugins=[plugin]`` on
``OpenAIChatCompletion`` (Chat Completions) whose ``AsyncOpenAI`` client points at the fake endpoint.

``connect()`` is bounded (``CONNECT_BOUND``): in 1.45.0 it waits on an event its connection task
sets once the tools are loaded, so when loading a tool raises (a property schema ``true``:
``'bool' object has no attribute 'get'``) the task dies and ``connect()`` waits forever. The
driver then reports that task's exception as the run's error, so the record says why it ended.
"""

from __future__ import annotations

import asyncio
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
    describe,
    installed_version,
    run,
)

PACKAGES = ("semantic-kernel", "mcp", "openai")
CONNECT_BOUND = 30.0  # seconds; the probe server lists its tools in well under one


async def _connect(plugin: Any, out: DriverOutcome) -> bool:
    """``plugin.connect()`` within ``CONNECT_BOUND``; False (and ``out.error`` says why) when it
    does not return: the exception its connection task died with, or that it still runs."""
    try:
        await asyncio.wait_for(plugin.connect(), CONNECT_BOUND)
        return True
    except asyncio.TimeoutError:
        task = getattr(plugin, "_current_task", None)
        cause = (
            task.exception() if task is not None and task.done() and not task.cancelled() else None
        )
        if cause is None:
            out.error = f"connect() did not return in {CONNECT_BOUND:.0f} s (its task still runs)"
            out.error_type = "TimeoutError"
        else:
            message, out.error_type = describe(cause)
            out.error = f"connect() did not return in {CONNECT_BOUND:.0f} s: its connection task died: {message}"
        return False


def _plugin(env: DriverEnv) -> Any:
    if env.server_url:
        return MCPStreamableHttpPlugin(name=env.server_name, url=env.server_url)
    return MCPStdioPlugin(name=env.server_name, command=env.command, args=env.args)


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in PACKAGES}
    client = AsyncOpenAI(api_key=FAKE_KEY, base_url=f"{env.model_url}/v1")
    service = OpenAIChatCompletion(ai_model_id=env.model, async_client=client)
    plugin = _plugin(env)
    if not await _connect(plugin, out):
        return  # the dead task is not awaited again: close() would re-raise its exception
    try:
        agent = ChatCompletionAgent(
            service=service, name="probe", instructions=PROMPT, plugins=[plugin]
        )
        response = await agent.get_response(messages=PROMPT)
        out.notes["final_text"] = str(response)[:500]
    finally:
        await plugin.close()


if __name__ == "__main__":
    run(main)
