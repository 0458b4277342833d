"""Which clients the default release gate requires: every profile but probes and opt-in configurations."""

from __future__ import annotations

from matrix.checklist import default_required
from matrix.events import RunStarted
from matrix.profiles.loader import load_profiles


def started(*profiles: dict) -> list[RunStarted]:
    return [RunStarted(profiles=profiles)]


def test_profiles_marked_not_required_by_default_are_left_out():
    events = started(
        {"name": "claude-code", "versions": "2.1.278", "required_by_default": True},
        {"name": "python-sdk-modern", "versions": "mcp 2.3.x", "required_by_default": False},
    )
    assert default_required(events) == ("claude-code",)


def test_results_written_before_the_field_still_leave_out_the_probes():
    events = started(
        {"name": "codex", "versions": "0.171"}, {"name": "stale-cache", "versions": "probe"}
    )
    assert default_required(events) == ("codex",)


def test_the_bundled_probes_and_opt_in_configurations_are_not_required_by_default():
    profiles = load_profiles()
    optional = {n for n, p in profiles.items() if not p.abstract and not p.required_by_default}
    assert optional == {
        "stale-cache",
        "stale-serialiser",
        "claude-code-stdio-negotiation",
        "python-sdk-modern",
    }
    assert profiles["claude-code"].required_by_default
