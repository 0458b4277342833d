"""Library profiles against their libraries, live: every library recipe has a record (which
tests/calibration/test_calibrated_profiles.py holds to 100% agreement offline), and each library is installed at its
pinned version (cached in ``~/.cache/mcp-matrix/calibrate``) and run again on the probe sets
that show its main behaviours, through the real ``mcp-matrix calibrate``; the drift must be
empty. A registry that cannot be reached fails the live test with the install error (exit 3),
never a pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_matrix.calibrate import harness

CALIBRATIONS = Path(harness.harness_dir()).parent / "calibrations"
LIBRARY_RECIPES = [n for n in harness.recipe_names() if harness.load_recipe(n).kind == "library"]
# Per library (one recipe each), the probe set that best shows what its profile models; the
# recorded calibrations cover every set offline. One set each: 232 s with 2 workers on this
# shared 2-core machine under load (2026-12-01), installs cached.
LIVE = {
    "python-sdk": ("no-type",),
    "ts-sdk": ("root-not-object",),
    "openai-agents-strict": ("core",),
    "langchain": ("core",),
    "langchain-anthropic": ("root-anyof",),
    "langchain-google": ("core",),
    "google-adk": ("core",),
    "pydantic-ai": ("core",),
    "litellm": ("core",),
    "fast-agent": ("long-name",),
    "fast-agent-010": ("no-type", "name-collision"),  # Python >= 3.13: a missing one fails (exit 3)
    "vercel-ai-sdk": ("paged",),
    "llamaindex": ("root-anyof", "dotted-name"),  # pydantic rebuild; renamed tools uncalled
    "agent-framework": ("validation", "root-anyof"),  # top-level checks; unknown keys dropped
}
LIVE_TIMEOUT = 900  # seconds for one library: a cold install of the larger ones takes minutes


def latest_record(profile: str) -> Path | None:
    folder = CALIBRATIONS / profile
    records = (
        sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime) if folder.is_dir() else []
    )
    return records[-1] if records else None


def test_every_live_library_has_a_calibration_record():
    missing = [n for n in LIVE if latest_record(n) is None]
    assert missing == []


def test_every_live_library_has_a_recipe():
    assert set(LIVE) <= set(LIBRARY_RECIPES)


@pytest.mark.timeout(LIVE_TIMEOUT)
@pytest.mark.parametrize("name", sorted(LIVE))
def test_the_installed_library_does_what_its_profile_predicts(name):
    argv = [sys.executable, "-m", "mcp_matrix", "calibrate", "--client", name, "--json"]
    for set_id in LIVE[name]:
        argv += ["--probe", set_id]
    done = subprocess.run(
        argv, check=False, capture_output=True, text=True, timeout=LIVE_TIMEOUT - 30
    )
    if done.returncode == 3 or not done.stdout.strip():
        pytest.fail(
            f"{name} could not be run (exit {done.returncode}): {done.stderr.strip()[-1500:]}"
        )
    doc = json.loads(done.stdout)
    unmeasured = [
        s for s, o in doc["record"]["probe_sets"].items() if o["outcome"] == "no-model-request"
    ]
    disagree = [c for c in doc["drift"] if not c["agree"]]
    assert (unmeasured, disagree) == ([], [])
    assert done.returncode == 0
