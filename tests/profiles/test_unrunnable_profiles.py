"""Profiles of clients that cannot be run here say so, and why, in one consistent sentence.

Issue 23 names the clients no harness can run on this machine (desktop apps and an editor
extension on none of the registries reached here). Their profiles carry no calibration record,
so a reader must be told that every rule rests on the cited source, issue or doc evidence:
`models` (what `mcp-matrix profiles show NAME` prints) opens that sentence with MARK.
"""

from __future__ import annotations

from mcp_matrix.calibrate.harness import load_recipe, recipe_names
from mcp_matrix.calibrate.record import latest_record
from mcp_matrix.profiles.loader import load_profiles
from tests.conftest import run_cli_in_process

MARK = "Cannot be run here: "
UNRUNNABLE = ("zed", "goose", "roo-code", "cursor", "windsurf", "claude-desktop", "crush")


def test_each_unrunnable_client_says_it_cannot_be_run_here_and_why():
    profiles = load_profiles()
    for name in UNRUNNABLE:
        models = profiles[name].models
        assert MARK in models, f"{name}: its models paragraph does not say {MARK!r}"
        why = models.split(MARK, 1)[1]
        assert "registries this machine reaches" in why, f"{name}: no reason given"
        assert latest_record(name) is None, f"{name} has a calibration record: it was run"


def test_no_profile_that_says_it_cannot_be_run_has_a_harness():
    calibrated = {load_recipe(r).profile for r in recipe_names()}
    said = {p.name for p in load_profiles().values() if MARK in p.models}
    assert said >= set(UNRUNNABLE)
    assert not said & calibrated, f"a harness runs {said & calibrated}, yet its profile says not"


def test_profiles_show_prints_why_a_client_cannot_be_run():
    done = run_cli_in_process("profiles", "show", "goose")
    text = " ".join(done.stdout.split())  # the terminal wraps the paragraph
    assert done.returncode == 0 and "Cannot be run here" in text and "goose-sdk" in text
