"""Driver: the official ``mcp`` Python SDK client, under the minimal host (drivers._host).

Connects with ``mcp.Client`` (the SDK's documented high-level client, 2.x) over stdio or
Streamable HTTP, lists every page of tools, hands them to the model untouched and calls
what the model asks for with ``Client.call_tool``. Everything the SDK does on the way (its
``tools/list`` result validation, its call path) is what a recipe observes.
"""

from __future__ import annotations

import json

from mcp import Client, StdioServerParameters

from mcp_matrix.calibrate.drivers import _host
from mcp_matrix.calibrate.drivers._common import DriverEnv, DriverOutcome, installed_version, run


def _target(env: DriverEnv) -> str | StdioServerParameters:
    if env.server_url:
        return env.server_url
    return StdioServerParameters(command=env.command, args=env.args)


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["mcp"] = installed_version("mcp")
    async with Client(_target(env)) as client:
        tools: list[dict] = []
        cursor = None
        for _ in range(100):
            page = await client.list_tools(cursor=cursor)
            tools += [
                t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in page.tools
            ]
            cursor = page.next_cursor
            if not cursor:
                break
        out.tools_seen = [t["name"] for t in tools]

        async def call(name: str, args: dict) -> str:
            try:
                result = await client.call_tool(name, args)
            except Exception as exc:  # noqa: BLE001 - the SDK refusing a result is a finding per call
                out.notes.setdefault("call_errors", []).append(
                    {"tool": name, "error": str(exc)[:500], "error_type": type(exc).__name__}
                )
                return f"error: {exc}"
            return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True))

        out.notes["calls"] = await _host.converse(env, tools, call)


if __name__ == "__main__":
    run(main)
