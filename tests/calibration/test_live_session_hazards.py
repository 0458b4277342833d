"""Per-tool vs whole-session failure, live: Claude Code 2.1.332 and 2.1.278 (each pinned release
installed once, cached in ~/.cache/mcp-matrix/calibrate/) run unmodified through the real
``mcp-matrix calibrate`` on the probe sets bad-key, root-if and long-description, and each
profile must predict every cell. A registry that cannot be reached fails the test with the
install error (exit 3), never a pass.
"""

from __future__ import annotations

import json

import pytest

from mcp_matrix.calibrate.probe import DESCRIPTION_5K
from tests.conftest import run_cli

SETS = ("bad-key", "root-if", "long-description")
TIMEOUT = 900  # a cold install, then three client runs of at most the recipe's timeout each


def calibrate(recipe: str) -> dict:
    args = ["calibrate", "--client", recipe, "--json"]
    for s in SETS:
        args += ["--probe", s]
    r = run_cli(*args, timeout=TIMEOUT - 100)
    assert r.returncode in (0, 1), (
        f"{recipe} could not be calibrated (exit {r.returncode}): {r.stderr[-2000:]}"
    )
    return json.loads(r.stdout)


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(
    ("recipe", "bad_key_shown", "cut"),
    [("claude-code", False, 4096), ("claude-code-278", True, 2048)],
)
def test_claude_code_skips_the_bad_key_tool_or_sends_it_and_cuts_descriptions_as_predicted(
    recipe, bad_key_shown, cut
):
    doc = calibrate(recipe)
    drift = [c for c in doc["drift"] if not c["agree"]]
    assert not drift, f"{recipe}: {len(drift)} drifting cells, first: {drift[:3]}"
    sets = doc["record"]["probe_sets"]
    assert sets["bad-key"]["tools"]["control"]["present"]
    assert sets["bad-key"]["tools"]["bad_key"]["present"] is bad_key_shown
    assert sets["root-if"]["tools"]["root_if"]["present"]
    said = sets["long-description"]["tools"]["long_text"]["description"]
    assert said == DESCRIPTION_5K[:cut] + "… [truncated]"
