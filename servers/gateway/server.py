"""Wiring: the low-level SDK ``Server`` around the schemas and the gateway.

The low-level ``Server`` is used (not ``MCPServer``) so every ``inputSchema`` on the
wire is exactly the JSON in :mod:`.schemas`. The transports follow
``matrix_servers.memory`` (same stdio handling, same HTTP start-up and
``MCP_MATRIX_LISTENING`` line), copied so the two servers evolve independently.

Call handling:

* unknown tool name -> JSON-RPC error ``-32602`` (``INVALID_PARAMS``), raised as
  ``MCPError``;
* rich tool -> its arguments, whole, go to :meth:`Gateway.submit`;
* raw twin -> ``payload`` must be the only argument and a string; it is parsed and
  the whole parsed object goes to :meth:`Gateway.submit`. No field is looked at,
  dropped or renamed here (the raw-twin rule, docs/design.md#a-raw-twin-for-write-tools);
* ``gateway_records`` -> arguments checked against its schema, then a read.

Every rejection is a tool error result (``isError: true``) naming the field and what
was expected, and nothing is stored.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from . import schemas
from .gateway import Gateway, Invalid
from .validation import PayloadError, describe_value, parse_payload, schema_problems

SERVER_NAME = "matrix-gateway"
SERVER_VERSION = "0.1.0"
DEFAULT_LIMIT = 100

_TWINS = {schemas.raw_name(kind): kind for kind in schemas.KINDS}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _ok(structured: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(structured, ensure_ascii=False))],
        structured_content=structured,
    )


def _twin_record(name: str, kind: str, arguments: dict[str, Any]) -> dict[str, Any] | str:
    """The record inside a twin's arguments, or the error text explaining why there is none."""
    retry = f"Nothing was stored; fix the payload and call {name} again."
    extras = [k for k in arguments if k != "payload"]
    if extras:
        listed = ", ".join(extras)
        return (
            f"{name} takes exactly one argument, payload; unknown argument(s): {listed}. "
            f"Put every {kind} field inside the payload JSON object. {retry}"
        )
    if "payload" not in arguments:
        return (
            f"{name} needs payload: the whole {kind} record serialised as one JSON string, "
            f'e.g. {{"payload": "{{\\"field\\": \\"value\\"}}"}}. {retry}'
        )
    payload = arguments["payload"]
    if not isinstance(payload, str):
        hint = (
            " Serialise the record with JSON and pass the resulting string."
            if isinstance(payload, (dict, list))
            else ""
        )
        return f"{name}: payload: expected a string, got {describe_value(payload)}.{hint} {retry}"
    try:
        return parse_payload(payload)
    except PayloadError as exc:
        return f"{name}: {exc}. {retry}"


def _submit(gateway: Gateway, name: str, kind: str, record: Any, via: str) -> types.CallToolResult:
    try:
        result = gateway.submit(kind, record, via=via)
    except sqlite3.Error as exc:
        return _error(f"{name} failed in the gateway store: {exc}. Nothing was stored.")
    if isinstance(result, Invalid):
        return _error(
            f"{name} rejected the {kind} record (schema version {gateway.version}): "
            f"{'; '.join(result.problems)}. Nothing was stored."
        )
    return _ok(result.row)


def call_tool(
    gateway: Gateway,
    tools: dict[str, dict[str, Any]],
    name: str,
    arguments: dict[str, Any] | None,
) -> types.CallToolResult:
    """Run one tools/call; transport-independent, so tests can call it directly.

    Raises ``MCPError(INVALID_PARAMS)`` for an unknown tool name; every other
    failure is a tool error result.
    """
    if name not in tools:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"Unknown tool: {name}. Available tools: {', '.join(tools)}.",
        )
    args: dict[str, Any] = arguments if arguments is not None else {}

    if name in schemas.KINDS:
        return _submit(gateway, name, name, args, schemas.VIA_RICH)

    if name in _TWINS:
        kind = _TWINS[name]
        record = _twin_record(name, kind, args)
        if isinstance(record, str):
            return _error(record)
        return _submit(gateway, name, kind, record, schemas.VIA_RAW)

    problems = schema_problems(tools[name]["inputSchema"], args, where=f"the {name} arguments")
    if problems:
        return _error(f"Invalid arguments for {name}: {'; '.join(problems)}.")
    records = gateway.records(args.get("kind"), int(args.get("limit", DEFAULT_LIMIT)))
    return _ok({"count": len(records), "records": records})


def build_server(gateway: Gateway) -> Server[Any]:
    """The MCP server in front of ``gateway`` (its version fixes the rich schemas)."""
    definitions = schemas.tool_definitions(gateway.version)
    by_name = {t["name"]: t for t in definitions}
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in definitions])

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return call_tool(gateway, by_name, params.name, params.arguments)

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = by_name.get(name)
        return tool["inputSchema"] if tool else None

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=(
            "Write gateway for memories, dispatch records and context feedback "
            f"(schema version {gateway.version}). Write through the *_raw tools: pass the "
            "whole record as one JSON string in payload; the gateway validates it and names "
            "any bad field. gateway_records reads back what was stored."
        ),
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
