"""The fake model endpoint over real sockets: each API, streaming and not, scripted calls then text."""

from __future__ import annotations

import json

import httpx
import pytest

from mcp_matrix.calibrate.fake_model import FINAL_TEXT, FakeModel, ScriptedCall

ARGS = {
    "items": [1, 2],
    "flag": True,
    "nothing": None,
    "ratio": 1.0,
    "nested": {"a": "b"},
    "text": "[1, 2]",
}
CALLS = [ScriptedCall("echo", ARGS)]


def sse_events(text: str) -> list:
    out = []
    for block in text.split("\n\n"):
        data = [ln[5:].strip() for ln in block.splitlines() if ln.startswith("data:")]
        if data and data[0] != "[DONE]":
            out.append(json.loads("\n".join(data)))
    return out


def post(model: FakeModel, path: str, body: dict) -> httpx.Response:
    return httpx.post(model.url + path, json=body, headers={"x-api-key": model.key}, timeout=30)


ANTHROPIC = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "mcp__probe__echo", "description": "d", "input_schema": {"type": "object"}}],
}


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_messages_answers_the_scripted_call_with_its_exact_arguments(stream):
    with FakeModel(CALLS) as model:
        r = post(model, "/v1/messages", {**ANTHROPIC, "stream": stream})
        assert r.status_code == 200
        if stream:
            events = sse_events(r.text)
            start = next(e for e in events if e["type"] == "content_block_start")
            assert start["content_block"]["name"] == "mcp__probe__echo"
            delta = next(e for e in events if e["type"] == "content_block_delta")
            assert json.loads(delta["delta"]["partial_json"]) == ARGS
            assert any(
                e["type"] == "message_delta" and e["delta"]["stop_reason"] == "tool_use"
                for e in events
            )
        else:
            block = r.json()["content"][0]
            assert (block["type"], block["name"], block["input"]) == (
                "tool_use",
                "mcp__probe__echo",
                ARGS,
            )
        assert model.requests[0].body["tools"][0]["name"] == "mcp__probe__echo"
        assert model.requests[0].headers["x-api-key"] == "***"


def test_anthropic_follow_up_turn_with_a_tool_result_gets_the_final_text():
    follow = {
        **ANTHROPIC,
        "messages": ANTHROPIC["messages"]
        + [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}],
            }
        ],
    }
    with FakeModel(CALLS) as model:
        r = post(model, "/v1/messages", follow)
        assert r.json()["content"] == [{"type": "text", "text": FINAL_TEXT}]
        assert model.requests[0].answer == "text"


CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [
        {"type": "function", "function": {"name": "probe_echo", "parameters": {"type": "object"}}}
    ],
}


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions_answers_a_tool_call_whose_arguments_are_a_json_string(stream):
    with FakeModel(CALLS) as model:
        r = post(model, "/v1/chat/completions", {**CHAT, "stream": stream})
        if stream:
            events = sse_events(r.text)
            calls = [
                tc for e in events for c in e["choices"] for tc in c["delta"].get("tool_calls", [])
            ]
            assert calls[0]["function"]["name"] == "probe_echo"
            assert json.loads(calls[0]["function"]["arguments"]) == ARGS
            assert r.text.rstrip().endswith("data: [DONE]")
        else:
            msg = r.json()["choices"][0]["message"]
            assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == ARGS
        follow = {
            **CHAT,
            "messages": CHAT["messages"] + [{"role": "tool", "tool_call_id": "x", "content": "ok"}],
        }
        r2 = post(model, "/v1/chat/completions", follow)
        assert r2.json()["choices"][0]["message"]["content"] == FINAL_TEXT


RESPONSES = {
    "model": "m",
    "input": [{"role": "user", "content": "hi"}],
    "tools": [
        {
            "type": "namespace",
            "name": "mcp__probe__",
            "tools": [{"type": "function", "name": "echo", "parameters": {"type": "object"}}],
        }
    ],
}


@pytest.mark.parametrize("stream", [False, True])
def test_responses_calls_a_tool_inside_a_namespace_by_its_plain_name(stream):
    with FakeModel(CALLS) as model:
        r = post(model, "/v1/responses", {**RESPONSES, "stream": stream})
        if stream:
            events = sse_events(r.text)
            done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
            assert events[-1]["type"] == "response.completed"
        else:
            done = r.json()["output"]
        assert (done[0]["name"], done[0]["namespace"]) == ("echo", "mcp__probe__")
        assert json.loads(done[0]["arguments"]) == ARGS
        follow = {
            **RESPONSES,
            "input": RESPONSES["input"]
            + [{"type": "function_call_output", "call_id": "x", "output": "ok"}],
        }
        out = post(model, "/v1/responses", follow).json()["output"]
        assert out[0]["content"][0]["text"] == FINAL_TEXT


GEMINI = {
    "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    "tools": [
        {
            "functionDeclarations": [
                {"name": "probe__echo", "parametersJsonSchema": {"type": "object"}}
            ]
        }
    ],
}


