"""Read-only tools, one per kind of argument a client may mangle, each strict or lax about it.

Every call is validated against the tool's listed ``inputSchema`` (JSON Schema 2020-12, the MCP
default): an invalid call is JSON-RPC ``-32602`` naming what failed. A valid call is answered with
the arguments the handler reads (only the listed properties, keys sorted) as JSON text, so two
calls got the same answer exactly when the handler read the same values.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

SERVER_NAME = "matrix-strict"
SERVER_VERSION = "0.1.0"
READ_ONLY = {"readOnlyHint": True}


def _tool(name: str, description: str, properties: dict, required: list[str], **extra: Any) -> dict:
    schema = {"type": "object", "properties": properties, "required": required, **extra}
    return {
        "name": name,
        "description": description,
        "inputSchema": schema,
        "annotations": READ_ONLY,
    }


TOOLS = [
    _tool(
        "tags_strict",
        "Tags, as an array of strings.",
        {"tags": {"type": "array", "items": {"type": "string"}}},
        ["tags"],
    ),
    _tool(
        "tags_lax",
        "Tags, any JSON value.",
        {"tags": {"description": "Tags (any JSON value)."}},
        ["tags"],
    ),
    _tool("count_strict", "A count, as a number.", {"count": {"type": "number"}}, ["count"]),
    _tool(
        "count_lax",
        "A count, as a number or a string.",
        {"count": {"type": ["number", "string"]}},
        ["count"],
    ),
    _tool(
        "note_optional",
        "Text and an optional nullable note.",
        {"text": {"type": "string"}, "note": {"type": ["string", "null"]}},
        ["text"],
    ),
    _tool(
        "note_required",
        "Text and a nullable note that must be given.",
        {"text": {"type": "string"}, "note": {"type": ["string", "null"]}},
        ["text", "note"],
    ),
    _tool(
        "keys_open",
        "Text; other keys are accepted and not read.",
        {"text": {"type": "string"}},
        ["text"],
    ),
    _tool(
        "keys_closed",
        "Text; other keys are refused.",
        {"text": {"type": "string"}},
        ["text"],
        additionalProperties=False,
    ),
]
BY_NAME = {t["name"]: t for t in TOOLS}


@functools.cache
def _validator(name: str) -> Any:
    """The tool's validator, made at its first call: a session that only lists tools never
    imports jsonschema."""
    import jsonschema

    return jsonschema.Draft202012Validator(BY_NAME[name]["inputSchema"])


def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """One tools/call: unknown tool or invalid arguments are ``MCPError(-32602)``, else what was read."""
    if name not in BY_NAME:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")
    args = arguments or {}
    errors = sorted(_validator(name).iter_errors(args), key=lambda e: list(e.absolute_path))
    if errors:
        where = "/".join(map(str, errors[0].absolute_path)) or "(root)"
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"Invalid params for {name}: {where}: {errors[0].message}",
        )
    listed = BY_NAME[name]["inputSchema"]["properties"]
    read = {k: v for k, v in args.items() if k in listed}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(read, sort_keys=True))]
    )


def build_server() -> Server[Any]:
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in TOOLS])

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return call_tool(params.name, params.arguments)

    return Server(
        SERVER_NAME, version=SERVER_VERSION, on_list_tools=on_list_tools, on_call_tool=on_call_tool
    )
