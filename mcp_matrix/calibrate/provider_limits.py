"""What the real model APIs refuse in a request's tools, answered as each provider answers it.

Why: a client that sends its model a tool the provider refuses gets an HTTP 400 on that
request, and usually on every later one, since each request carries every tool. The fake
endpoint (``mcp_matrix.calibrate.fake_model``) accepts anything unless a probe set asks it to
enforce these limits (``ProbeSet.provider_limits``); then it answers such a request as the
provider does, so calibration sees what the client's user sees (a retry, a dropped tool, a
session that fails every turn). Each limit cites the provider's documentation; the error
texts are the providers' own, as users quoted them in the issues cited next to each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcp_matrix.core.jsontypes import JSON

ENFORCED = "provider limit enforced by the fake endpoint (doc evidence)"

ANTHROPIC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
ANTHROPIC_KEY = re.compile(r"[a-zA-Z0-9_.-]{1,64}")
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]+")
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
OPENAI_MAX_NAME = 64  # Chat Completions
RESPONSES_MAX_NAME = 128  # Responses (raised from 64; openai/codex#46188)
OPENAI_MAX_TOOLS = 128
# The fields of Gemini's Schema (https://ai.google.dev/api/caching#Schema), the OpenAPI subset a
# function declaration's `parameters` takes, in the API's camelCase and proto snake_case forms.
GEMINI_SCHEMA_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
        "max_items",
        "min_items",
        "min_properties",
        "max_properties",
        "min_length",
        "max_length",
        "any_of",
        "property_ordering",
    }
)
TOOL_REFERENCE_MAX = 64


@dataclass(frozen=True)
class Limit:
    """One documented provider limit: which API, what it refuses, where it is written."""

    api: str
    rule: str
    source: str  # the provider's documentation
    issue: str  # where users quoted the API's answer (the error text used here)


LIMITS = {
    "anthropic-tool-name": Limit(
        "anthropic",
        "a tool name matches ^[a-zA-Z0-9_-]{1,128}$ (the page still says 64; the API's own "
        "error text says 128 since 2025-06)",
        "https://docs.anthropic.com/en/api/messages",
        "https://github.com/github/copilot-cli/issues/1879",
    ),
    "anthropic-root-combinator": Limit(
        "anthropic",
        "input_schema has no oneOf, allOf or anyOf at its top level",
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use",
        "https://github.com/anthropics/claude-code/issues/4886",
    ),
    "anthropic-property-key": Limit(
        "anthropic",
        "every key of input_schema.properties matches ^[a-zA-Z0-9_.-]{1,64}$",
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use",
        "https://github.com/anthropics/claude-code/issues/34771",
    ),
    "anthropic-tool-reference": Limit(
        "anthropic",
        "a tool_reference block's tool_name (a tool search result) is at most 64 characters",
        "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool",
        "https://github.com/anthropics/claude-code/issues/22327",
    ),
    "openai-function-name": Limit(
        "openai",
        "a function name matches ^[a-zA-Z0-9_-]+$ and is at most 64 characters",
        "https://platform.openai.com/docs/api-reference/chat/create",
        "https://github.com/ravitemer/mcphub.nvim/pull/243",
    ),
    "openai-responses-function-name": Limit(
        "openai",
        "a Responses function name matches ^[a-zA-Z0-9_-]+$ and is at most 128 characters (64 "
        "until 2026; Codex raised its own limit to 128 'to match the OpenAI Responses API')",
        "https://platform.openai.com/docs/api-reference/responses/create",
        "https://github.com/openai/codex/issues/46188",
    ),
    "openai-tool-count": Limit(
        "openai",
        "at most 128 tools per request",
        "https://platform.openai.com/docs/api-reference/chat/create",
        "https://github.com/vishalmysore/Tools4AI/issues/16",
    ),
    "gemini-function-name": Limit(
        "gemini",
        "a function name starts with a letter or '_', holds only a-z A-Z 0-9 _ . : - and is at "
        "most 64 characters",
        "https://ai.google.dev/api/caching#FunctionDeclaration",
        "https://github.com/kaitranntt/ccs/issues/25",
    ),
    "gemini-schema-field": Limit(
        "gemini",
        "a function declaration's parameters (not parametersJsonSchema) hold only the fields of "
        "Gemini's Schema, at every level: no additionalProperties, $schema, $ref, const, oneOf ...",
        "https://ai.google.dev/api/caching#Schema",
        "https://github.com/google/adk-python/issues/1277",
    ),
}


@dataclass(frozen=True)
class Refusal:
    """The provider's answer to a request it refuses: status, body, and the limit behind it."""

    status: int
    body: dict
    limit_id: str
    message: str

    def to_json(self) -> dict:
        limit = LIMITS[self.limit_id]
        return {
            "limit": self.limit_id,
            "status": self.status,
            "message": self.message,
            "rule": limit.rule,
            "source": limit.source,
            "issue": limit.issue,
            "evidence": ENFORCED,
        }


def refusal(api: str, body: JSON) -> Refusal | None:
    """The provider's refusal of ``body`` (a request to ``api``), or None when it accepts it."""
    if not isinstance(body, dict):
        return None
    check = {
        "anthropic": _anthropic,
        "openai-chat": _openai_chat,
        "openai-responses": _openai_responses,
        "gemini": _gemini,
    }.get(api)
    return check(body) if check else None


def _anthropic_error(limit_id: str, message: str) -> Refusal:
    # https://docs.anthropic.com/en/api/errors: {"type": "error", "error": {"type", "message"}}
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return Refusal(400, body, limit_id, message)


