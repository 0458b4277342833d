"""Cline CLI and Continue CLI, live: the pinned clients (cached installs) against the probe server.

The calibration records (clients/calibrations/cline-cli/, continue-cli/) hold the probe sets; these
tests hold what the probe sets cannot show (tests/calibration/test_live_clients.py runs both on
probe sets): Cline's hashed names (the fake model cannot match a
hashed name to its tool, so those sets stay out of its record) and Continue's refusal of a call
that leaves out a required key (no scripted call does). Each case is what the real client did, and
the profile must predict it. A registry that cannot be reached fails them with the install error.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from mcp_matrix.calibrate import harness, probe, probe_tools
from mcp_matrix.calibrate.calibration import server_for
from mcp_matrix.calibrate.drift import NOT_SENT, predict
from mcp_matrix.calibrate.tap import messages
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.report.discovery_doc import read_discovery
from mcp_matrix.simulate.discovery import initial_state, run_discovery
from tests.conftest import run_cli


def _tool(name: str, schema: dict | None = None, description: str = "Probe tool.") -> dict:
    return {
        "name": name,
        "description": description,
        "inputSchema": schema or {"type": "object", "properties": {}},
    }


def _run(recipe: str, ps: probe.ProbeSet, tmp_path) -> harness.HarnessRun:
    server, proc = server_for(None, ps, tmp_path, "stdio")
    assert proc is None  # stdio: the client starts the server through the tap
    return harness.run_recipe(
        harness.load_recipe(recipe), server, ps.calls, tool_names=[t["name"] for t in ps.tools]
    )


def _model_names(run: harness.HarnessRun) -> list[str]:
    assert run.requests, f"the client never asked its model: {run.stderr[-1500:]}"
    tools = run.requests[0]["body"].get("tools") or []
    return [t.get("function", t).get("name") for t in tools]


def _calls_sent(run: harness.HarnessRun) -> dict[str, dict]:
    return {
        m["params"]["name"]: m["params"].get("arguments")
        for d, m in messages(run.tap)
        if d == "c2s" and m.get("method") == "tools/call"
    }


LONG = "probe_" + "very_long_tool_name_" * 3 + "end"  # probe__ + 69 = 76 characters
A57 = "exactly_57_chars_" + "a" * 40  # probe__ + 57 = 64: kept
A58 = "exactly_58_chars_" + "a" * 41  # 65: hashed
# Raw tool name -> the name Cline CLI 3.0.65 showed its model (2026-12-02).
CLINE_NAMES = {
    "control": "probe__control",
    "probe.dotted": "probe__probe_dotted_df1ca1dd",
    LONG: "probe__probe_very_long_tool_name_very_long_tool_name_ve_8e03cd29",
    "a b": "probe__a_b_8665d8de",
    "a/b": "probe__a_b_bd486501",
    "café": "probe__caf__142edf3e",
    "x..y": "probe__x_y_324c355d",
    A57: "probe__" + A57,
    A58: "probe__exactly_58_chars_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_514a4152",
}


@pytest.mark.timeout(1200)  # a first install from the registry, then one bounded client run
def test_cline_cli_hashes_invalid_and_long_names_exactly_as_its_profile_predicts(tmp_path):
    ps = probe.ProbeSet("names", "names", tuple(_tool(n) for n in CLINE_NAMES), ())
    run = _run("cline-cli", ps, tmp_path)
    mcp = [n for n in _model_names(run) if n.startswith("probe__")]
    assert sorted(mcp) == sorted(CLINE_NAMES.values())
    predicted = predict(load_profiles()["cline-cli"], ps, "probe")["tools"]
    assert {raw: t["name"] for raw, t in predicted.items()} == CLINE_NAMES


REQUIRED_TOOLS = (
    _tool(
        "control", {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    ),
    _tool(
        "need_a",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a"],
        },
    ),
    _tool(
        "need_a_null",
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
    ),
    _tool(
        "need_ghost",
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["ghost"]},
    ),
    _tool(
        "need_nested",
        {
            "type": "object",
            "properties": {
                "o": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
            },
        },
    ),
    _tool(
        "wrong_type",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    ),
)
REQUIRED_CALLS = (
    probe.ScriptedCall("control", {"q": "hello"}),
    probe.ScriptedCall("need_a", {"b": "x"}),
    probe.ScriptedCall("need_a_null", {"a": None}),
    probe.ScriptedCall("need_ghost", {"a": "x"}),
    probe.ScriptedCall("need_nested", {"o": {}}),
    probe.ScriptedCall("wrong_type", {"n": "five"}),
)
# What reached the server (2026-12-02): Continue CLI 1.5.47 refuses the three calls without a
# top-level required key; Cline CLI 3.0.65 sends every call as the model wrote it.
SENT = {
    "continue-cli": {"control", "need_nested", "wrong_type"},
    "cline-cli": {c.tool for c in REQUIRED_CALLS},
}


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("client", sorted(SENT))
def test_only_continue_cli_refuses_a_call_without_a_top_level_required_key(client, tmp_path):
    ps = probe.ProbeSet("required", "required", REQUIRED_TOOLS, REQUIRED_CALLS)
    sent = _calls_sent(_run(client, ps, tmp_path))
    assert set(sent) == SENT[client]
    assert all(sent[c.tool] == c.arguments for c in REQUIRED_CALLS if c.tool in sent)
    predicted = predict(load_profiles()[client], ps, "probe")["calls"]
    assert {c["tool"] for c in predicted if c["variants"] != [NOT_SENT]} == SENT[client]


def _slow_server_names(recipe: harness.Recipe, tmp_path) -> list[str]:
    """The MCP tools Cline CLI offers its model when the server answers only after 6 s."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([probe_tools.CONTROL]))
    argv = ("sh", "-c", f"sleep 6; exec {sys.executable} -m matrix_servers.probe --tools {path}")
    run = harness.run_recipe(
        recipe, harness.ServerSpec(argv=argv), (probe_tools.CONTROL_CALL,), tool_names=["control"]
    )
    return [n for n in _model_names(run) if n.startswith("probe__")]


