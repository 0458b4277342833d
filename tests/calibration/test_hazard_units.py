"""Units under the hazard probe sets (validation, names, results, schema details): what the model
was told of each call, look-alike names told apart by content, and the ``result`` drift cell."""

from __future__ import annotations

from mcp_matrix.calibrate import probe, probe_hazards, probe_tools
from mcp_matrix.calibrate.drift import drift, observed_result, predict
from mcp_matrix.calibrate.model_requests import ModelTool, correlate
from mcp_matrix.calibrate.tool_results import model_results
from mcp_matrix.profiles.loader import load_profiles

CALLS = [
    {"tool": "text_result", "model_name": "mcp_probe_text_result", "id": "call_1_abcdef123456"}
]


def test_each_api_s_tool_result_is_tied_back_to_the_fake_model_s_call_by_its_id():
    bodies = {
        "anthropic": {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1_abcdef123456",
                            "content": [{"type": "text", "text": "received {}"}],
                            "is_error": True,
                        }
                    ],
                }
            ]
        },
        "openai-chat": {
            "messages": [
                {"role": "tool", "tool_call_id": "call_1_abcdef123456", "content": "received {}"}
            ]
        },
        "openai-responses": {
            "input": [
                {
                    "type": "function_call_output",
                    "call_id": "call_1_abcdef123456",
                    "output": "received {}",
                }
            ]
        },
        "gemini": {
            "contents": [
                {
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "mcp_probe_text_result",
                                "response": {"error": {"message": "no structured content"}},
                            }
                        }
                    ]
                }
            ]
        },
    }
    got = {
        api: model_results([{"api": "x", "calls": CALLS}, {"api": api, "body": body}])
        for api, body in bodies.items()
    }
    assert got["anthropic"] == {"text_result": {"text": "received {}", "is_error": True}}
    assert got["openai-chat"]["text_result"]["text"] == "received {}"
    assert got["openai-responses"]["text_result"]["text"] == "received {}"
    # Gemini's functionResponse carries no id here: the model-facing name ties it back
    assert got["gemini"]["text_result"]["text"] == "no structured content"
    assert observed_result(got["openai-chat"]["text_result"]) == "text"
    assert observed_result(got["anthropic"]["text_result"]) == "error"
    assert observed_result(got["gemini"]["text_result"]) == "error"


def test_two_tools_that_clean_to_one_name_are_told_apart_by_content_not_by_name():
    """``collide.a`` and ``collide_a`` both read as ``probe__collide_a`` by name; a client that
    kept only ``collide_a`` must not have it counted as ``collide.a`` (which is listed first)."""
    tools, _ = probe_hazards.name_set(probe_hazards.COLLISIONS)
    raw = {t["name"]: t for t in tools}
    survivor = raw["collide_a"]
    shown = [
        ModelTool(
            "probe__collide_a",
            survivor["description"],
            survivor["inputSchema"],
            call_name="probe__collide_a",
        )
    ]
    got = correlate(shown, tools)
    assert "collide.a" not in got and got["collide_a"].name == "probe__collide_a"


def test_a_text_only_answer_to_a_tool_with_an_output_schema_is_a_result_cell():
    """Predicted ``error`` where the profile's TS SDK throws on missing structuredContent,
    ``text`` where no result behaviour applies; observed from what the model was told."""
    ps = probe.PROBE_SETS["output-text"]
    obs = {
        "tools": {t["name"]: {"present": False} for t in ps.tools},
        "calls": [
            {
                "tool": "text_result",
                "sent": True,
                "arguments": {"q": "x"},
                "result": {
                    "text": "Tool text_result has an output schema but did not return structured content",
                    "is_error": False,
                },
            }
        ],
    }
    for t in ps.tools:
        obs["tools"][t["name"]] = {
            "present": True,
            "name": t["name"],
            "schema": t["inputSchema"],
            "description": t["description"],
        }
    profiles = load_profiles()
    cells = [c for c in drift(profiles["gemini-cli"], ps, obs) if c.aspect == "result"]
    assert [(c.predicted, c.observed, c.agree) for c in cells] == [("error", "error", True)]
    assert cells[0].why == "require-structured-content"
    no_result_rule = next(p for p in profiles.values() if not p.result)
    cells = [c for c in drift(no_result_rule, ps, obs) if c.aspect == "result"]
    assert [(c.predicted, c.observed) for c in cells] in ([("text", "error")], [])


