"""Retiring a deprecated alias: allowed only once every frozen-caller signal has been quiet.

The live, retry and transcript call files (the policy's ``recorded_calls`` and the alias's own)
are read for the last call that still uses the old name; each population must have been quiet
for ``retire_quiet_days`` (docs/design.md#rename-additively). A population not measured, or a
call without a timestamp, blocks the retirement.
"""

from __future__ import annotations

from typing import Any

from mcp_matrix.gate.aliases import QUIET_DAYS, SIGNALS, AliasRule, signal_files
from mcp_matrix.gate.checklist import Item
from mcp_matrix.gate.policy import Policy


def retirement_item(policy: Policy, rule: AliasRule, now: Any) -> Item:
    """(c) Retiring an alias: only when every frozen-caller signal has been quiet for retire_quiet_days."""
    import datetime as _dt

    from mcp_matrix.evolution.calls_file import calls_file, iter_calls

    days = int(policy.extra.get("retire_quiet_days", QUIET_DAYS))
    name = f"retiring alias {rule.label}: live, retry and transcript signals quiet for {days} days"
    last: dict[str, tuple[Any, str, str] | None] = {}
    undated: dict[str, int] = {}
    seen: set[str] = set()
    for path, population in signal_files(policy, rule):
        source = calls_file(path, population, given_by=f"{policy.source}: recorded_calls")
        seen.add(source.population)
        last.setdefault(source.population, None)
        for call, _ in iter_calls(source):
            if (
                call.tool != rule.tool
                or not isinstance(call.arguments, dict)
                or rule.old not in call.arguments
            ):
                continue
            if call.timestamp is None:
                undated[source.population] = undated.get(source.population, 0) + 1
                continue
            best = last.get(source.population)
            if best is None or call.timestamp > best[0]:
                last[source.population] = (call.timestamp, call.id, path.name)
    window = _dt.timedelta(days=days)
    parts, quiet = [], True
    for population in SIGNALS:
        if population not in seen:
            quiet = False
            parts.append(
                f"{population}: not measured (list a {population} calls file under recorded_calls)"
            )
            continue
        if undated.get(population):
            quiet = False
            parts.append(
                f"{population}: {undated[population]} calls using {rule.old} carry no timestamp"
            )
            continue
        found = last.get(population)
        if found is None:
            parts.append(f"{population}: no call uses {rule.old}")
            continue
        moment, call_id, file = found
        age = now - moment
        ok = age >= window
        quiet = quiet and ok
        parts.append(
            f"{population}: last use {moment.strftime('%Y-%m-%dT%H:%M:%SZ')} ({call_id} in {file}), "
            f"{age.days} days before {now.date().isoformat()}"
            + ("" if ok else f": not quiet (quiet from {(moment + window).date().isoformat()})")
        )
    how = "marked retire: true" if rule.retire else f"the new schema no longer declares {rule.old}"
    verdict = "allowed" if quiet else "blocked"
    return Item(name, quiet, f"retirement {verdict} ({how}); " + "; ".join(parts))


__all__ = ["retirement_item"]
