"""Run inside fast-agent 0.10's venv: one agent on two servers, the second serving a tool whose
inputSchema has no type. Prints one JSON line: the tools the agent listed, or the error raised.

Standard library and fast_agent only (argv: the probe server's Python, the two tool files).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile

from fast_agent import FastAgent


def main() -> None:
    python, good, bad = sys.argv[1:4]

    def server(path: str) -> dict:
        return {"command": python, "args": ["-m", "matrix_servers.probe", "--tools", path]}

    config = {
        "mcp": {"servers": {"good": server(good), "bad": server(bad)}},
        "openai": {"api_key": "sk-unused", "base_url": "http://127.0.0.1:9/v1"},
        "logger": {"level": "error", "progress_display": False, "show_chat": False},
    }
    folder = tempfile.mkdtemp(prefix="fast-agent-two-")
    path = os.path.join(folder, "fastagent.config.yaml")
    with open(path, "w") as fh:
        fh.write(json.dumps(config))
    os.chdir(folder)
    fast = FastAgent("two-servers", config_path=path, parse_cli_args=False)

    @fast.agent(name="two", instruction="x", servers=["good", "bad"], model="openai.gpt-4o")
    async def _agent() -> None:
        return None

    async def run() -> dict:
        try:
            async with fast.run() as app:
                listed = await app.two.list_tools()
                return {"tools": [t.name for t in listed.tools]}
        except Exception as exc:  # noqa: BLE001 - the finding: whatever ends the run
            return {"error_type": type(exc).__name__, "error": str(exc)[:500]}

    print(json.dumps(asyncio.run(run())))


if __name__ == "__main__":
    main()
