"""Wiring: the low-level SDK ``Server`` around the schemas, the adapter and the backend.

The low-level ``Server`` is used (not ``MCPServer``) so every ``inputSchema`` on the
wire is exactly the JSON in :mod:`.schemas`.

Call handling, in order:

1. unknown tool name -> JSON-RPC error ``-32602`` (``INVALID_PARAMS``), raised as
   ``MCPError``; nothing is counted;
2. counters: ``calls.<tool>``, and ``alias_uses`` when an ``update_account`` call
   carries ``customer_id`` (whatever the version and the outcome: it is the signal that
   says when the old name can go);
3. validation of the raw arguments against the version's own ``inputSchema``
   (jsonschema); in version 3 a ``customer_id`` is reported loudly as an unknown,
   retired parameter;
4. the boundary: version 1's ``update_account`` (also in ``v2tool``) reads
   ``customer_id`` as the account id and silently resolves a customer id to that
   customer's primary account (the wrong-entity bug, counted as ``customer_fallbacks``);
   every other call goes through :func:`.adapter.normalise_arguments` (with the alias
   only in version 2), which counts ``alias_conflicts`` and ``cust_prefix_rejections``;
5. the handler, which sees ``account_id`` only and is the only place that reads or
   writes an account.

Steps 3 and 4 fail with a tool error result (``isError: true``) that tells the model
what to pass, never with a JSON-RPC error; ``errors.<tool>`` counts every such result.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from . import schemas
from .adapter import LEGACY_ALIASES, Rejected, is_customer_id, normalise_arguments
from .backend import Backend
from .schemas import ACCOUNT_ID, CUSTOMER_ID, UPDATE_ACCOUNT, Version

SERVER_NAME = "matrix-billing"
SERVER_VERSION = "0.1.0"

# Counter names in the backend.
ALIAS_USES = "alias_uses"
ALIAS_CONFLICTS = "alias_conflicts"
CUST_PREFIX_REJECTIONS = "cust_prefix_rejections"
CUSTOMER_FALLBACKS = "customer_fallbacks"

Handler = Callable[[Backend, Version, dict[str, Any]], dict[str, Any]]


class ToolError(Exception):
    """A handler failure the model can correct; becomes an ``isError`` result."""


def _not_found(tool: str, account_id: str) -> ToolError:
    changed = "Nothing was read." if tool == schemas.GET_ACCOUNT else "Nothing was changed."
    return ToolError(
        f"{tool}: no billing account {json.dumps(account_id)} exists. Account ids look like "
        f'"acct_8Q2R"; check the id and call again. {changed}'
    )


# --- tool handlers: (backend, version, normalised arguments) -> structuredContent


def _update_account(backend: Backend, _version: Version, args: dict[str, Any]) -> dict[str, Any]:
    account = backend.update_account(args[ACCOUNT_ID], dict(args["fields"]))
    if account is None:
        raise _not_found(UPDATE_ACCOUNT, args[ACCOUNT_ID])
    return {"account_id": account["account_id"], "fields": account["fields"]}


def _update_account_v2(backend: Backend, _version: Version, args: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, str] = {}
    for change in args["changes"]:
        if change["field"] in fields:
            raise ToolError(
                f"update_account_v2: the field {change['field']} appears more than once in "
                "changes; name each field at most once. Nothing was changed."
            )
        fields[change["field"]] = change["value"]
    problems = _problems(schemas.fields_schema(), fields)
    if problems:
        raise ToolError(
            f"update_account_v2: invalid values in changes: {'; '.join(problems)}. "
            "Nothing was changed."
        )
    account = backend.update_account(args[ACCOUNT_ID], fields)
    if account is None:
        raise _not_found(schemas.UPDATE_ACCOUNT_V2, args[ACCOUNT_ID])
    return {"account_id": account["account_id"], "fields": account["fields"]}


def _get_account(backend: Backend, _version: Version, args: dict[str, Any]) -> dict[str, Any]:
    account = backend.get_account(args[ACCOUNT_ID])
    if account is None:
        raise _not_found(schemas.GET_ACCOUNT, args[ACCOUNT_ID])
    return account


def _billing_metrics(backend: Backend, version: Version, _args: dict[str, Any]) -> dict[str, Any]:
    counters = backend.counters()
    names = schemas.tool_names(version)
    for key in counters:
        kind, _, tool = key.partition(".")
        if kind in ("calls", "errors") and tool and tool not in names:
            names.append(tool)
    return {
        "version": version,
        "calls": {tool: counters.get(f"calls.{tool}", 0) for tool in names},
        "errors": {tool: counters.get(f"errors.{tool}", 0) for tool in names},
        ALIAS_USES: counters.get(ALIAS_USES, 0),
        ALIAS_CONFLICTS: counters.get(ALIAS_CONFLICTS, 0),
        CUST_PREFIX_REJECTIONS: counters.get(CUST_PREFIX_REJECTIONS, 0),
        CUSTOMER_FALLBACKS: counters.get(CUSTOMER_FALLBACKS, 0),
    }


HANDLERS: dict[str, Handler] = {
    schemas.UPDATE_ACCOUNT: _update_account,
    schemas.UPDATE_ACCOUNT_V2: _update_account_v2,
    schemas.GET_ACCOUNT: _get_account,
    schemas.BILLING_METRICS: _billing_metrics,
}


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _problems(schema: dict[str, Any], instance: Any) -> list[str]:
    import jsonschema  # here, at the first call: a session that only lists tools never needs it

    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.path))):
        where = "/".join(str(p) for p in err.path)
        problems.append(f"{where}: {err.message}" if where else err.message)
    return problems


def _retired_alias_message(problems: list[str]) -> str:
    return (
        "Unknown parameter customer_id: update_account no longer accepts customer_id. The "
        "parameter was renamed to account_id and the deprecated alias has been retired. Pass "
        'the specific account\'s id as account_id, e.g. "account_id": "acct_8Q2R" (an '
        "account, acct_..., not a customer, cust_...). The call was rejected and nothing was "
        f"changed. Schema problems: {'; '.join(problems)}."
    )


def _legacy_account(backend: Backend, args: dict[str, Any]) -> dict[str, Any]:
    """Version 1's boundary: customer_id *is* the account id, and a customer id is
    silently resolved to that customer's primary account (the wrong-entity bug)."""
    args = dict(args)
    value = args.pop(CUSTOMER_ID)
    account_id = value
    if is_customer_id(value):
        accounts = backend.customer_accounts(value)
        if accounts:
            account_id = accounts[0]
            backend.increment(CUSTOMER_FALLBACKS)
    args[ACCOUNT_ID] = account_id
    return args


