"""The hazard probe sets of issue 23 section 2 run live on real clients (pinned installs, cached
in ~/.cache/mcp-matrix/calibrate/, each run bounded by its recipe's timeout): client-side
validation, invalid and colliding names, a text-only answer to an outputSchema tool and schema
details, each compared cell by cell with the client's calibrated profile. A registry that cannot
be reached fails with the install error (exit 3), never a pass."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import run_cli

# recipe -> the new sets it runs here: Codex renames (dash, hash on collision) and rewrites
# schemas; Gemini CLI validates (formats, wait_for_previous), fails a text-only result and keeps
# the last of two tools that clean to one name.
LIVE = {
    "codex": ("name-chars", "name-collision", "schema-details"),
    "gemini-cli": ("validation", "output-text", "name-clash"),
}


def calibrate(*args: str) -> dict:
    r = run_cli("calibrate", *args, "--json", timeout=1100)
    assert r.returncode in (0, 1), (
        f"could not be calibrated (exit {r.returncode}): {r.stderr[-2000:]}"
    )
    return json.loads(r.stdout)


@pytest.mark.timeout(1200)  # a first install from the registry, then bounded client runs
@pytest.mark.parametrize("recipe", sorted(LIVE))
def test_the_real_client_does_what_its_profile_predicts_on_the_hazard_sets(recipe):
    args = ["--client", recipe]
    for s in LIVE[recipe]:
        args += ["--probe", s]
    doc = calibrate(*args)
    for set_id, obs in doc["record"]["probe_sets"].items():
        assert obs["outcome"] == "ok", f"{recipe} on {set_id}: {obs['outcome']}"
    drift = [c for c in doc["drift"] if not c["agree"]]
    assert not drift, f"{recipe}: {len(drift)} drifting cells, first: {drift[:3]}"
    if recipe == "gemini-cli":  # the two findings this set exists for, seen on the wire
        calls = {c["tool"]: c for c in doc["record"]["probe_sets"]["validation"]["calls"]}
        assert not calls["v_email"]["sent"] and calls["v_wait"]["sent"]
        assert calls["v_wait"]["arguments"] == {"w": "x", "wait_for_previous": False}
        result = {c["tool"]: c for c in doc["record"]["probe_sets"]["output-text"]["calls"]}
        assert result["text_result"]["sent"]  # the server did the work ...
        assert "did not return structured content" in result["text_result"]["result"]["text"]


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("recipe", ["codex", "claude-code"])
def test_of_two_tools_with_one_raw_name_only_the_first_reaches_the_model(recipe, tmp_path):
    """Exact duplicates (a server bug, or two pages listing one tool): Codex 0.171 and Claude
    Code 2.1.332 both keep the first and drop the second without a word."""
    tools = [
        {
            "name": "dup",
            "description": "Duplicate probe first.",
            "inputSchema": {"type": "object", "properties": {"first": {"type": "string"}}},
        },
        {
            "name": "dup",
            "description": "Duplicate probe second.",
            "inputSchema": {"type": "object", "properties": {"second": {"type": "string"}}},
        },
    ]
    (tmp_path / "dup.json").write_text(json.dumps(tools))
    server = f"{sys.executable} -m matrix_servers.probe --tools {tmp_path / 'dup.json'}"
    doc = calibrate("--client", recipe, "--stdio", server, "--name", "probe")
    obs = doc["record"]["probe_sets"]["target"]
    assert [n for n in obs["offered"] if n.endswith("dup")] == ["mcp__probe__dup"], obs["offered"]
    assert obs["tools"]["dup"]["description"] == "Duplicate probe first."
