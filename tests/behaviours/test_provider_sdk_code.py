"""Provider SDK schema code, run as code evidence: what the Anthropic Python SDK does to a tool
between a client and the Messages API.

anthropic 2.16.0 is the release the langchain-anthropic harness resolves (langchain-anthropic
1.7.10, 2026-12-02). Its ``transform_schema`` (anthropic/lib/_parse/_transform.py) rewrites a
schema for strict structured output: every object closed, unsupported keywords moved into the
description. The SDK applies it only to ``output_format`` (anthropic/resources/messages/
messages.py); ``tools`` go into the request as given, ``strict: true`` or not, and the MCP helper
(anthropic/lib/tools/mcp.py ``mcp_tool``) passes the listed ``inputSchema`` through. So a
profile on the Anthropic SDK models the client's own conversion and then the API's rules
(base-anthropic-api), with nothing in between; these tests run the real SDK, offline (an
in-process transport answers the request), on every probe set.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.lib.tools.mcp import mcp_tool
from mcp import types

from mcp_matrix.calibrate.drift import predict
from mcp_matrix.calibrate.probe import PROBE_SETS
from mcp_matrix.calibrate.probe_tools import CONTROL
from tests.behaviours.conftest import load

MESSAGE = {  # the smallest Messages API answer the SDK parses: the turn ends, no tool called
    "id": "msg_probe",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "text", "text": "done"}],
    "model": "probe",
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def sent_tools(tools: list[dict], beta: bool = False) -> list[dict]:
    """The ``tools`` of the request body the real SDK builds for ``tools``."""
    bodies: list[dict] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=MESSAGE)

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = anthropic.Anthropic(api_key="probe", http_client=http, max_retries=0)
    messages: Any = client.beta.messages if beta else client.messages
    given = copy.deepcopy(tools)
    messages.create(
        model="probe", max_tokens=16, messages=[{"role": "user", "content": "hi"}], tools=given
    )
    assert len(bodies) == 1
    return bodies[0]["tools"]


def param(name: str, description: str | None, schema: Any, **extra: Any) -> dict:
    out = {"name": name, "input_schema": schema, **extra}
    return out if description is None else {**out, "description": description}


def test_the_sdk_version_is_the_one_the_harness_resolves():
    assert anthropic.__version__ == "2.16.0"


@pytest.mark.parametrize("set_id", sorted(PROBE_SETS))
def test_the_sdk_sends_every_tool_the_langchain_anthropic_profile_shows_unchanged(set_id):
    predicted = predict(load("langchain-anthropic"), PROBE_SETS[set_id], "probe")["tools"]
    shown = [
        param(t["name"], t["description"], t["schema"]) for t in predicted.values() if t["present"]
    ]
    assert shown, f"{set_id}: the profile shows no tool"
    # Also the tools the API refuses (a root allOf, a key outside its pattern, a long name): the
    # SDK refuses nothing itself, so a session-broken verdict is the API's.
    assert sent_tools(shown) == shown


@pytest.mark.parametrize("beta", [False, True], ids=["messages", "beta-messages"])
def test_a_strict_tool_is_sent_as_listed_not_through_transform_schema(beta):
    tools = [
        param(t["name"], t.get("description"), t["inputSchema"], strict=True)
        for probe in PROBE_SETS.values()
        for t in probe.tools
    ]
    assert sent_tools(tools, beta=beta) == tools


def test_transform_schema_would_have_changed_the_probe_schemas():
    """The tests above could tell: the structured-output rewrite changes most probe schemas
    (closes the control tool's object) and refuses some (no type, a boolean subschema)."""
    closed = anthropic.transform_schema(CONTROL["inputSchema"])
    assert closed == {**CONTROL["inputSchema"], "additionalProperties": False}
    schemas = {
        json.dumps(t["inputSchema"], sort_keys=True) for p in PROBE_SETS.values() for t in p.tools
    }
    outcome = {"changed": 0, "refused": 0, "same": 0}
    for text in schemas:
        schema = json.loads(text)
        try:  # a type list is an AssertionError (assert_never), a non-object schema a TypeError
            out = anthropic.transform_schema(schema)
        except (ValueError, TypeError, AssertionError):
            outcome["refused"] += 1
            continue
        outcome["changed" if out != schema else "same"] += 1
    # 2026-12-02, 66 distinct probe schemas: 52 changed, 10 refused, 4 already closed
    assert outcome["changed"] > 5 * outcome["same"] and outcome["refused"] > 0, outcome


@pytest.mark.parametrize("set_id", sorted(PROBE_SETS))
def test_the_mcp_helper_keeps_the_listed_schema(set_id):
    for listed in PROBE_SETS[set_id].tools:
        tool = types.Tool.model_validate(listed)
        # The session is never used: the tool is built, not called.
        built = mcp_tool(tool, None, strict=True).to_dict()  # type: ignore[arg-type]
        assert built["name"] == listed["name"]
        assert built["input_schema"] == listed["inputSchema"]
