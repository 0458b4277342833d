"""The calibration suite against the real clients: install each pinned app (cached in
~/.cache/mcp-matrix/calibrate/), run it on the core probe set through the real CLI, and assert that
its calibrated profile predicts every cell it was observed doing.

A registry that cannot be reached fails the test with the install error (exit 3), never a pass.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

# recipe -> the probe sets run here (core covers per-tool and per-argument behaviours; the
# root-anyof set is the headline difference between the two Claude Code eras; coercion and
# big-int hold the two clients whose coercion rules differ most, a few seconds each).
LIVE = {
    "claude-code": ("core", "root-anyof", "coercion", "big-int"),
    "claude-code-deferred": ("core", "root-anyof"),  # the default mode: tools loaded by ToolSearch
    "claude-code-278": ("core", "root-anyof"),
    "claude-code-legacy": ("paged",),
    "codex": ("core",),
    "gemini-cli": ("core",),
    "qwen-code": ("core", "coercion", "big-int"),
    "opencode": ("core",),
    "copilot-cli": ("core", "long-name"),
    "cline-cli": ("core", "big-int"),
    "continue-cli": ("core", "output-schema"),
    "llm": ("core", "output-text"),  # llm + llm-tools-mcp: server line, session per call
}


@pytest.mark.timeout(1200)  # a first install from the registry, then a bounded client run
@pytest.mark.parametrize("recipe", sorted(LIVE))
def test_the_real_client_does_exactly_what_its_calibrated_profile_predicts(recipe):
    args = ["calibrate", "--client", recipe, "--json"]
    for s in LIVE[recipe]:
        args += ["--probe", s]
    r = run_cli(*args, timeout=1100)
    assert r.returncode in (0, 1), (
        f"{recipe} could not be calibrated (exit {r.returncode}): {r.stderr[-2000:]}"
    )
    doc = json.loads(r.stdout)
    for set_id, obs in doc["record"]["probe_sets"].items():
        assert obs["outcome"] != "no-model-request", (
            f"{recipe} never asked its model on {set_id}: {obs}"
        )
    drift = [c for c in doc["drift"] if not c["agree"]]
    assert not drift, f"{recipe}: {len(drift)} drifting cells, first: {drift[:3]}"
    assert r.returncode == 0
