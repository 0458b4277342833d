"""Result behaviours: what a client does with the server's answer.

``fn(result, ctx, **params) -> Finding | None``: a finding means the client reports a
failure (or loses part of the answer) even though the server did the work.
"""

from __future__ import annotations

import json

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.validation import validation_errors
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, Finding
from mcp_matrix.core.tools import read_only


@behaviour(
    "require-structured-content",
    "result",
    params={
        "validate": {
            "type": "boolean",
            "default": True,
            "description": "also validate structuredContent against outputSchema",
        },
        "ends_run": {
            "type": "boolean",
            "default": False,
            "description": "the exception ends the agent run instead of reaching the model as an "
            "error (pydantic-ai, LangChain: observed)",
        },
    },
)
def require_structured_content(
    result: JSON, ctx: CallContext, validate: bool = True, ends_run: bool = False
) -> Finding | None:
    """A tool with an ``outputSchema`` must return valid ``structuredContent`` unless ``isError``.

    TypeScript SDK ``Client.callTool`` throws "has an output schema but did not return
    structured content" / "Structured content does not match"; the Python SDK raises
    RuntimeError likewise (docs/clients/sdks.md#typescript-sdk, docs/clients/sdks.md#python-sdk). The server did the work; the client
    reports a failure. Observed (probe set output-text, 2026-12-02): Gemini CLI, opencode,
    Continue CLI and openai-agents give the model an error, pydantic-ai and LangChain end the
    agent run; Claude Code, Codex and Qwen Code pass the text. A model told "error" may call
    again, so a tool that is not read-only may do its work twice.
    """
    if not isinstance(result, dict) or result.get("isError") is True:
        return None
    out = ctx.held_tool.get("outputSchema") if isinstance(ctx.held_tool, dict) else None
    if out is None:
        return None
    if "structuredContent" not in result or result["structuredContent"] is None:
        return Finding(
            code="missing-structured-content",
            message=f"tool {ctx.tool!r} has an outputSchema but returned no structuredContent; the client throws"
            + (
                ", and the agent run ends there (no answer reaches the model)"
                if ends_run
                else _repeat_warning(ctx)
            ),
            pointer="/result/structuredContent",
            blast_radius="session" if ends_run else "call",
        )
    if validate:
        errors = validation_errors(
            out,
            result["structuredContent"],
            "2020-12" if isinstance(out, dict) and "$defs" in out else "draft-07",
        )
        if errors:
            return Finding(
                code="invalid-structured-content",
                message="structuredContent does not match the tool's outputSchema; the client throws: "
                + errors[0].text,
                pointer="/result/structuredContent",
                blast_radius="session" if ends_run else "call",
            )
    return None


def _repeat_warning(ctx: CallContext) -> str:
    """Why a failed result of a tool that writes matters twice: the model's retry repeats the work."""
    if read_only(ctx.held_tool):
        return ""
    return " (a model that retries calls the tool again: its effect may happen twice)"


@behaviour(
    "result-size-cap",
    "result",
    params={
        "max_chars": {
            "type": "integer",
            "minimum": 1,
            "default": 100000,
            "description": "results whose text content exceeds this are refused by the client",
        }
    },
    required=("max_chars",),
)
def result_size_cap(result: JSON, ctx: CallContext, max_chars: int = 100000) -> Finding | None:
    """A result larger than the client's cap is refused (Claude Code: 25000 tokens, docs/clients/anthropic.md#claude-code).

    Its message: "exceeds maximum allowed tokens (25000)".
    """
    if not isinstance(result, dict):
        return None
    size = len(json.dumps(result.get("content", []), ensure_ascii=False))
    if size <= max_chars:
        return None
    return Finding(
        code="result-too-large",
        message=f"the result's content is {size} characters; the client's cap is {max_chars}",
        pointer="/result/content",
        blast_radius="call",
    )
