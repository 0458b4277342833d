"""The schema-evolution items of the release checklist (docs/evolution.md).

(a) no breaking change against the policy's ``baseline`` without an alias; (b) each deprecated
alias still accepted, its recorded old-name calls replayed against the live target by the
caller (``release``), which passes the replay report in; (c) an alias retired only once the
live, retry and transcript signals are quiet (``retirement``). Nothing here contacts a server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.gate.aliases import AliasRule, alias_absent, alias_rules
from mcp_matrix.gate.checklist import Item
from mcp_matrix.gate.policy import Policy
from mcp_matrix.gate.retirement import retirement_item


def evolution_items(
    policy: Policy,
    *,
    new: Any,
    baseline: object,
    profiles: list,
    now: object,
    alias_replay: Callable[[AliasRule], dict] | None = None,
) -> list[Item]:
    """The evolution items of the release checklist, each passed or failed with its evidence.

    ``new`` and ``baseline`` are snapshots (``None`` when not available); ``profiles`` the
    client profiles that must keep working (the policy's ``required_clients``); ``now`` an aware
    datetime; ``alias_replay(rule)`` replays the rule's recorded old-name calls against the live
    target and returns the replay report (``format: mcp-matrix.replay``); None when there is no
    live target. Nothing here contacts a server.
    """
    rules = alias_rules(policy)
    items: list[Item] = []
    if policy.extra.get("baseline"):
        items += _breaking_items(policy, new, baseline, profiles, rules)
    for rule in rules:
        retiring = rule.retire or alias_absent(new, rule)
        if not rule.retire:
            items.append(_accepted_item(rule, new, alias_replay))
        if retiring:
            items.append(retirement_item(policy, rule, now))
    return items


def _breaking_items(
    policy: Policy, new: Any, baseline: Any, profiles: list, rules: list[AliasRule]
) -> list[Item]:
    """(a) No breaking change against the baseline for the required clients, unless an alias covers it."""
    from mcp_matrix.evolution.diff import diff_snapshots

    who = ", ".join(p.name for p in profiles) or "no client"
    name = f"no breaking change against the baseline for {who}"
    if baseline is None or new is None:
        missing = (
            "the baseline snapshot"
            if baseline is None
            else "a snapshot of the new version (run with a target)"
        )
        return [Item(name, False, f"cannot compare: {missing} is missing")]
    diff = diff_snapshots(baseline, new, profiles)
    breaking = [c for c in diff.changes if c.severity == "breaking"]
    if not breaking:
        return [
            Item(
                name,
                True,
                f"{len(diff.changes)} changes from {baseline.source or 'the baseline'}, none breaking "
                f"for {who}",
            )
        ]
    items = []
    for change in breaking:
        rule = next(
            (r for r in rules if r.tool == change.tool and change.param in (r.old, r.new)), None
        )
        why = "; ".join(change.reasons) or change.message
        if rule is not None:
            items.append(
                Item(
                    f"breaking change {change.id} is covered by an alias",
                    True,
                    f"{change.message} ({why}); covered by the policy's alias {rule.label}: "
                    + (
                        "its retirement is checked below"
                        if rule.retire
                        else "it must still be accepted (below)"
                    ),
                )
            )
        else:
            items.append(
                Item(
                    f"no breaking change {change.id} without an alias",
                    False,
                    f"{change.message} ({why}); keep the old name as a deprecated alias mapped at the "
                    "boundary, and list it under aliases in the policy",
                )
            )
    return items


def _accepted_item(
    rule: AliasRule, new: JSON, alias_replay: Callable[[AliasRule], dict] | None
) -> Item:
    """(b) The deprecated alias is still accepted: its recorded old-name calls, replayed, are not refused for the name."""
    name = f"deprecated alias {rule.label} is still accepted"
    declared = (
        ""
        if new is None or not alias_absent(new, rule)
        else f"the new schema of {rule.tool} no longer declares {rule.old}; "
    )
    if not rule.calls:
        return Item(
            name, False, declared + "no recorded calls listed under calls: to prove it with"
        )
    if alias_replay is None:
        return Item(
            name,
            False,
            declared + "needs a live target to replay the recorded calls: run check with "
            "--server, --stdio or --http",
        )
    report = alias_replay(rule)
    if not report.get("measured", True):
        return Item(name, False, f"the target could not be measured: {report.get('error')}")
    keys = (
        "accepted",
        "refused_under_both_names",
        "refused_for_the_old_name",
        "lost_or_unreachable",
        "not_probed",
    )
    total: dict[str, int] = dict.fromkeys(("uses", *keys), 0)
    bad_in: dict[str, int] = {}  # profile -> old-name calls not accepted for the name's sake
    examples: list[str] = []
    for r in report.get("results", []):
        a = r.get("alias") or {}
        total["uses"] += a.get("uses", 0)
        for k in keys:
            total[k] += a.get(k, {}).get("count", 0)
        bad = sum(a.get(k, {}).get("count", 0) for k in keys[2:])
        bad_in[r["profile"]] = bad_in.get(r["profile"], 0) + bad
        examples += [
            f"{e['id']} ({e['reason']})" for e in r.get("examples", {}).get("alias-refused", [])[:1]
        ]
    uses, accepted, both, refused, other, unprobed = (total[k] for k in ("uses", *keys))
    files = ", ".join(p.name for p in rule.calls)
    if uses == 0:
        return Item(
            name,
            False,
            declared
            + f"no recorded call in {files} uses {rule.old} on {rule.tool}: nothing proves it",
        )
    from mcp_matrix.evolution.replay import rate_text

    words = (
        f"replayed the calls using {rule.old} in {files} through {', '.join(bad_in)}: "
        f"{rate_text(accepted, uses)} accepted, {rate_text(both, uses)} refused under both names (not about the name), "
        f"{rate_text(refused, uses)} refused because of the old name"
    )
    if other:
        words += f", {rate_text(other, uses)} lost silently, unreachable or broken"
    if unprobed:
        words += f", {rate_text(unprobed, uses)} refused and not probed with {rule.new} (the tool is not repeat-safe)"
    failing = [c for c, bad in bad_in.items() if bad]
    if failing:
        words += f"; failing in {', '.join(failing)}"
    if examples:
        words += f"; e.g. {examples[0]}"
    return Item(name, not (refused or other or unprobed), declared + words)


__all__ = ["evolution_items"]
