"""Units under the per-tool vs whole-session probe sets (bad-key, root-if, long-description):
what each Claude Code era is predicted to do, as its record shows (clients/calibrations/)."""

from __future__ import annotations

from mcp_matrix.behaviours.claude import forbid_property_keys as behaviour
from mcp_matrix.calibrate import probe, probe_hazards, probe_tools
from mcp_matrix.calibrate.drift import predict
from mcp_matrix.profiles.loader import load_profiles

forbid_property_keys = behaviour.rewrite  # the pure per-schema function


def _keys(*names: str) -> dict:
    return {"type": "object", "properties": {n: {"type": "string"} for n in names}}


def test_a_root_key_outside_the_api_pattern_is_refused_and_nested_or_dotted_keys_pass():
    refused = forbid_property_keys(_keys("ok", "bad key!"), policy="drop-tool")
    assert refused.drop is not None and refused.drop.code == "property-key-refused"
    assert "'bad key!'" in refused.drop.message
    assert refused.drop.pointer.endswith("/properties/bad key!")
    assert forbid_property_keys(_keys("k" * 65)).fail is not None  # over 64 characters
    assert forbid_property_keys(_keys("user.name", "a-b", "c_9")).drop is None
    assert forbid_property_keys(_keys("user.name")).fail is None
    nested = {"type": "object", "properties": {"o": _keys("bad key!")}}
    assert forbid_property_keys(nested).fail is None  # the API checks input_schema.properties only


def test_the_session_breaks_by_default_and_names_the_key():
    out = forbid_property_keys(_keys("filter[name]"))
    assert out.fail is not None and out.fail[0] == "session-broken"
    assert out.fail[1].blast_radius == "session" and "filter[name]" in out.fail[1].message


def test_claude_code_2_1_332_leaves_out_only_the_tool_with_the_bad_key():
    pred = predict(load_profiles()["claude-code"], probe.PROBE_SETS["bad-key"], "probe")
    assert pred["outcome"] == "ok"
    assert pred["tools"]["control"]["present"] and not pred["tools"]["bad_key"]["present"]


def test_claude_code_2_1_278_sends_the_bad_key_and_the_api_breaks_the_session():
    pred = predict(load_profiles()["claude-code-278"], probe.PROBE_SETS["bad-key"], "probe")
    assert pred["outcome"] == "session-broken"
    assert pred["tools"]["bad_key"]["present"] and pred["tools"]["bad_key"]["blocks"]


def test_both_eras_show_and_call_a_root_if_then_else_tool():
    for name in ("claude-code", "claude-code-278", "claude-agent-sdk"):
        pred = predict(load_profiles()[name], probe.PROBE_SETS["root-if"], "probe")
        assert pred["tools"]["root_if"]["present"], name
        assert pred["calls"][1]["variants"] != ["not sent"], name


def test_descriptions_are_cut_at_4096_in_2_1_332_and_2048_in_2_1_278():
    text = probe_hazards.DESCRIPTION_5K
    for name, cut in (("claude-code", 4096), ("claude-code-278", 2048)):
        pred = predict(load_profiles()[name], probe.PROBE_SETS["long-description"], "probe")
        assert pred["tools"]["long_text"]["description"] == text[:cut] + "… [truncated]", name


def test_boolean_property_schemas_end_the_ts_sdk_s_list_but_not_claude_code_s():
    """@modelcontextprotocol/sdk 1.32.2 refuses the whole tools/list (zod 'Invalid input' at
    properties.anything); Claude Code 2.1.278, 2.1.332 and the Agent SDK list and call the tool."""
    ps = probe.PROBE_SETS["bool-subschema"]
    profiles = load_profiles()
    ts = predict(profiles["ts-sdk"], ps, "probe")
    assert ts["outcome"] == "server-dropped" and not ts["tools"]["control"]["present"]
    for name in ("claude-code", "claude-code-278", "claude-agent-sdk"):
        pred = predict(profiles[name], ps, "probe")
        assert pred["outcome"] == "ok" and pred["tools"]["bool_sub"]["present"], name


def test_copilot_cli_sends_a_true_property_as_an_empty_schema_and_false_as_a_description():
    """Observed on Copilot CLI 1.0.102 (probe set bool-subschema); additionalProperties false
    stays false, as in its core record (keywords), so only property schemas are re-typed."""
    pred = predict(load_profiles()["copilot-cli"], probe.PROBE_SETS["bool-subschema"], "probe")
    props = pred["tools"]["bool_sub"]["schema"]["properties"]
    assert props["anything"] == {} and props["never"] == {"description": "{schema: false}"}
    closed = probe.ProbeSet(
        "t",
        "",
        (
            probe_tools.probe_tool(
                "closed", {**probe_hazards.BOOL_SUB_SCHEMA, "additionalProperties": False}
            ),
        ),
        (),
    )
    schema = predict(load_profiles()["copilot-cli"], closed, "probe")["tools"]["closed"]["schema"]
    assert schema["additionalProperties"] is False
