"""matrix.api against real bundled servers: timeouts and env are honoured, cells come back typed."""

from __future__ import annotations

import json

import pytest

from matrix import api
from matrix.errors import InputError
from matrix.events import CallCell, DiscoveryCell


def test_snapshot_starts_the_server_with_the_env_given_and_masks_it():
    snap = api.snapshot(
        api.target(server="billing --version 1"),
        timeouts=api.Timeouts(initialize=60, list=60),
        env={"BILLING_TOKEN": "s3cret-value-42"},
    )
    assert snap.error is None and [t["name"] for _, t in snap.tools]
    assert snap.doc["target"]["env"] == {
        "BILLING_TOKEN": "***"
    }  # the target that was started had it
    assert "s3cret-value-42" not in json.dumps(snap.doc)
    cells = api.discover(snap, api.profiles(["cursor", "claude-code"]))
    assert all(isinstance(c, DiscoveryCell) for c in cells)
    assert {(c.profile, c.tool) for c in cells} == {
        (p, t["name"]) for p in ("cursor", "claude-code") for _, t in snap.tools
    }


def test_the_timeouts_given_bound_the_run_and_the_cells_are_typed():
    outcome = api.run(
        api.target(server="faulty --mode hang-on-call"),
        profiles=api.profiles(["claude-code"]),
        timeouts=api.Timeouts(initialize=60, list=60, call=1.0),
    )
    assert outcome.measured
    cell = outcome.cell("echo", "claude-code", "auto")
    assert isinstance(cell, CallCell) and cell.verdict == "broken" and "1.0s" in cell.reason
    assert outcome.verdict("echo", "claude-code") in ("visible", "degraded")
    assert (
        outcome.to_json()[0]["event"] == "run-started"
        and outcome.to_json()[-1]["event"] == "run-finished"
    )


def test_a_cell_the_run_did_not_make_is_a_key_error_naming_it():
    empty = api.RunOutcome(measured=True, interrupted=False, deadline_passed=False, events=())
    with pytest.raises(KeyError, match=r"no call cell echo\[zed\]::auto"):
        empty.cell("echo", "zed", "auto")


def test_two_targets_at_once_is_an_input_error():
    with pytest.raises(InputError, match="give one target, not stdio and server"):
        api.target(stdio="python -m x", server="memory")


def test_an_unknown_profile_is_an_input_error_with_did_you_mean():
    with pytest.raises(InputError, match="did you mean 'cursor'"):
        api.profiles(["cursr"])
