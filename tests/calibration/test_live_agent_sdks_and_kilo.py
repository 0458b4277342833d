"""Kilo Code CLI, the Claude Agent SDK (TypeScript and Python), the OpenAI Agents SDK for
JavaScript and smolagents, live: each pinned release is installed once (cached in ~/.cache/mcp-matrix/calibrate/),
run unmodified against the fake model endpoint and the tapped probe server through the real
``mcp-matrix calibrate``, and its profile must predict every cell. The probe sets chosen are the
ones where each differs from its nearest older profile. A registry that cannot be reached fails
the test with the install error (exit 3), never a pass.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

# recipe -> probe sets (the recorded calibrations cover every set offline)
LIVE = {
    "kilo-cli": ("core",),
    "claude-agent-sdk": ("name-collision", "output-text"),
    "claude-agent-sdk-py": ("name-collision", "output-text"),
    "openai-agents-js": ("core", "name-chars", "name-collision"),
    "smolagents": ("core", "validation", "name-chars"),
}
TIMEOUT = 1200  # a cold install (Kilo's native binary is ~100 MB), then bounded client runs


def calibrate(recipe: str) -> dict:
    args = ["calibrate", "--client", recipe, "--json"]
    for s in LIVE[recipe]:
        args += ["--probe", s]
    r = run_cli(*args, timeout=TIMEOUT - 100)
    assert r.returncode in (0, 1), (
        f"{recipe} could not be calibrated (exit {r.returncode}): {r.stderr[-2000:]}"
    )
    return json.loads(r.stdout)


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("recipe", sorted(LIVE))
def test_the_real_client_does_exactly_what_its_calibrated_profile_predicts(recipe):
    doc = calibrate(recipe)
    drift = [c for c in doc["drift"] if not c["agree"]]
    assert not drift, f"{recipe}: {len(drift)} drifting cells, first: {drift[:3]}"


@pytest.mark.timeout(TIMEOUT)
def test_openai_agents_js_opens_a_closed_root_and_stops_on_a_cleaned_name_collision():
    """What sets it apart from the Python SDK's profile: additionalProperties false -> true,
    '-' -> '_', and a UserError (no model request) when two names clean alike."""
    sets = calibrate("openai-agents-js")["record"]["probe_sets"]
    keywords = sets["core"]["tools"]["keywords"]
    assert keywords["present"] and keywords["schema"]["additionalProperties"] is True
    assert sets["name-chars"]["tools"]["dash-name"]["name"] == "dash_name"
    collision = sets["name-collision"]
    assert collision["outcome"] == "list-failed"
    assert "Duplicate tool names" in collision["driver"]["error"]


@pytest.mark.timeout(TIMEOUT)
def test_smolagents_fails_the_whole_run_on_a_tool_without_properties():
    """The core set holds {type: object} with no properties: mcpadapt raises KeyError and no
    tool of the server reaches the model, which the profile predicts (server-dropped)."""
    core = calibrate("smolagents")["record"]["probe_sets"]["core"]
    assert core["outcome"] == "list-failed"
    assert core["driver"]["error"] == "'properties'"
    assert not any(t["present"] for t in core["tools"].values())