def _dispatch(
    version: Version,
    tool: dict[str, Any],
    backend: Backend,
    args: dict[str, Any],
) -> types.CallToolResult:
    name = tool["name"]
    problems = _problems(tool["inputSchema"], args)
    if problems:
        if version == "3" and name == UPDATE_ACCOUNT and CUSTOMER_ID in args:
            return _error(_retired_alias_message(problems))
        return _error(
            f"Invalid arguments for {name}: {'; '.join(problems)}. "
            "Check the tool's input schema and call again. Nothing was changed."
        )

    if name == UPDATE_ACCOUNT and version in ("1", "v2tool"):
        args = _legacy_account(backend, args)
    else:
        outcome = normalise_arguments(name, args, aliases=LEGACY_ALIASES if version == "2" else {})
        if outcome.conflict:
            backend.increment(ALIAS_CONFLICTS)
        if isinstance(outcome, Rejected):
            message = outcome.message
            if outcome.reason == "customer_id_value":
                backend.increment(CUST_PREFIX_REJECTIONS)
                accounts = backend.customer_accounts(outcome.value)
                if accounts:
                    message += (
                        f" Customer {outcome.value} holds {len(accounts)} account"
                        f"{'s' if len(accounts) > 1 else ''}: {', '.join(accounts)}; pass the "
                        "one you mean as account_id."
                    )
            return _error(message)
        args = outcome.arguments

    try:
        structured = HANDLERS[name](backend, version, args)
    except ToolError as exc:
        return _error(str(exc))
    except sqlite3.Error as exc:
        return _error(f"{name} failed in the billing store: {exc}")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(structured, ensure_ascii=False))],
        structured_content=structured,
    )


def call_tool(
    version: Version,
    tools: dict[str, dict[str, Any]],
    backend: Backend,
    name: str,
    arguments: dict[str, Any] | None,
) -> types.CallToolResult:
    """Run one tools/call; transport-independent, so tests can call it directly.

    Raises ``MCPError(INVALID_PARAMS)`` for an unknown tool name; every other
    failure is a tool error result.
    """
    tool = tools.get(name)
    if tool is None:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"Unknown tool: {name}. Available tools: {', '.join(tools)}.",
        )
    args = dict(arguments or {})
    backend.increment(f"calls.{name}")
    if name == UPDATE_ACCOUNT and CUSTOMER_ID in args:
        backend.increment(ALIAS_USES)
    result = _dispatch(version, tool, backend, args)
    if result.is_error:
        backend.increment(f"errors.{name}")
    return result


_INSTRUCTIONS: dict[str, str] = {
    "1": (
        "Billing accounts. A customer (cust_...) holds one or more accounts (acct_...). "
        "update_account identifies the account by customer_id."
    ),
    "2": (
        "Billing accounts. A customer (cust_...) holds one or more accounts (acct_...); "
        "every tool acts on one account, identified by account_id. customer_id is a "
        "deprecated alias of account_id: do not use it."
    ),
    "3": (
        "Billing accounts. A customer (cust_...) holds one or more accounts (acct_...); "
        "every tool acts on one account, identified by account_id."
    ),
    "v2tool": (
        "Billing accounts. A customer (cust_...) holds one or more accounts (acct_...). "
        "Use update_account_v2 (account_id plus a list of changes) for new calls; "
        "update_account (customer_id plus fields) remains for earlier callers."
    ),
}


def build_server(backend: Backend, *, version: Version = "2") -> Server[Any]:
    """The MCP server of one version over ``backend`` (inject a spy or fake in tests)."""
    definitions = schemas.tool_definitions(version)
    by_name = {t["name"]: t for t in definitions}

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in definitions])

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return call_tool(version, by_name, backend, params.name, params.arguments)

    def input_schema(name: str) -> dict[str, Any] | None:
        tool = by_name.get(name)
        return tool["inputSchema"] if tool else None

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=_INSTRUCTIONS[version],
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )
