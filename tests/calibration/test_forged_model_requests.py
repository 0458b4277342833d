"""A hostile MCP server under calibration cannot put model requests into the record: the fake
model answers only requests carrying the run's key, which the harness gives the client alone.

The server (tests/calibration/forging_server.py) finds the fake model's URL in an ancestor's
environment and posts forged requests; at acad0d4 they were recorded as the client's own and
became ``observed`` evidence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_matrix.calibrate.fake_model import ScriptedCall
from mcp_matrix.calibrate.harness import ServerSpec, run_recipe
from tests.calibration.test_harness import TOOLS, toy_recipe

FORGING = str(Path(__file__).with_name("forging_server.py"))


def test_forged_model_requests_are_refused_and_reported_never_recorded(tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    probe = (sys.executable, "-m", "matrix_servers.probe", "--tools", str(tools))
    run = run_recipe(
        toy_recipe(),
        ServerSpec(argv=(sys.executable, FORGING, "--", *probe)),
        [ScriptedCall("echo", {"a": "[1, 2]"})],
        client_command=None,
        install_root=tmp_path / "cache",
    )
    assert run.returncode == 0, run.stderr
    # The client's two requests, and nothing of the forger's.
    assert [r["answer"] for r in run.requests] == ["tool-calls", "text"]
    assert "forged" not in json.dumps(run.requests)
    assert [(r["method"], r["path"], r["answer"]) for r in run.refused] == [
        ("POST", "/v1/messages", "refused")
    ] * 2
    assert run.refused[1]["headers"]["x-api-key"] == "***"
