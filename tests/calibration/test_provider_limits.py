"""The fake endpoint answers as the provider does when a probe set enforces the providers'
documented limits (mcp_matrix/calibrate/provider_limits.py), and follows multi-turn scripts."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from mcp_matrix.calibrate.fake_model import FakeModel, ScriptedCall
from mcp_matrix.calibrate.model_requests import tool_turn, tools_off
from mcp_matrix.calibrate.provider_limits import ENFORCED, LIMITS, refusal


def chat(*names: str) -> dict:
    tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}


def anthropic(*names: str, schema: dict | None = None) -> dict:
    tools = [{"name": n, "input_schema": schema or {"type": "object"}} for n in names]
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": tools}


def test_every_limit_cites_the_providers_documentation():
    for limit in LIMITS.values():
        assert limit.source.startswith("https://") and limit.issue.startswith("https://")


def test_openai_refuses_a_dotted_name_and_a_name_over_64_as_its_api_does():
    dotted = refusal("openai-chat", chat("ok", "probe.dotted"))
    assert dotted.status == 400 and dotted.body["error"]["code"] == "invalid_value"
    assert dotted.body["error"]["param"] == "tools[1].function.name"
    long = refusal("openai-chat", chat("x" * 69))
    assert "maximum length 64, but got a string with length 69" in long.message
    assert long.body["error"]["code"] == "string_above_max_length"
    assert refusal("openai-chat", chat("ok", "x" * 64)) is None
    many = refusal("openai-chat", chat(*[f"t{i}" for i in range(129)]))
    assert many.body["error"]["code"] == "array_above_max_length"


def test_anthropic_takes_128_character_names_and_refuses_longer_dotted_and_combinators():
    assert refusal("anthropic", anthropic("x" * 128)) is None
    assert refusal("anthropic", anthropic("x" * 129)).limit_id == "anthropic-tool-name"
    assert refusal("anthropic", anthropic("a.b")).body["error"]["type"] == "invalid_request_error"
    root = refusal("anthropic", anthropic("t", schema={"type": "object", "anyOf": [{}]}))
    assert "at the top level" in root.message
    key = {"type": "object", "properties": {"bad key!": {}}}
    assert refusal("anthropic", anthropic("t", schema=key)).limit_id == "anthropic-property-key"


def test_anthropic_refuses_a_tool_reference_over_64_characters():
    body = anthropic("t")
    ref = {"type": "tool_reference", "tool_name": "mcp__p__" + "x" * 60}
    body["messages"].append(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s", "content": [ref]}]}
    )
    out = refusal("anthropic", body)
    assert out.limit_id == "anthropic-tool-reference"
    assert "tool_reference.tool_name: String should have at most 64 characters" in out.message


def test_gemini_refuses_a_name_starting_with_a_digit_and_keeps_dots():
    def gemini(name: str) -> dict:
        return {"tools": [{"functionDeclarations": [{"name": name}]}]}

    assert refusal("gemini", gemini("a.b:c-d")) is None
    out = refusal("gemini", gemini("1abc"))
    assert out.body["error"]["status"] == "INVALID_ARGUMENT"


def post(model: FakeModel, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(
        model.url + path,
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {model.key}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.parametrize("enforced", [False, True])
def test_the_endpoint_refuses_only_when_limits_are_enforced_and_keeps_the_request(enforced):
    with FakeModel([ScriptedCall("ok", {})], provider_limits=enforced) as model:
        status, doc = post(model, "/v1/chat/completions", chat("ok", "probe.dotted"))
        (kept,) = model.requests_json()
    if not enforced:
        assert status == 200 and "refusal" not in kept
        return
    assert status == 400 and "does not match pattern" in doc["error"]["message"]
    assert kept["answer"] == "provider-refused"
    assert kept["refusal"]["evidence"] == ENFORCED
    assert kept["refusal"]["source"] == LIMITS["openai-function-name"].source


def test_a_script_over_turns_and_a_request_that_turns_tools_off():
    calls = [ScriptedCall("ok", {"n": t}, turn=t) for t in range(2)]
    first = chat("ok")
    again = chat("ok")
    again["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c", "content": "done"},
    ]
    assert (tool_turn("openai-chat", first), tool_turn("openai-chat", again)) == (0, 1)
    with FakeModel(calls) as model:
        assert [c.arguments for c, _ in model.plan("openai-chat", first)] == [{"n": 0}]
        assert [c.arguments for c, _ in model.plan("openai-chat", again)] == [{"n": 1}]
        assert tools_off("openai-chat", {**again, "tool_choice": "none"})
        assert model.plan("openai-chat", {**again, "tool_choice": "none"}) == []


def test_a_script_over_turns_counts_the_steps_smolagents_replays_as_text():
    """smolagents' ToolCallingAgent never sends tool_calls back: a step whose call ran is the
    assistant text 'Calling tools:', one whose call it refused the user text 'Error: ... Now let's
    retry: ...', and messages of one role in a row are merged (smolagents 1.26.0 memory.py)."""
    retry = (
        "Error:\nArgument q is required\nNow let's retry: take care not to repeat previous errors!"
    )
    said = chat("ok")
    said["messages"] += [
        {
            "role": "user",
            "content": [{"type": "text", "text": f"New task:\nGo.\n{retry}\n\n{retry}\n"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Calling tools:\n[{'id': 'c'}]"}],
        },
        {
            "role": "user",
            "content": "Observation:\nI said Calling tools: and Now let's retry: here",
        },
    ]
    assert tool_turn("openai-chat", said) == 3
    with FakeModel([ScriptedCall("ok", {"n": t}, turn=t) for t in range(4)]) as model:
        assert [c.arguments for c, _ in model.plan("openai-chat", said)] == [{"n": 3}]


def test_the_responses_api_takes_names_up_to_128_and_leaves_a_namespaces_tools_alone():
    """openai/codex#46188: Codex raised its limit to 128 'to match the OpenAI Responses API'."""

    def responses(*tools: dict) -> dict:
        return {"model": "m", "input": "hi", "tools": list(tools)}

    fn = {"type": "function", "name": "x" * 128, "parameters": {}}
    assert refusal("openai-responses", responses(fn)) is None
    over = refusal("openai-responses", responses({**fn, "name": "x" * 129}))
    assert over.limit_id == "openai-responses-function-name"
    assert over.body["error"]["param"] == "tools[0].name"
    space = {"type": "namespace", "name": "mcp__p", "tools": [{**fn, "name": "x" * 200}]}
    assert refusal("openai-responses", responses(space)) is None


def test_gemini_refuses_a_field_its_schema_lacks_in_parameters_but_not_in_parameters_json_schema():
    """google/adk-python#1277, ax-llm/ax#293: 'Unknown name "additionalProperties" at ...'."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"const": 1}}},
        "additionalProperties": False,
    }
    decl = {"name": "t", "parameters": schema}
    out = refusal("gemini", {"tools": [{"functionDeclarations": [decl]}]})
    assert out.limit_id == "gemini-schema-field"
    where = "'tools[0].function_declarations[0].parameters"
    unknown = 'Invalid JSON payload received. Unknown name "{}" at {}\': Cannot find field.'
    assert out.message.splitlines() == [
        unknown.format("additionalProperties", where),
        unknown.format("const", where + ".properties[1].value.items"),
    ]
    json_schema = {"name": "t", "parametersJsonSchema": schema}
    assert refusal("gemini", {"tools": [{"functionDeclarations": [json_schema]}]}) is None
