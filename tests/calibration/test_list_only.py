"""A list-only recipe (``list_only: true``, Amp): the tools come from what the client's driver
listed, with no model request; the record says its calls were not compared, and drift compares
the discovery cells only. The live run calibrates the real Amp CLI (npm, cached) on one set."""

from __future__ import annotations

import json
import subprocess
import sys

from mcp_matrix.calibrate import harness, probe
from mcp_matrix.calibrate.drift import drift
from mcp_matrix.calibrate.record import observe
from mcp_matrix.profiles.loader import load_profiles


def _run(listed: list[dict]) -> harness.HarnessRun:
    line = {
        "ok": True,
        "error": None,
        "error_type": None,
        "tools_seen": [],
        "notes": {"listed": listed},
    }
    return harness.HarnessRun(
        recipe=harness.load_recipe("amp"),
        client_version="0",
        argv=[],
        returncode=0,
        timed_out=False,
        seconds=1.0,
        stdout=json.dumps(line) + "\n",
        stderr="",
        requests=[],
        tap=[],
    )


def test_the_amp_recipe_is_list_only():
    assert harness.load_recipe("amp").list_only is True
    assert harness.load_recipe("claude-code").list_only is False


def test_listed_tools_are_observed_by_content_and_calls_are_not_compared():
    ps = probe.PROBE_SETS["dotted-name"]
    listed = [
        {
            "name": f"mcp__probe__{t['name'].replace('.', '_')}",
            "description": t.get("description"),
            "inputSchema": t["inputSchema"],
        }
        for t in ps.tools
    ]
    obs = observe(_run(listed), ps)
    assert obs["outcome"] == "ok" and obs["calls_compared"] is False and obs["model_requests"] == 0
    raw = next(t for t in ps.tools if t["name"] == "probe.dotted")
    assert obs["tools"]["probe.dotted"] == {
        "present": True,
        "name": "mcp__probe__probe_dotted",
        "schema": raw["inputSchema"],
        "description": raw.get("description"),
    }
    cells = drift(load_profiles()["amp"], ps, obs)
    assert cells and {c.aspect for c in cells} <= {"visible", "name", "schema", "description"}


def test_an_empty_list_is_no_probe_tools_not_a_pass():
    obs = observe(_run([]), probe.PROBE_SETS["dotted-name"])
    assert obs["outcome"] == "no-probe-tools"
    assert not any(t["present"] for t in obs["tools"].values())


def test_amp_lists_the_probe_tools_live():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_matrix",
            "calibrate",
            "--client",
            "amp",
            "--probe",
            "dotted-name",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    doc = json.loads(done.stdout)
    ps = doc["record"]["probe_sets"]["dotted-name"]
    assert ps["calls_compared"] is False and ps["outcome"] == "ok"
    assert ps["tools"]["probe.dotted"]["name"] == "mcp__probe__probe_dotted"
    assert all(c["aspect"] != "arguments" for c in doc["drift"])