@pytest.mark.parametrize(
    "path", [":generateContent", ":streamGenerateContent?alt=sse", ":streamGenerateContent"]
)
def test_gemini_answers_a_function_call_in_each_of_its_three_forms(path):
    with FakeModel(CALLS) as model:
        r = post(model, "/v1beta/models/gemini-x" + path, GEMINI)
        if "alt=sse" in path:
            doc = sse_events(r.text)[0]
        elif "stream" in path:
            doc = r.json()[0]
        else:
            doc = r.json()
        call = doc["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert (call["name"], call["args"]) == ("probe__echo", ARGS)
        assert model.requests[0].stream is ("stream" in path)


def test_a_request_without_tools_is_a_side_request_and_gets_text():
    with FakeModel(CALLS) as model:
        r = post(
            model,
            "/v1/messages",
            {"model": "m", "messages": [{"role": "user", "content": "title?"}]},
        )
        assert r.json()["content"][0]["text"] == FINAL_TEXT


def test_model_listings_and_unknown_endpoints_answer_without_crashing():
    with FakeModel(CALLS) as model:
        key = {"authorization": f"Bearer {model.key}"}
        assert httpx.get(model.url + "/v1/models", headers=key, timeout=10).json()["data"][0]["id"]
        assert httpx.get(model.url + f"/v1beta/models?key={model.key}", timeout=10).json()["models"]
        assert (
            httpx.post(model.url + "/nowhere", json={}, headers=key, timeout=10).status_code == 404
        )


def test_offered_tools_reports_the_richest_request():
    with FakeModel(CALLS) as model:
        post(model, "/v1/messages", {"model": "m", "messages": []})
        post(model, "/v1/messages", ANTHROPIC)
        api, tools = model.offered_tools()
        assert api == "anthropic" and [t.name for t in tools] == ["mcp__probe__echo"]


SEARCH_TOOL = {
    "name": "ToolSearch",
    "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
}


def test_deferred_tools_are_loaded_with_one_tool_search_before_the_scripted_calls():
    first = {
        "model": "m",
        "tools": [SEARCH_TOOL],
        "system": [{"type": "text", "text": "Deferred tools:\nmcp__probe__echo\nmcp__other__x\n"}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    with FakeModel(CALLS) as model:
        block = post(model, "/v1/messages", first).json()["content"][0]
        assert (block["name"], block["input"]["query"]) == ("ToolSearch", "select:mcp__probe__echo")
        loaded = {
            **first,
            "tools": [SEARCH_TOOL, ANTHROPIC["tools"][0]],
            "messages": first["messages"]
            + [
                {"role": "assistant", "content": [block]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": block["id"],
                            "content": [
                                {"type": "tool_reference", "tool_name": "mcp__probe__echo"}
                            ],
                        }
                    ],
                },
            ],
        }
        call = post(model, "/v1/messages", loaded).json()["content"][0]
        assert (call["name"], call["input"]) == ("mcp__probe__echo", ARGS)
        done = {
            **loaded,
            "messages": loaded["messages"]
            + [
                {"role": "assistant", "content": [call]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": call["id"], "content": "ok"}
                    ],
                },
            ],
        }
        assert post(model, "/v1/messages", done).json()["content"][0]["text"] == FINAL_TEXT


@pytest.mark.parametrize(
    "headers", [{}, {"x-api-key": "sk-forged"}, {"authorization": "Bearer sk-forged"}]
)
def test_a_request_without_the_runs_key_is_refused_and_kept_apart(headers):
    with FakeModel(CALLS) as model:
        forged = httpx.post(model.url + "/v1/messages", json=ANTHROPIC, headers=headers, timeout=30)
        assert forged.status_code == 401
        assert httpx.get(model.url + "/v1/models", headers=headers, timeout=30).status_code == 401
        assert post(model, "/v1/messages", ANTHROPIC).status_code == 200  # the client's own
        assert [r.answer for r in model.requests] == ["tool-calls"]
        assert [(r["method"], r["answer"]) for r in model.refused_json()] == [
            ("POST", "refused"),
            ("GET", "refused"),
        ]
        assert "sk-forged" not in json.dumps(model.refused_json())


def test_a_gzip_body_is_capped_while_it_is_decompressed():
    """256 MiB of zeros in about 256 KB of gzip: refused at the 64 MiB cap, never inflated
    (at acad0d4 the whole body was decompressed, then recorded)."""
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    body = b"".join(packer.compress(zeros) for _ in range(256)) + packer.flush()
    assert len(body) < 1 << 20
    with FakeModel(CALLS) as model:
        r = httpx.post(
            model.url + "/v1/messages",
            content=body,
            headers={"x-api-key": model.key, "content-encoding": "gzip"},
            timeout=60,
        )
        assert r.status_code == 413 and "decompressed" in r.text
        assert model.requests == []
        small = zlib.compressobj(9, zlib.DEFLATED, 31)
        ok = small.compress(json.dumps(ANTHROPIC).encode()) + small.flush()
        r = httpx.post(
            model.url + "/v1/messages",
            content=ok,
            headers={"x-api-key": model.key, "content-encoding": "gzip"},
            timeout=60,
        )
        assert r.status_code == 200 and model.requests[0].body["model"] == "m"
