"""Call and result behaviours on real payloads (the memory and gateway schemas' shapes)."""

from __future__ import annotations

import json

from mcp_matrix.behaviours.calls import (
    add_meta,
    cache_tools,
    client_validate,
    default_arguments,
    drop_nulls,
    stringify_arguments,
    strip_unknown_arguments,
)
from mcp_matrix.behaviours.results import require_structured_content, result_size_cap
from mcp_matrix.core.model import CallContext, CallPlan, ClientView

STORE_V1 = {
    "type": "object",
    "properties": {"agent_id": {"type": "string"}, "content": {"type": "string"}},
    "required": ["agent_id", "content"],
    "additionalProperties": False,
}
ARGS_V2 = {"agent_id": "a", "content": "c", "tags": ["x", "y"], "pinned": True, "importance": 0.5}


def ctx(schema=STORE_V1, tool=None) -> CallContext:
    return CallContext(
        "memory_store", schema, tool or {"name": "memory_store", "inputSchema": schema}
    )


def plan(args) -> CallPlan:
    return CallPlan("memory_store", args)


def test_a_stale_cache_strips_the_field_added_after_the_session_began():
    out = strip_unknown_arguments(plan(ARGS_V2), ctx())
    assert out.arguments == {"agent_id": "a", "content": "c"}
    assert out.applied == ("strip-unknown-arguments",)


def test_stringify_sends_arrays_and_booleans_as_json_strings_at_the_top_level():
    out = stringify_arguments(plan(ARGS_V2), ctx(), types=["array", "boolean"])
    assert out.arguments["tags"] == json.dumps(["x", "y"]) and out.arguments["pinned"] == "true"
    assert out.arguments["importance"] == 0.5 and out.arguments["content"] == "c"


def test_stringify_nested_reaches_inside_objects():
    out = stringify_arguments(
        plan({"state": {"done": [1, 2]}}), ctx(), types=["array"], depth="nested"
    )
    assert out.arguments == {"state": {"done": "[1, 2]"}}


def test_stringify_leaves_a_call_without_those_types_untouched():
    p = plan({"agent_id": "a"})
    assert stringify_arguments(p, ctx(), types=["array"]) is p


def test_client_validation_refuses_an_invalid_call_before_sending():
    out = client_validate(plan({"agent_id": "a"}), ctx())
    assert out.refused is not None and "content" in out.refused.message


def test_client_validation_lets_a_valid_call_through():
    p = plan({"agent_id": "a", "content": "c"})
    assert client_validate(p, ctx()) is p


def test_client_validation_uses_2020_12_only_when_the_schema_says_so_in_auto_mode():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"p": {"prefixItems": [{"type": "integer"}], "type": "array"}},
    }
    bad = plan({"p": ["not-an-integer"]})
    assert client_validate(bad, ctx(schema), dialect="auto").refused is not None
    assert (
        client_validate(bad, ctx(schema), dialect="draft-07").refused is None
    )  # draft-07 ignores prefixItems


def test_client_validation_checks_the_same_arguments_against_the_same_schema_once(monkeypatch):
    """Replay plans a call for each profile in turn: two that validate alike (Gemini CLI and
    Qwen Code, against the server's schema) check the very same objects once, with the same
    refusal; other arguments are checked afresh. Fails before: validated twice."""
    from mcp_matrix.behaviours import calls

    monkeypatch.setattr(calls, "_LAST", [None])
    checked = []
    real = calls.validate
    monkeypatch.setattr(calls, "validate", lambda s, a, d: checked.append(a) or real(s, a, d))
    bad, c = {"agent_id": "a"}, ctx()
    first = client_validate(CallPlan("memory_store", bad), c, dialect="auto", against="server")
    again = client_validate(CallPlan("memory_store", bad), c, dialect="auto", against="server")
    assert first.refused is not None and again.refused == first.refused
    assert checked == [bad]
    same_words = {"agent_id": "a"}  # equal, but another object: checked again
    assert client_validate(CallPlan("memory_store", same_words), c).refused == first.refused
    assert checked == [bad, same_words]


def test_a_schema_that_does_not_compile_skips_client_validation():
    p = plan({"x": 1})
    assert (
        client_validate(
            p, ctx({"type": "object", "properties": {"x": {"type": "no-such-type"}}})
        ).refused
        is None
    )


def test_nulls_are_dropped_and_missing_arguments_default_to_an_empty_object():
    assert drop_nulls(plan({"a": None, "b": 1}), ctx()).arguments == {"b": 1}
    assert default_arguments(CallPlan("t", None, omit_arguments=True), ctx()).arguments == {}


def test_add_meta_adds_a_progress_token():
    out = add_meta(plan({}), ctx())
    assert isinstance(out.meta["progressToken"], str) and len(out.meta["progressToken"]) == 36


def test_a_caching_client_keeps_the_baseline_list_and_a_refetching_one_sees_the_live_list():
    live, base = ClientView("p", "ok", ()), ClientView("p", "ok", ())
    assert cache_tools(live, base, list_changed="ignore")[0] is base
    assert cache_tools(live, base, list_changed="refetch")[0] is live
    assert cache_tools(live, None)[0] is live


OUT = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
TOOL = {"name": "memory_store", "inputSchema": STORE_V1, "outputSchema": OUT}


def test_sdk_clients_fail_a_result_without_structured_content_when_there_is_an_output_schema():
    f = require_structured_content({"content": []}, ctx(tool=TOOL))
    assert f is not None and f.code == "missing-structured-content"


def test_sdk_clients_fail_structured_content_that_does_not_match_the_output_schema():
    f = require_structured_content(
        {"content": [], "structuredContent": {"id": "one"}}, ctx(tool=TOOL)
    )
    assert f is not None and f.code == "invalid-structured-content"


def test_sdk_clients_skip_output_validation_for_error_results():
    assert require_structured_content({"content": [], "isError": True}, ctx(tool=TOOL)) is None


def test_a_result_over_the_size_cap_is_refused_by_the_client():
    big = {"content": [{"type": "text", "text": "x" * 200}]}
    assert result_size_cap(big, ctx(), max_chars=100).code == "result-too-large"
    assert result_size_cap(big, ctx(), max_chars=1000) is None