def _anthropic(body: dict) -> Refusal | None:
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or tool.get("type") not in (None, "custom"):
            continue  # server tools (web search, tool search) are the provider's own
        where = f"tools.{i}.custom"
        name = tool.get("name")
        if not (isinstance(name, str) and ANTHROPIC_NAME.fullmatch(name)):
            return _anthropic_error(
                "anthropic-tool-name",
                f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'",
            )
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            continue
        if any(k in schema for k in ("oneOf", "allOf", "anyOf")):
            return _anthropic_error(
                "anthropic-root-combinator",
                f"{where}.input_schema: input_schema does not support oneOf, allOf, or anyOf "
                "at the top level",
            )
        props = schema.get("properties")
        if isinstance(props, dict) and not all(ANTHROPIC_KEY.fullmatch(k) for k in props):
            return _anthropic_error(
                "anthropic-property-key",
                f"{where}.input_schema.properties: Property keys should match pattern "
                "'^[a-zA-Z0-9_.-]{1,64}'",
            )
    return _tool_references(body)


def _tool_references(body: dict) -> Refusal | None:
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for c, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            for k, ref in enumerate(inner if isinstance(inner, list) else []):
                name = ref.get("tool_name") if isinstance(ref, dict) else None
                if isinstance(name, str) and len(name) > TOOL_REFERENCE_MAX:
                    return _anthropic_error(
                        "anthropic-tool-reference",
                        f"messages.{m}.content.{c}.tool_result.content.{k}.tool_reference."
                        "tool_name: String should have at most 64 characters",
                    )
    return None


def _openai_error(limit_id: str, message: str, param: str, code: str) -> Refusal:
    # https://platform.openai.com/docs/guides/error-codes: {"error": {message, type, param, code}}
    body = {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }
    return Refusal(400, body, limit_id, message)


def _openai_names(
    names: list[tuple[str, JSON]],
    count: int,
    longest: int = OPENAI_MAX_NAME,
    limit_id: str = "openai-function-name",
) -> Refusal | None:
    if count > OPENAI_MAX_TOOLS:
        return _openai_error(
            "openai-tool-count",
            "Invalid 'tools': array too long. Expected an array with maximum length "
            f"{OPENAI_MAX_TOOLS}, but got an array with length {count} instead.",
            "tools",
            "array_above_max_length",
        )
    for param, name in names:
        if not isinstance(name, str) or not OPENAI_NAME.fullmatch(name):
            return _openai_error(
                limit_id,
                f"Invalid '{param}': string does not match pattern. Expected a string that "
                "matches the pattern '^[a-zA-Z0-9_-]+$'.",
                param,
                "invalid_value",
            )
        if len(name) > longest:
            return _openai_error(
                limit_id,
                f"Invalid '{param}': string too long. Expected a string with maximum length "
                f"{longest}, but got a string with length {len(name)} instead.",
                param,
                "string_above_max_length",
            )
    return None


def _openai_chat(body: dict) -> Refusal | None:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    names = [
        (f"tools[{i}].function.name", t["function"].get("name"))
        for i, t in enumerate(tools)
        if t.get("type") == "function" and isinstance(t.get("function"), dict)
    ]
    return _openai_names(names, len(tools))


def _openai_responses(body: dict) -> Refusal | None:
    """Top-level function tools only: no limit for a namespace's tools is documented (Codex
    holds namespace + name to the same 128, its own choice)."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    names = [
        (f"tools[{i}].name", t.get("name"))
        for i, t in enumerate(tools)
        if t.get("type") == "function"
    ]
    return _openai_names(names, len(tools), RESPONSES_MAX_NAME, "openai-responses-function-name")


def _gemini(body: dict) -> Refusal | None:
    unknown: list[str] = []
    for t, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict):
            continue
        for key in ("functionDeclarations", "function_declarations"):
            for j, decl in enumerate(tool.get(key) or []):
                name = decl.get("name") if isinstance(decl, dict) else None
                if isinstance(name, str) and GEMINI_NAME.fullmatch(name):
                    where = f"tools[{t}].function_declarations[{j}].parameters"
                    unknown += _gemini_unknown_fields(decl.get("parameters"), where)
                    continue
                # https://ai.google.dev/gemini-api/docs/troubleshooting: {"error": {code, message, status}}
                message = (
                    f"* GenerateContentRequest.tools[{t}].function_declarations[{j}].name: "
                    "Invalid function name. Must start with a letter or an underscore. Must be "
                    "alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or "
                    "dashes (-), with a maximum length of 64.\n"
                )
                body = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
                return Refusal(400, body, "gemini-function-name", message)
    if not unknown:
        return None
    message = "\n".join(unknown)  # the API lists every violation, one a line
    body = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return Refusal(400, body, "gemini-schema-field", message)


def _gemini_unknown_fields(schema: JSON, where: str) -> list[str]:
    """Gemini's 'Unknown name' line for every field of ``schema`` its Schema does not have,
    walking properties, items and anyOf as the API names them (at most 50 lines)."""
    out: list[str] = []
    todo = [(schema, where)]
    while todo and len(out) < 50:
        node, path = todo.pop(0)
        if not isinstance(node, dict):
            continue
        out += [
            f"Invalid JSON payload received. Unknown name \"{k}\" at '{path}': Cannot find field."
            for k in node
            if k not in GEMINI_SCHEMA_FIELDS
        ]
        props = node.get("properties")
        if isinstance(props, dict):
            todo += [(v, f"{path}.properties[{i}].value") for i, v in enumerate(props.values())]
        todo.append((node.get("items"), f"{path}.items"))
        variants = node.get("anyOf", node.get("any_of"))
        if isinstance(variants, list):
            todo += [(v, f"{path}.any_of[{i}]") for i, v in enumerate(variants)]
    return out[:50]
