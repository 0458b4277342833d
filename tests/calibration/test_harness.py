"""The harness engine with real processes: a recipe runs a stand-in app against the fake model
and the tapped probe server, bounded in time, under a temporary HOME with a minimal env."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_matrix.calibrate.fake_model import ScriptedCall
from mcp_matrix.calibrate.harness import Recipe, ServerSpec, fill, load_recipe, run_recipe
from mcp_matrix.calibrate.tap import C2S, messages
from mcp_matrix.core.errors import InputError

TOY = str(Path(__file__).with_name("toy_client.py"))
TOOLS = [
    {
        "name": "echo",
        "description": "Echo.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "array"}}},
    }
]


def toy_recipe(**changes) -> Recipe:
    base = {
        "profile": "toy",
        "client": "Toy",
        "kind": "app",
        "version": "9.9.9",
        "provider": "anthropic",
        "files": {
            "{workdir}/mcp.json": '{"mcpServers": {"{server_name}": {"command": "{server_command}", "args": {server_args_json}}}}'
        },
        "env": {"ANTHROPIC_BASE_URL": "{model_url}", "ANTHROPIC_API_KEY": "{model_key}"},
        "run": (sys.executable, TOY, "{workdir}/mcp.json", "{prompt}"),
        "timeout": 60,
    }
    base.update(changes)
    return Recipe(**base)


def probe_server(tmp_path) -> ServerSpec:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return ServerSpec(argv=(sys.executable, "-m", "matrix_servers.probe", "--tools", str(path)))


def test_a_recipe_runs_its_client_against_the_fake_model_and_the_tapped_server(tmp_path):
    run = run_recipe(
        toy_recipe(),
        probe_server(tmp_path),
        [ScriptedCall("echo", {"a": "[1, 2]"})],
        client_command=None,
        install_root=tmp_path / "cache",
    )
    assert run.returncode == 0, run.stderr
    assert "Calibration finished." in run.stdout
    assert [r["answer"] for r in run.requests] == ["tool-calls", "text"]
    assert run.requests[0]["body"]["tools"][0]["name"] == "mcp__probe__echo"
    calls = [m for d, m in messages(run.tap) if d == C2S and m.get("method") == "tools/call"]
    assert calls[0]["params"]["arguments"] == {"a": "[1, 2]"}
    assert run.requests[0]["headers"]["x-api-key"] == "***"


def test_a_client_that_hangs_is_stopped_at_the_recipe_timeout_with_its_process_group(tmp_path):
    recipe = toy_recipe(
        env={
            "ANTHROPIC_BASE_URL": "{model_url}",
            "ANTHROPIC_API_KEY": "{model_key}",
            "TOY_HANG": "1",
        },
        timeout=8,  # long enough for the toy client to reach its hang at load 18 (3 s was not)
    )
    run = run_recipe(recipe, probe_server(tmp_path), [], install_root=tmp_path / "cache")
    assert run.timed_out and run.returncode is None
    assert [e for e in run.tap if e.get("event") == "exit"] or any(
        d == C2S for d, _ in messages(run.tap)
    )


def test_the_run_gets_a_minimal_env_and_a_temporary_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SECRET_TOKEN", "do-not-leak")
    script = tmp_path / "env.py"
    script.write_text("import json, os; print(json.dumps(dict(os.environ)))")
    recipe = toy_recipe(run=(sys.executable, str(script)), files={})
    run = run_recipe(recipe, probe_server(tmp_path), [], install_root=tmp_path / "cache")
    env = json.loads(run.stdout)
    assert "MY_SECRET_TOKEN" not in env
    assert env["HOME"].startswith(run.workdir) and env["MCP_MATRIX_PROVIDER"] == "anthropic"


def test_client_command_replaces_the_installed_binary_and_reads_its_version(tmp_path):
    script = tmp_path / "fake_cli.py"
    script.write_text("import sys; print('fake-cli 7.8.9' if '--version' in sys.argv else 'ran')")
    recipe = toy_recipe(run=("{install}/bin/never", "x"), files={})
    run = run_recipe(
        recipe,
        probe_server(tmp_path),
        [],
        client_command=[sys.executable, str(script)],
        install_root=tmp_path / "cache",
    )
    assert run.stdout.strip() == "ran" and run.client_version == "7.8.9"


def test_templates_fill_known_placeholders_and_leave_json_braces_alone():
    assert fill('{"a": {home}, "b": {other}}', {"home": "1"}) == '{"a": 1, "b": {other}}'


def test_a_recipe_with_an_unknown_key_is_an_input_error_naming_it(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "profile: x\nclient: X\nkind: app\ninstall: {}\nversion: '1'\nprovider: anthropic\nrun: [x]\nrunn: [y]\n"
    )
    with pytest.raises(InputError, match="runn"):
        load_recipe(str(bad))


def test_an_unknown_client_name_suggests_the_known_ones():
    with pytest.raises(InputError, match="no harness recipe"):
        load_recipe("claude-cod")