def test_every_name_probe_has_its_own_description_marker_and_property():
    for set_id in ("name-chars", "name-collision", "name-clash"):
        tools = probe.PROBE_SETS[set_id].tools
        assert len({t["description"] for t in tools}) == len(tools)
        assert len({tuple(t["inputSchema"]["properties"]) for t in tools}) == len(tools)


def test_client_validate_checks_the_formats_it_is_given_and_the_properties_it_adds():
    """Gemini CLI's Ajv has ajv-formats: an email that is none is refused before sending; a
    wait_for_previous the client added to a closed schema passes its own check."""
    from mcp_matrix.behaviours.calls import client_validate
    from mcp_matrix.core.model import CallContext, CallPlan

    email = {"type": "object", "properties": {"value": {"type": "string", "format": "email"}}}
    closed = {
        "type": "object",
        "properties": {"w": {"type": "string"}},
        "additionalProperties": False,
    }

    def plan(schema, args, **params):
        ctx = CallContext(tool="t", held_schema=schema, held_tool={"inputSchema": schema})
        return client_validate(CallPlan(tool="t", arguments=args), ctx, **params)

    refused = plan(email, {"value": "not-an-email"}, formats=["email"]).refused
    assert refused is not None and "must match format 'email'" in refused.message
    assert plan(email, {"value": "a@b.co"}, formats=["email"]).refused is None
    assert plan(email, {"value": "not-an-email"}).refused is None  # format is an annotation
    wait = {"w": "x", "wait_for_previous": False}
    assert plan(closed, wait).refused is not None
    assert plan(closed, wait, extra_properties=["wait_for_previous"]).refused is None
    assert plan(closed, {"w": "x", "extra": 1}, extra_properties=["wait_for_previous"]).refused


def test_format_violations_cover_date_time_and_uri_and_nested_values():
    from mcp_matrix.behaviours.validation import format_violations

    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "links": {"type": "array", "items": {"type": "string", "format": "uri"}},
        },
    }
    good = {"when": "2026-12-02T10:00:00Z", "links": ["https://example.org/x"]}
    bad = {"when": "yesterday", "links": ["ok:x", "no uri"]}
    formats = ["date-time", "uri"]
    assert format_violations(schema, good, formats) == []
    assert format_violations(schema, bad, formats) == [
        "/when must match format 'date-time'",
        "/links/1 must match format 'uri'",
    ]
    assert format_violations(schema, {"when": "y" * 5000}, formats) == []  # not checked: too long


def test_codex_0171_keeps_a_ref_and_drops_unused_defs_without_a_phantom_loss():
    """Codex 0.171 sends $refs as they are and deletes $defs entries nothing uses (observed).
    Compared with the server's schema inlined, a kept $ref read as its target's type and
    properties removed: two false 'removed' findings per reference (a Notion tool had 22)."""
    from mcp_matrix.behaviours.codex import pruned_defs

    schema = {
        "type": "object",
        "properties": {"parent": {"$ref": "#/$defs/Parent"}, "q": {"type": "string"}},
        "$defs": {
            "Parent": {"type": "object", "properties": {"id": {"$ref": "#/$defs/Id"}}},
            "Id": {"type": "string"},
            "Unused": {"type": "object"},
            "ParentX": {"type": "string"},
        },
    }
    assert set(pruned_defs(schema)["$defs"]) == {"Parent", "Id"}
    ps = probe.ProbeSet("t", "", (probe_tools.probe_tool("notion_like", schema),), ())
    pred = predict(load_profiles()["codex"], ps, "probe")["tools"]["notion_like"]
    assert pred["schema"]["$defs"] == {k: schema["$defs"][k] for k in ("Parent", "Id")}
    assert [f.message for f in pred["state"].findings if f.lost] == []


