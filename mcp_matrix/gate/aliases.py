"""The policy's deprecated aliases, and the recorded-call files that carry the frozen-caller signals.

Each entry of ``aliases`` names a tool, its old and new parameter names, the recorded calls
that prove the old name is still accepted, and whether it is being retired; ``recorded_calls``
lists the live, retry and transcript call files (docs/evolution.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_matrix.gate.policy import Policy, policy_path

QUIET_DAYS = 50  # docs/design.md#rename-additively: "about fifty days" once the live, retry and replay signals are quiet
SIGNALS = ("live", "retry", "transcript")


@dataclass(frozen=True)
class AliasRule:
    """One entry of the policy's ``aliases``, its call files resolved against the policy's folder."""

    tool: str
    old: str
    new: str
    calls: tuple[Path, ...] = ()
    retire: bool = False

    @property
    def label(self) -> str:
        return f"{self.tool}.{self.old} -> {self.new}"


def alias_rules(policy: Policy) -> list[AliasRule]:
    """The policy's ``aliases``, their call files relative to the policy's folder."""
    out = []
    for a in policy.extra.get("aliases", ()):
        calls = a.get("calls", ())
        calls = [calls] if isinstance(calls, str) else list(calls)
        out.append(
            AliasRule(
                a["tool"],
                a["old"],
                a["new"],
                tuple(policy_path(policy, c) for c in calls),
                bool(a.get("retire", False)),
            )
        )
    return out


def signal_files(policy: Policy, rule: AliasRule | None = None) -> list[tuple[Path, str | None]]:
    """The recorded-call files that carry the frozen-caller signals: ``recorded_calls`` and the alias's own."""
    out: dict[Path, str | None] = {}
    for entry in policy.extra.get("recorded_calls", ()):
        file, population = (
            (entry, None) if isinstance(entry, str) else (entry["file"], entry.get("population"))
        )
        out.setdefault(policy_path(policy, file), population)
    for path in rule.calls if rule else ():
        out.setdefault(path, None)
    return list(out.items())


def alias_absent(new: Any, rule: AliasRule) -> bool:
    """The new schema no longer declares the old name (the alias is retired in fact)."""
    if new is None:
        return False
    tool = next(
        (t for _, t in new.tools if isinstance(t, dict) and t.get("name") == rule.tool), None
    )
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    props = schema.get("properties") if isinstance(schema, dict) else None
    return not (isinstance(props, dict) and rule.old in props)


__all__ = ["QUIET_DAYS", "SIGNALS", "AliasRule", "alias_absent", "alias_rules", "signal_files"]