@pytest.mark.timeout(1200)
def test_cline_cli_silently_skips_a_server_slower_than_3_s_unless_the_settings_give_a_timeout(
    tmp_path,
):
    recipe = harness.load_recipe("cline-cli")
    (key,) = [k for k in recipe.files if k.endswith("cline_mcp_settings.json")]
    assert '"timeout": 60' in recipe.files[key]  # the recipe's own setting: 60 s
    assert _slow_server_names(recipe, tmp_path) == ["probe__control"]
    default = {**recipe.files, key: recipe.files[key].replace(', "timeout": 60', "")}
    assert _slow_server_names(dataclasses.replace(recipe, files=default), tmp_path) == []


@pytest.mark.timeout(1200)
def test_cline_cli_shows_only_the_later_of_two_tools_with_one_name_as_its_profile_predicts(
    tmp_path,
):
    tools = (
        _tool("control"),
        _tool("dup", description="first"),
        _tool("dup", description="second"),
    )
    run = _run("cline-cli", probe.ProbeSet("dup", "dup", tools, ()), tmp_path)
    offered = [
        t.get("function", t)
        for t in run.requests[0]["body"]["tools"]
        if t.get("function", t)["name"].startswith("probe__")
    ]
    seen = sorted((t["name"], t["description"]) for t in offered)
    assert seen == [("probe__control", "Probe tool."), ("probe__dup", "second")]
    final = run_discovery(
        load_profiles()["cline-cli"], initial_state([(0, t) for t in tools], "probe")
    )
    assert sorted((t.name, t.description) for t in final.tools if not t.hidden) == seen


def test_continue_cli_leaves_a_ref_into_the_root_defs_dangling_and_says_the_model_loses_it(
    tmp_path,
):
    """Observed in the record (core, refs): Continue CLI keeps ``$ref`` and drops the root ``$defs``;
    Cline CLI sends both. The verdict must name the loss, not call the cell visible."""
    tools = [t for t in probe.PROBE_SETS["core"].tools if t["name"] in ("control", "refs")]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    snap = tmp_path / "snap.json"
    server = f"{sys.executable} -m matrix_servers.probe --tools {tmp_path / 'tools.json'}"
    r = run_cli("snapshot", "--stdio", server, "-o", str(snap), timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    r = run_cli(
        "discover", str(snap), "--client", "continue-cli", "--client", "cline-cli", "--json"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    cells = {
        (v["profile"], t["tool"]): t
        for v in read_discovery(json.loads(r.stdout))["profiles"]
        for t in v["tools"]
    }
    refs = cells[("continue-cli", "refs")]
    assert refs["verdict"] == "degraded"
    assert ("dangling-ref", "/inputSchema/properties/point/$ref") in {
        (f["code"], f["pointer"]) for f in refs["findings"]
    }
    assert cells[("cline-cli", "refs")]["verdict"] == "visible"