def test_a_text_only_answer_to_a_tool_that_writes_warns_that_a_retry_repeats_its_work():
    """The server did the work and the client reports an error (Gemini CLI, opencode, the SDKs,
    observed): for a tool not marked read-only the model's retry may repeat a side effect."""
    from mcp_matrix.behaviours.results import require_structured_content
    from mcp_matrix.core.model import CallContext

    answer = {"content": [{"type": "text", "text": "done"}]}
    out = {"type": "object", "properties": {"id": {"type": "string"}}}
    writes = {"name": "t", "outputSchema": out, "annotations": {"readOnlyHint": False}}
    reads = {**writes, "annotations": {"readOnlyHint": True}}
    said = require_structured_content(
        answer, CallContext(tool="t", held_schema={}, held_tool=writes)
    )
    assert said is not None and "its effect may happen twice" in said.message
    said = require_structured_content(
        answer, CallContext(tool="t", held_schema={}, held_tool=reads)
    )
    assert said is not None and "twice" not in said.message


def test_codex_0171_keeps_an_empty_schema_and_min_items_where_0_15_made_a_string():
    ps = probe.PROBE_SETS["schema-details"]
    profiles = load_profiles()
    new = predict(profiles["codex"], ps, "probe")["tools"]["loose_parts"]["schema"]
    old = predict(profiles["codex-015"], ps, "probe")["tools"]["loose_parts"]["schema"]
    assert new["properties"] == {
        "anything": {},
        "list": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    }
    assert old["properties"]["anything"] == {"type": "string"}
    assert "minItems" not in old["properties"]["list"]


def test_require_present_counts_null_as_missing_only_where_the_client_does():
    """Continue CLI refuses a required key given as null; openai-agents only one left out."""
    from mcp_matrix.behaviours.continue_cli import require_present
    from mcp_matrix.core.model import CallContext, CallPlan

    schema = {"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]}
    ctx = CallContext(tool="t", held_schema=schema, held_tool={})

    def refused(args, **params):
        return require_present(CallPlan(tool="t", arguments=args), ctx, **params).refused

    assert refused({"a": 1, "b": None}) is not None
    assert refused({"a": 1, "b": None}, null_is_missing=False) is None
    assert refused({"a": 1}, null_is_missing=False) is not None
    assert refused({"a": 1, "b": 2}, null_is_missing=False) is None


def test_look_alike_names_are_told_apart_by_content_in_copilot_and_gemini_forms():
    """Copilot CLI cleans '.' to '-' (clash.c and clash-c both probe-clash-c) and Gemini CLI adds
    wait_for_previous to every tool: the offered tool goes to the server tool whose content it
    carries, not to the one whose name it spells (recorded: the fake model then sent the wrong
    tool's arguments, and the tap saw them arrive at the right tool)."""
    tools, _ = probe_hazards.name_set(probe_hazards.CLASHES)
    raw = {t["name"]: t for t in tools}
    dot = raw["clash.c"]
    copilot = ModelTool(
        "probe-clash-c", dot["description"], dot["inputSchema"], call_name="probe-clash-c"
    )
    assert correlate([copilot], tools) == {"clash.c": copilot}
    under = raw["clash_d"]
    schema = {
        "type": "object",
        "properties": {
            **under["inputSchema"]["properties"],
            "wait_for_previous": {"type": "boolean"},
        },
    }
    gemini = ModelTool(
        "mcp_probe_clash_d", under["description"], schema, call_name="mcp_probe_clash_d"
    )
    assert correlate([gemini], tools) == {"clash_d": gemini}


def test_a_client_whose_agent_run_raises_on_a_text_only_result_ends_the_run_not_the_call():
    """pydantic-ai and LangChain raise out of the agent run (observed, output-text): the finding
    says so and its blast radius is the session, not the one call."""
    from mcp_matrix.behaviours.results import require_structured_content
    from mcp_matrix.core.model import CallContext

    tool = {"name": "t", "outputSchema": {"type": "object"}}
    ctx = CallContext(tool="t", held_schema={}, held_tool=tool)
    said = require_structured_content({"content": []}, ctx, ends_run=True)
    assert said is not None and said.blast_radius == "session"
    assert "the agent run ends there" in said.message
    profiles = load_profiles()
    for name in ("pydantic-ai", "langchain"):
        (use,) = [u for u in profiles[name].result if u.name == "require-structured-content"]
        assert dict(use.params)["ends_run"] is True
