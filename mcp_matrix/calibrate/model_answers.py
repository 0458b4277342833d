"""The fake model's answers in the four wire formats, streamed (SSE) or not: the planned tool
calls (each ``(ScriptedCall, ModelTool, call id)``), or the final text when there are none.

Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and Gemini, each shaped as the
provider answers (``ANSWERS``, by the API ``model_requests.api_of`` names); written through the
HTTP handler of ``mcp_matrix.calibrate.model_http`` (an ``AnswerStream``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Protocol

from mcp_matrix.calibrate.model_requests import SEARCH_ID
from mcp_matrix.core.jsontypes import JSON


class AnswerStream(Protocol):
    """Where an answer is written: a JSON document, or server-sent events."""

    path: str

    def _json(self, status: int, doc: object) -> None: ...

    def start_sse(self) -> None: ...

    def event(self, data: object, name: str | None = None) -> None: ...


USAGE_ANTHROPIC = {
    "input_tokens": 10,
    "output_tokens": 5,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


def _anthropic(h: AnswerStream, stream: bool, model: str, calls: list, final: str) -> None:
    msg_id = f"msg_{uuid.uuid4().hex[:20]}"
    blocks = [
        {
            "type": "tool_use",
            "id": (c.id + cid[5:]) if c.id == SEARCH_ID else cid.replace("call_", "toolu_"),
            "name": t.call_name,
            "input": c.arguments,
        }
        for c, t, cid in calls
    ]
    if not blocks:
        blocks = [{"type": "text", "text": final}]
    stop = "tool_use" if calls else "end_turn"
    message = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": USAGE_ANTHROPIC,
    }
    if not stream:
        h._json(200, message)
        return
    h.start_sse()
    h.event(
        {
            "type": "message_start",
            "message": {
                **message,
                "content": [],
                "stop_reason": None,
                "usage": {**USAGE_ANTHROPIC, "output_tokens": 1},
            },
        },
        "message_start",
    )
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            h.event(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
            h.event(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "text_delta", "text": b["text"]},
                },
                "content_block_delta",
            )
        else:
            h.event(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {
                        "type": "tool_use",
                        "id": b["id"],
                        "name": b["name"],
                        "input": {},
                    },
                },
                "content_block_start",
            )
            h.event(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])},
                },
                "content_block_delta",
            )
        h.event({"type": "content_block_stop", "index": i}, "content_block_stop")
    h.event(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        "message_delta",
    )
    h.event({"type": "message_stop"}, "message_stop")


def _chat(h: AnswerStream, stream: bool, model: str, calls: list, final: str) -> None:
    cid0 = f"chatcmpl-{uuid.uuid4().hex[:20]}"
    created = int(time.time())
    tool_calls = [
        {
            "id": cid,
            "type": "function",
            "function": {"name": t.call_name, "arguments": json.dumps(c.arguments)},
        }
        for c, t, cid in calls
    ]
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not stream:
        message: dict = {"role": "assistant", "content": None if calls else final}
        if tool_calls:
            message["tool_calls"] = tool_calls
        h._json(
            200,
            {
                "id": cid0,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            },
        )
        return
    h.start_sse()

    def chunk(delta: dict, finish_reason: str | None = None, **extra: JSON) -> dict:
        return {
            "id": cid0,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            **extra,
        }

    h.event(chunk({"role": "assistant", "content": ""}))
    if calls:
        for i, tc in enumerate(tool_calls):
            h.event(chunk({"tool_calls": [{"index": i, **tc}]}))
    else:
        h.event(chunk({"content": final}))
    h.event(chunk({}, finish))
    h.event(
        {
            "id": cid0,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
    )
    h.event("[DONE]")


def _responses(h: AnswerStream, stream: bool, model: str, calls: list, final: str) -> None:
    rid = f"resp_{uuid.uuid4().hex[:20]}"
    output = []
    for c, t, cid in calls:
        item = {
            "type": "function_call",
            "id": f"fc_{cid}",
            "call_id": cid,
            "name": t.call_name,
            "arguments": json.dumps(c.arguments),
            "status": "completed",
        }
        if t.namespace:
            item["namespace"] = t.namespace
        output.append(item)
    if not calls:
        output.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:12]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": final, "annotations": []}],
            }
        )
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    response = {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": None,
    }
    if not stream:
        h._json(200, response)
        return
    h.start_sse()
    seq = iter(range(10_000))
    h.event(
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": {**response, "status": "in_progress", "output": []},
        },
        "response.created",
    )
    for i, item in enumerate(output):
        h.event(
            {
                "type": "response.output_item.added",
                "sequence_number": next(seq),
                "output_index": i,
                "item": {**item, "status": "in_progress"},
            },
            "response.output_item.added",
        )
        if item["type"] == "function_call":
            h.event(
                {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item_id": item["id"],
                    "delta": item["arguments"],
                },
                "response.function_call_arguments.delta",
            )
            h.event(
                {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item_id": item["id"],
                    "arguments": item["arguments"],
                },
                "response.function_call_arguments.done",
            )
        else:
            h.event(
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item_id": item["id"],
                    "content_index": 0,
                    "delta": final,
                },
                "response.output_text.delta",
            )
        h.event(
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": i,
                "item": item,
            },
            "response.output_item.done",
        )
    h.event(
        {"type": "response.completed", "sequence_number": next(seq), "response": response},
        "response.completed",
    )


def _gemini(h: AnswerStream, stream: bool, model: str, calls: list, final: str) -> None:
    parts: list[dict[str, object]] = [
        {"functionCall": {"name": t.call_name, "args": c.arguments, "id": cid}}
        for c, t, cid in calls
    ]
    if not parts:
        parts = [{"text": final}]
    doc = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
        "responseId": uuid.uuid4().hex[:16],
    }
    if not stream:
        h._json(200, doc)
        return
    if "alt=sse" not in h.path:
        h._json(200, [doc])  # the JSON-array form of streamGenerateContent
        return
    h.start_sse()
    h.event(doc)


ANSWERS: dict[str, Callable[[AnswerStream, bool, str, list, str], None]] = {
    "anthropic": _anthropic,
    "openai-chat": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
}
