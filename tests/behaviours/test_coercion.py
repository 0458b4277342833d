"""Argument coercion and JavaScript numbers (mcp_matrix/behaviours/coercion.py), on the probe calls the
real clients were observed with (clients/calibrations/*: probe sets coercion and big-int)."""

from __future__ import annotations

import pytest

from mcp_matrix.behaviours.coercion import (
    coerce_arguments,
    js_number,
    js_number_text,
    round_big_integers,
)
from mcp_matrix.calibrate import probe
from mcp_matrix.core.model import CallContext, CallPlan

CLAUDE = {"depth": "top", "numbers": "round-trip", "booleans": "exact", "to_string": False}
QWEN = {"depth": "nested", "numbers": "decimal", "booleans": "any-case", "to_string": True}


def probe_call(set_id: str, tool: str) -> tuple[CallPlan, CallContext]:
    ps = probe.PROBE_SETS[set_id]
    raw = next(t for t in ps.tools if t["name"] == tool)
    call = next(c for c in ps.calls if c.tool == tool)
    return CallPlan(tool, call.arguments), CallContext(tool, raw["inputSchema"], raw)


# What node 22 prints for String(x) (checked with `node -e` when this was written).
JS_TEXT = [
    (0.1, "0.1"),
    (1e21, "1e+21"),
    (1.5e-7, "1.5e-7"),
    (123456789012345680000.0, "123456789012345680000"),
    (5.0, "5"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (-0.000123, "-0.000123"),
    (float(2**53 + 1), "9007199254740992"),
    (float(2**63 - 1), "9223372036854776000"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (5e-324, "5e-324"),
    (1e20, "100000000000000000000"),
    (123.456, "123.456"),
    (0.0, "0"),
]


@pytest.mark.parametrize(("x", "text"), JS_TEXT)
def test_js_number_text_writes_numbers_as_javascript_does(x, text):
    assert js_number_text(x) == text


def test_js_number_is_what_a_server_parses_from_json_stringify():
    assert js_number(2**53 + 1) == 2**53 and isinstance(js_number(2**53 + 1), int)
    assert js_number(2**63 - 1) == 9223372036854776000
    assert js_number(2**64 - 1) == 18446744073709552000
    assert js_number(10**21 + 5) == 1e21 and isinstance(js_number(10**21 + 5), float)
    assert js_number(10**400) is None  # Infinity: JSON.stringify writes null


# -- round-big-integers, against the big-int probe set as every JavaScript client sent it ------

OBSERVED_BIG = {  # clients/calibrations/claude-code/2.1.332.json, probe set big-int (same in all JS clients)
    "big_id": {"id": 9007199254740992},
    "big_negative": {"id": -9007199254740992},
    "big_int64": {"id": 9223372036854776000},
    "big_safe": {"id": 9007199254740991},
    "big_nested": {"ids": [9007199254740992], "ref": {"id": 9007199254740992}},
    "big_string": {"id": "9007199254740993"},
}


@pytest.mark.parametrize("tool", sorted(OBSERVED_BIG))
def test_round_big_integers_sends_what_javascript_clients_were_observed_sending(tool):
    plan, ctx = probe_call("big-int", tool)
    out = round_big_integers(plan, ctx)
    assert out.arguments == OBSERVED_BIG[tool]
    changed = out.arguments != plan.arguments
    assert out.applied == (("round-big-integers",) if changed else ())


def test_round_big_integers_leaves_safe_numbers_booleans_and_floats_as_the_same_plan():
    plan = CallPlan("t", {"a": 2**53, "b": True, "c": 1.5, "d": [1, {"e": -(2**53)}], "f": None})
    assert round_big_integers(plan, CallContext("t", {}, {})) is plan


def test_round_big_integers_survives_deep_arguments():
    deep: object = 2**60
    for _ in range(5000):
        deep = [deep]
    plan = CallPlan("t", {"deep": deep})
    assert round_big_integers(plan, CallContext("t", {}, {})) is plan  # left alone past the bound


# -- coerce-arguments, against the coercion probe set as Claude Code and Qwen Code sent it -----

OBSERVED_CLAUDE = {  # clients/calibrations/claude-code/2.1.332.json (and claude-code-278/2.1.278.json)
    "coerce_scalars": {"count": 5, "ratio": 2.5, "on": True, "off": False, "label": "7"},
    "coerce_odd": {
        "word": "abc",
        "frac": "2.5",
        "yes": "yes",
        "spaced": " 3 ",
        "big": "9007199254740993",
        "point_zero": "5.0",
        "sci": "1e3",
        "negative": -7,
        "caps": "True",
    },
    "coerce_nested": {"outer": {"n": "5"}, "ids": ["1", "2"]},
    "coerce_union": {"either": "5", "maybe": 5, "nullable": 5},
    "coerce_reverse": {"text": 5, "flag_text": True},
}
OBSERVED_QWEN = {  # clients/calibrations/qwen-code/0.24.4.json (coerce_odd is refused afterwards)
    "coerce_scalars": {"count": 5, "ratio": 2.5, "on": True, "off": False, "label": "7"},
    "coerce_nested": {"outer": {"n": 5}, "ids": [1, 2]},
    "coerce_union": {"either": "5", "maybe": 5, "nullable": 5},
    "coerce_reverse": {"text": "5", "flag_text": "true"},
}


@pytest.mark.parametrize("tool", sorted(OBSERVED_CLAUDE))
def test_claude_code_coerces_top_level_strings_only_when_javascript_writes_the_number_so(tool):
    plan, ctx = probe_call("coercion", tool)
    out = coerce_arguments(plan, ctx, **CLAUDE)
    assert out.arguments == OBSERVED_CLAUDE[tool]
    assert [type(v) for v in out.arguments.values()] == [
        type(v) for v in OBSERVED_CLAUDE[tool].values()
    ]


@pytest.mark.parametrize("tool", sorted(OBSERVED_QWEN))
def test_qwen_code_coerces_at_every_depth_and_turns_numbers_into_strings(tool):
    plan, ctx = probe_call("coercion", tool)
    out = coerce_arguments(plan, ctx, **QWEN)
    assert out.arguments == OBSERVED_QWEN[tool]
    assert out.applied == ("coerce-arguments",)


def test_qwen_code_decimal_coercion_trims_and_rounds_a_big_numeric_string():
    plan, ctx = probe_call("coercion", "coerce_odd")
    out = coerce_arguments(plan, ctx, **QWEN).arguments
    assert out["spaced"] == 3 and out["point_zero"] == 5 and out["negative"] == -7
    assert out["caps"] is True and out["big"] == 2**53  # parseInt holds a double
    assert out["word"] == "abc" and out["sci"] == "1e3" and out["yes"] == "yes"


def test_coercion_leaves_a_call_already_of_the_right_types_as_the_same_plan():
    plan, ctx = probe_call("coercion", "coerce_scalars")
    typed = CallPlan(plan.tool, {"count": 5, "ratio": 2.5, "on": True, "label": "7"})
    assert coerce_arguments(typed, ctx, **CLAUDE) is typed
    assert coerce_arguments(typed, ctx, **QWEN) is typed


def test_coercion_never_raises_on_odd_schemas_or_arguments():
    odd_schemas = [True, None, "x", {"properties": []}, {"properties": {"a": True}}]
    for schema in odd_schemas:
        plan = CallPlan("t", {"a": "5", "b": ["1"], "c": {"d": "true"}})
        for opts in (CLAUDE, QWEN):
            assert coerce_arguments(plan, CallContext("t", schema, {}), **opts) is plan
    listed = CallPlan("t", ["5"])
    assert coerce_arguments(listed, CallContext("t", {"type": "array"}, {}), **QWEN) is listed
