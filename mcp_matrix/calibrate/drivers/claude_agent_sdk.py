"""Driver: the Claude Agent SDK for Python (``claude-agent-sdk``) with one MCP server.

As its docs show: ``query(prompt=..., options=ClaudeAgentOptions(mcp_servers=..., allowed_tools=...))``
and read the messages to the result. The SDK starts the Claude Code binary it bundles
(``claude_agent_sdk/_bundled/claude``), which is the MCP client: this driver passes the server and
points ``ANTHROPIC_BASE_URL`` at the fake endpoint. ``ENABLE_TOOL_SEARCH=false`` as in the
claude-code recipe: by default MCP tools are deferred behind ToolSearch (names only).
"""

from __future__ import annotations

import os

from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, query

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)


def _server(env: DriverEnv) -> dict:
    if env.server_url:
        return {"type": "http", "url": env.server_url}
    return {"type": "stdio", "command": env.command, "args": env.args}


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["claude-agent-sdk"] = installed_version("claude-agent-sdk")
    stderr: list[str] = []
    options = ClaudeAgentOptions(
        mcp_servers={env.server_name: _server(env)},
        strict_mcp_config=True,
        allowed_tools=[f"mcp__{env.server_name}"],
        max_turns=4,
        model=env.model,
        env={
            **os.environ,
            "ANTHROPIC_BASE_URL": env.model_url,
            "ANTHROPIC_API_KEY": FAKE_KEY,
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "MCP_TIMEOUT": "60000",
            "ENABLE_TOOL_SEARCH": "false",
        },
        stderr=lambda line: stderr.append(line[:500]) if len(stderr) < 50 else None,
    )
    calls = []
    async for message in query(prompt=PROMPT, options=options):
        data = getattr(message, "data", None)
        if getattr(message, "subtype", None) == "init" and isinstance(data, dict):
            out.tools_seen = [t for t in data.get("tools", []) if t.startswith("mcp__")]
            out.notes["claude_code_version"] = data.get("claude_code_version")
            out.notes["mcp_servers"] = data.get("mcp_servers")
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if hasattr(block, "input") and hasattr(block, "name"):
                    calls.append({"name": block.name, "arguments": block.input})
        if isinstance(message, ResultMessage):
            out.notes["result"] = {"subtype": message.subtype, "is_error": message.is_error}
    out.notes["calls"] = calls
    if stderr:
        out.notes["stderr"] = stderr


if __name__ == "__main__":
    run(main)
