"""The release checklist assembled (``mcp-matrix check``, and any caller): a policy over a run.

``release_items`` gives the policy's items over a run's events, then, when the policy names a
baseline or aliases, the evolution items: the baseline compared with the run's snapshot (taken
live from the target when the events hold none), and each alias's recorded calls replayed
against the target (mcp_matrix.evolution.replay). Nothing here prints.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from pathlib import Path

from mcp_matrix.core.events import Event, SnapshotTaken, typed_events
from mcp_matrix.evolution.calls_file import calls_file, check_files, population_from_name
from mcp_matrix.evolution.replay import Alias, ReplayConfig, replay
from mcp_matrix.gate.aliases import AliasRule
from mcp_matrix.gate.checklist import Item, evaluate
from mcp_matrix.gate.evolution_items import evolution_items
from mcp_matrix.gate.policy import Policy, policy_path
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot, load_snapshot, take_snapshot
from mcp_matrix.wire.session import Timeouts


def policy_baseline(policy: Policy, given: str | Path | None = None) -> str | Path | None:
    """The baseline snapshot: the one given, else the policy's (relative to its file), else none."""
    if given:
        return given
    named = policy.extra.get("baseline")
    return policy_path(policy, named) if named else None


def release_items(
    events: Sequence[Event],
    policy: Policy,
    *,
    target: Target | None,
    timeouts: Timeouts,
    now: _dt.datetime,
    baseline: str | Path | None = None,
    clients: Sequence[str] = (),
    extra_dirs: Sequence[str | Path] = (),
) -> list[Item]:
    """Every checklist item, passed or failed, with its evidence. ``clients`` pick the profiles
    of the evolution items when the policy requires none; ``now`` judges alias retirement."""
    events = typed_events(events)
    items = evaluate(events, policy)
    if not any(policy.extra.get(k) for k in ("baseline", "aliases")):
        return items
    new = _new_snapshot(events, target, timeouts)
    given = policy_baseline(policy, baseline)
    profiles = select_profiles(
        load_profiles(extra_dirs=extra_dirs), list(policy.required_clients or ()) or list(clients)
    )

    def alias_replay(rule: AliasRule) -> dict:
        files = [
            calls_file(p, population_from_name(p) or "live", given_by=f"{policy.source}: aliases")
            for p in rule.calls
        ]
        check_files(files)
        alias = Alias(rule.tool, rule.old, rule.new)
        config = ReplayConfig(
            files=files,
            profiles=profiles,
            target=target,
            retries=0,
            timeouts=timeouts,
            only=alias.used_by,
            alias=alias,
        )
        return replay(config).to_json()

    return items + evolution_items(
        policy,
        new=new,
        baseline=load_snapshot(given) if given else None,
        profiles=profiles,
        now=now,
        alias_replay=alias_replay if target is not None else None,
    )


def _new_snapshot(
    events: Sequence[Event], target: Target | None, timeouts: Timeouts
) -> Snapshot | None:
    """The release's snapshot: the run's own, else taken from the target; None when it failed."""
    doc = next((e.snapshot for e in events if isinstance(e, SnapshotTaken)), None)
    new = Snapshot(doc, source="the results' snapshot") if doc else None
    if new is None and target is not None:
        new = Snapshot(take_snapshot(target, timeouts=timeouts), source="live")
    return None if new is None or new.error else new


__all__ = ["policy_baseline", "release_items"]
