"""fast-agent 0.10.48 live: one tool the MCP Python SDK 2.x gate rejects ends the whole agent
run, the tools of every other server with it, which is why the ``fast-agent-010`` profile follows
``python-sdk-gate`` with ``list-failure-raises`` (the 0.2.36 profile, on mcp 1.x, has no gate).

The client is installed at its pin (cached, ~/.cache/mcp-matrix/calibrate/); it needs Python
>= 3.13, found on PATH or under pyenv: when none is there, or the registry cannot be reached, the
test fails with the install error, never a pass or a skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_matrix.calibrate import harness, probe
from mcp_matrix.calibrate.drift import predict
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.simulate.discovery import client_view, initial_state

INSTALL_AND_RUN = 900  # seconds: a cold install of fast-agent 0.10 took about 5 minutes here
SCRIPT = Path(__file__).with_name("fast_agent_two_servers.py")


def _tools_file(folder: Path, set_id: str) -> str:
    path = folder / f"{set_id}.json"
    path.write_text(json.dumps(list(probe.PROBE_SETS[set_id].tools)))
    return str(path)


@pytest.mark.timeout(INSTALL_AND_RUN)
def test_a_type_less_input_schema_on_one_server_ends_the_run_for_every_server(tmp_path):
    recipe = harness.load_recipe("fast-agent-010")
    try:
        folder = harness.install(recipe)
    except harness.InstallError as exc:
        pytest.fail(f"fast-agent {recipe.version} could not be installed: {exc}")
    argv = [
        str(folder / "venv" / "bin" / "python"),
        str(SCRIPT),
        sys.executable,
        _tools_file(tmp_path, "core"),
        _tools_file(tmp_path, "no-type"),
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        argv, check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert lines, done.stderr[-1500:]
    outcome = json.loads(lines[-1])
    assert "tools" not in outcome  # not even the good server's 13 tools
    assert outcome["error_type"] == "ValidationError"
    assert "inputSchema.type" in outcome["error"]


def test_the_profile_drops_the_server_and_says_the_whole_run_fails_naming_the_culprit():
    profile = load_profiles()["fast-agent-010"]
    set_ = probe.PROBE_SETS["no-type"]
    view = client_view(profile, initial_state([(0, t) for t in set_.tools], "probe"))
    assert view.outcome == "server-dropped"
    assert {v.verdict for v in view.tools} == {"server-dropped"}
    assert {v.findings[-1].blast_radius for v in view.tools} == {"run"}
    control = next(v for v in view.tools if v.tool == "control")
    assert control.findings[-1].culprit == "no_type"
    assert "the agent run fails" in control.findings[-1].message


def test_calibration_predicts_no_tool_reaches_the_model_and_the_run_fails():
    """The client raised, so nothing is sent (unlike a model API refusing, where the client's
    side is compared as sent), and the failure is the run's: the record's list-failed."""
    profile = load_profiles()["fast-agent-010"]
    final = predict(profile, probe.PROBE_SETS["no-type"], "probe")
    assert (final["outcome"], final["scope"]) == ("server-dropped", "run")
    assert [t for t, p in final["tools"].items() if p["present"]] == []
