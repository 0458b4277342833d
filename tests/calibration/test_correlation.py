"""Calibration maps what the model saw back to the server's tools by content and by what the
tap saw the client call, never by name alone: a client that renames tools (Copilot CLI's
``probe-probe-dotted`` for ``probe.dotted``, Cline CLI's ``<55 characters>_<sha1[:8]>``) must not
read as hiding them, or a wrong "hidden" rule would agree at 100%."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from mcp_matrix.calibrate import harness
from mcp_matrix.calibrate.calibration import calibrate
from mcp_matrix.calibrate.model_requests import ModelTool, correlate
from mcp_matrix.calibrate.probe import get_set
from mcp_matrix.calibrate.probe_tools import LONG_NAME
from mcp_matrix.calibrate.record import called_as, observe
from mcp_matrix.profiles.loader import load_profiles
from tests.calibration.test_harness import TOY, toy_recipe
from tests.calibration.test_list_only import _run as list_only_run
from tests.conftest import run_cli

Q = {"type": "object", "properties": {"q": {"type": "string"}}}


def test_renamed_tools_are_mapped_to_their_server_tools_and_their_calls_reach_the_server():
    recipe = toy_recipe(env={**toy_recipe().env, "TOY_RENAME": "1"})
    sets = [get_set("dotted-name"), get_set("long-name")]
    done = calibrate(recipe, load_profiles()["claude-code"], sets)
    dotted = done.record["probe_sets"]["dotted-name"]
    assert dotted["tools"]["probe.dotted"]["present"] is True
    assert dotted["tools"]["probe.dotted"]["name"] == "probe-probe-dotted"
    assert dotted["tools"]["control"]["name"] == "probe-control"
    assert dotted["offered"] == ["probe-control", "probe-probe-dotted"]  # the raw names
    assert [(c["tool"], c["sent"], c.get("arguments")) for c in dotted["calls"]] == [
        ("control", True, {"q": "hello"}),
        ("probe.dotted", True, {"q": "x"}),
    ]
    long = done.record["probe_sets"]["long-name"]["tools"][LONG_NAME]
    assert long["present"] is True
    assert len(long["name"]) == 64 and long["name"].startswith(("probe-" + LONG_NAME)[:55] + "_")
    sent = done.record["probe_sets"]["long-name"]["calls"]
    assert [c["sent"] for c in sent] == [True, True]


def test_a_tool_of_other_content_is_not_taken_for_a_missing_one():
    server = [{"name": "a.b", "description": "Reads a.", "inputSchema": Q}]
    other_description = [ModelTool("x-a-b", "Writes b.", Q, call_name="x-a-b")]
    other_schema = [ModelTool("x-a-b", "Reads a.", {"type": "object"}, call_name="x-a-b")]
    assert correlate(other_description, server) == {}
    assert correlate(other_schema, server) == {}
    # a server tool with no description is not taken for one of the client's own tools
    bare = [{"name": "a.b", "inputSchema": {"type": "object"}}]
    assert correlate([ModelTool("bash", "Runs a command.", {}, call_name="bash")], bare) == {}
    kept = [ModelTool("x-a-b", "[server x] Reads a.", Q, call_name="x-a-b")]
    assert correlate(kept, server) == {"a.b": kept[0]}


def test_what_the_tap_saw_called_outranks_content_and_position():
    # two tools of one content; the client showed only the second, renamed: content alone would
    # give it to the first, the call the tap saw says whose it is
    server = [
        {"name": "first", "description": "Probe tool.", "inputSchema": Q},
        {"name": "second", "description": "Probe tool.", "inputSchema": Q},
    ]
    shown = [ModelTool("h_3f2a9c1d", "Probe tool.", Q, call_name="h_3f2a9c1d")]
    assert correlate(shown, server) == {"first": shown[0]}
    assert correlate(shown, server, {"h_3f2a9c1d": "second"}) == {"second": shown[0]}


def test_calls_the_client_ran_in_another_order_are_not_paired_by_position():
    made = [
        {"calls": [{"tool": "a", "model_name": "p-a"}, {"tool": "b", "model_name": "p-b"}]},
        {"calls": [{"tool": "ToolSearch", "model_name": "ToolSearch"}]},
    ]
    assert called_as(made, [{"name": "b"}, {"name": "a"}]) == {}
    # the one call the fake model meant for "a" reached the server as "c": that is c's tool
    assert called_as(made, [{"name": "b"}, {"name": "c"}]) == {"p-a": "c"}
    assert called_as(made, [{"name": "c"}, {"name": "d"}]) == {}  # two unknowns: no claim


def test_calibrate_honours_name_as_the_server_name_in_the_clients_config(tmp_path):
    recipe = tmp_path / "toy.yaml"
    recipe.write_text(
        json.dumps(
            {
                "profile": "claude-code",
                "client": "Toy",
                "kind": "app",
                "install": {},
                "version": "9.9.9",
                "provider": "anthropic",
                "files": {
                    "{workdir}/mcp.json": '{"mcpServers": {"{server_name}": {"command": '
                    '"{server_command}", "args": {server_args_json}}}}'
                },
                "env": {"ANTHROPIC_BASE_URL": "{model_url}", "ANTHROPIC_API_KEY": "{model_key}"},
                "run": ["{client}", "{workdir}/mcp.json", "{prompt}"],
                "timeout": 60,
            }
        )
    )
    r = run_cli(
        "calibrate",
        "--client",
        str(recipe),
        "--client-command",
        f"{sys.executable} {TOY}",
        "--probe",
        "dotted-name",
        "--name",
        "shop",
        "--json",
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr
    obs = json.loads(r.stdout)["record"]["probe_sets"]["dotted-name"]
    assert obs["server_name"] == "shop"
    assert obs["offered"] == ["mcp__shop__control", "mcp__shop__probe.dotted"]
    assert obs["tools"]["probe.dotted"]["name"] == "mcp__shop__probe.dotted"


def test_a_bad_name_is_an_input_error_naming_the_flag():
    r = run_cli("calibrate", "--client", "claude-code", "--client-command", "true", "--name", "a b")
    assert r.returncode == 2 and "--name" in r.stderr and "Traceback" not in r.stderr


def test_two_offered_tools_under_one_name_are_told_apart_by_content_not_by_the_call():
    """LlamaIndex shows collide.a and collide_a both as collide_a, and the call the fake model made
    for collide.a reached the server's collide_a: the call names neither offered tool, so the
    content says which one is collide_a (before, the first one listed was taken, and collide.a
    read as hidden)."""
    dot = {"type": "object", "properties": {"dot_a": {"type": "string"}}}
    under = {"type": "object", "properties": {"under_a": {"type": "string"}}}
    server = [
        {"name": "collide.a", "description": "Dot form.", "inputSchema": dot},
        {"name": "collide_a", "description": "Underscore form.", "inputSchema": under},
    ]
    shown = [
        ModelTool("collide_a", "Dot form.", dot, call_name="collide_a"),
        ModelTool("collide_a", "Underscore form.", under, call_name="collide_a"),
    ]
    got = correlate(shown, server, {"collide_a": "collide_a"})
    assert got == {"collide_a": shown[1], "collide.a": shown[0]}


def test_a_tool_that_got_two_calls_is_paired_with_the_one_carrying_its_arguments():
    """The server's clash_e got clash:e's call (LlamaIndex looks 'clash_e' up and finds the other
    tool) and its own; in whichever order they ran, clash_e's call is the one with its arguments."""

    ps = get_set("name-clash")
    tools = [
        {
            "type": "function",
            "function": {
                "name": t["name"].replace(":", "_").replace(".", "_").replace(" ", "_"),
                "description": t["description"],
                "parameters": t["inputSchema"],
            },
        }
        for t in ps.tools
    ]
    request = {"method": "POST", "api": "openai-chat", "body": {"messages": [], "tools": tools}}
    for first, second in [("colon_e", "under_e"), ("under_e", "colon_e")]:
        tap = [
            {
                "dir": "c2s",
                "message": {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "clash_e", "arguments": {key: "x"}},
                },
            }
            for i, key in enumerate((first, second))
        ]
        run = replace(
            list_only_run([]),
            recipe=harness.load_recipe("llamaindex"),
            stdout="",
            requests=[request],
            tap=tap,
        )
        calls = {c["tool"]: c for c in observe(run, ps)["calls"]}
        assert calls["clash_e"]["arguments"] == {"under_e": "x"}, first
        assert calls["clash:e"]["sent"] is False
