"""Which clients the default release gate requires: every profile but probes and opt-in configurations."""

from __future__ import annotations

from mcp_matrix.core.events import RunStarted
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.report.grid import default_required, gate_scope, opt_in


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
        "jetbrains-copilot",  # one issue-evidenced rule (the 128-tool cap), not a whole client
    }
    assert profiles["claude-code"].required_by_default


def test_every_run_of_a_merged_stream_adds_its_profiles():
    # merge of per-client shards: one run-started per shard, each read (the first alone was before)
    events = [
        RunStarted(run_id="a", profiles=({"name": "claude-code", "required_by_default": True},)),
        RunStarted(run_id="b", profiles=({"name": "zed", "required_by_default": True},)),
        RunStarted(
            run_id="c", profiles=({"name": "python-sdk-modern", "required_by_default": False},)
        ),
    ]
    assert default_required(events) == ("claude-code", "zed")
    assert default_required(list(reversed(events))) == ("zed", "claude-code")


def test_a_profile_required_in_any_shard_is_required():
    events = [
        RunStarted(profiles=({"name": "codex", "required_by_default": False},)),
        RunStarted(profiles=({"name": "codex", "required_by_default": True},)),
    ]
    assert default_required(events) == ("codex",)


def test_only_opt_in_configurations_are_exempt_from_fail_on_not_the_probes():
    events = started(
        {"name": "claude-code", "versions": "2.1.278", "required_by_default": True},
        {"name": "python-sdk-modern", "versions": "mcp 2.3.x", "required_by_default": False},
        {"name": "stale-cache", "versions": "probe", "required_by_default": False},
    )
    assert opt_in(events) == {"python-sdk-modern"}
    scope = gate_scope(events)
    assert not scope.judges("broken", "python-sdk-modern")  # opt-in: never failed on
    assert scope.judges("silent-loss", "stale-cache")  # a probe's verdict over --fail-on fails
    assert not scope.judges("hidden", "stale-cache")  # a tool a probe hides does not
    assert scope.judges("hidden", "claude-code")
    named = gate_scope(events, required=("claude-code", "python-sdk-modern"))
    assert named.judges("broken", "python-sdk-modern")
    assert not gate_scope(events, failing=()).judges("hidden", "claude-code")  # --fail-on none
