"""A minimal host for bare SDK clients: the tools go to the model exactly as listed.

The official SDK clients have no model loop of their own; an application built on one
passes each tool's name, description and ``inputSchema`` to its model API. This host does
that with no rewriting at all, in the provider's wire format, and runs the calls the model
asks for through the SDK, so what is observed is the SDK's own doing (its list gate, its
call path), nothing of ours. Standard library only.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_matrix.calibrate.drivers._common import FAKE_KEY, PROMPT, DriverEnv

CallFn = Callable[[str, dict], Awaitable[str]]
MAX_TURNS = 8


def _post(url: str, body: dict, headers: dict[str, str]) -> dict:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **headers},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read().decode() or "{}")


async def converse(env: DriverEnv, tools: list[dict], call: CallFn) -> list[dict]:
    """Run the model loop until a turn without tool calls; returns the calls made."""
    speak = {
        "anthropic": _anthropic,
        "openai-chat": _openai_chat,
        "openai-responses": _openai_responses,
        "gemini": _gemini,
    }.get(env.provider)
    if speak is None:
        raise ValueError(f"unknown provider {env.provider!r}")
    return await speak(env, tools, call)


async def _run_calls(calls: list[tuple[str, Any]], call: CallFn, made: list[dict]) -> list[str]:
    outputs = []
    for name, args in calls:
        made.append({"name": name, "arguments": args})
        outputs.append(await call(name, args if isinstance(args, dict) else {}))
    return outputs


def _args(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw or "{}")
        except ValueError:
            return raw
    return raw


async def _anthropic(env: DriverEnv, tools: list[dict], call: CallFn) -> list[dict]:
    url = f"{env.model_url}/v1/messages"
    headers = {"x-api-key": FAKE_KEY, "anthropic-version": "2023-06-01"}
    spec = [
        {
            "name": t["name"],
            "description": t.get("description") or "",
            "input_schema": t["inputSchema"],
        }
        for t in tools
    ]
    messages: list[dict] = [{"role": "user", "content": PROMPT}]
    made: list[dict] = []
    for _ in range(MAX_TURNS):
        body = {"model": env.model, "max_tokens": 1024, "messages": messages, "tools": spec}
        resp = await asyncio.to_thread(_post, url, body, headers)
        uses = [b for b in resp.get("content", []) if b.get("type") == "tool_use"]
        if not uses:
            return made
        outputs = await _run_calls([(u["name"], u.get("input")) for u in uses], call, made)
        messages.append({"role": "assistant", "content": resp["content"]})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": u["id"], "content": o}
                    for u, o in zip(uses, outputs)
                ],
            }
        )
    return made


async def _openai_chat(env: DriverEnv, tools: list[dict], call: CallFn) -> list[dict]:
    url = f"{env.model_url}/v1/chat/completions"
    headers = {"authorization": f"Bearer {FAKE_KEY}"}
    spec = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": t["inputSchema"],
            },
        }
        for t in tools
    ]
    messages: list[dict] = [{"role": "user", "content": PROMPT}]
    made: list[dict] = []
    for _ in range(MAX_TURNS):
        body = {"model": env.model, "messages": messages, "tools": spec}
        resp = await asyncio.to_thread(_post, url, body, headers)
        msg = (resp.get("choices") or [{}])[0].get("message") or {}
        tcs = msg.get("tool_calls") or []
        if not tcs:
            return made
        pairs = [(c["function"]["name"], _args(c["function"].get("arguments"))) for c in tcs]
        outputs = await _run_calls(pairs, call, made)
        messages.append(msg)
        for c, o in zip(tcs, outputs):
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": o})
    return made


async def _openai_responses(env: DriverEnv, tools: list[dict], call: CallFn) -> list[dict]:
    url = f"{env.model_url}/v1/responses"
    headers = {"authorization": f"Bearer {FAKE_KEY}"}
    spec = [
        {
            "type": "function",
            "name": t["name"],
            "description": t.get("description") or "",
            "parameters": t["inputSchema"],
        }
        for t in tools
    ]
    items: list[dict] = [{"role": "user", "content": PROMPT}]
    made: list[dict] = []
    for _ in range(MAX_TURNS):
        body = {"model": env.model, "input": items, "tools": spec}
        resp = await asyncio.to_thread(_post, url, body, headers)
        fcs = [o for o in resp.get("output", []) if o.get("type") == "function_call"]
        if not fcs:
            return made
        outputs = await _run_calls(
            [(f["name"], _args(f.get("arguments"))) for f in fcs], call, made
        )
        items.extend(fcs)
        for f, o in zip(fcs, outputs):
            items.append({"type": "function_call_output", "call_id": f["call_id"], "output": o})
    return made


async def _gemini(env: DriverEnv, tools: list[dict], call: CallFn) -> list[dict]:
    url = f"{env.model_url}/v1beta/models/{env.model}:generateContent"
    headers = {"x-goog-api-key": FAKE_KEY}
    spec = [
        {
            "functionDeclarations": [
                {
                    "name": t["name"],
                    "description": t.get("description") or "",
                    "parametersJsonSchema": t["inputSchema"],
                }
                for t in tools
            ]
        }
    ]
    contents: list[dict] = [{"role": "user", "parts": [{"text": PROMPT}]}]
    made: list[dict] = []
    for _ in range(MAX_TURNS):
        body = {"contents": contents, "tools": spec}
        resp = await asyncio.to_thread(_post, url, body, headers)
        parts = ((resp.get("candidates") or [{}])[0].get("content") or {}).get("parts") or []
        fcs = [p["functionCall"] for p in parts if "functionCall" in p]
        if not fcs:
            return made
        outputs = await _run_calls([(f["name"], f.get("args")) for f in fcs], call, made)
        contents.append({"role": "model", "parts": parts})
        contents.append(
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": f["name"], "response": {"result": o}}}
                    for f, o in zip(fcs, outputs)
                ],
            }
        )
    return made
