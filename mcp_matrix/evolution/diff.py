"""``diff OLD NEW``: every change between two snapshots, per client and per population of callers.

Stages, each returning new values (nothing is mutated):

1. ``changes.compare_lists``: the two tool lists compared schema by schema, each change with
   a base severity and representative calls;
2. ``effects``: discovery on both snapshots for every profile, then each change's effect per
   profile (hidden, degraded, a call refused or stripped) and per population (live, retry,
   transcript);
3. the final severity: the base, made worse by what the effects show (a tool hidden in a
   client, a frozen call refused, a field silently stripped), with the reasons;
4. ``guidance.advice``: what to do instead.

The result is a ``Diff``; ``Diff.to_json`` is the machine format (``format: mcp-matrix.diff``,
``version: 1``, docs/evolution.md). Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mcp_matrix import __version__
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import read_only, tools_by_name
from mcp_matrix.core.verdicts import BY_NAME, LOST, SILENT_CHANGE, V, rank
from mcp_matrix.evolution.changes import compare_lists
from mcp_matrix.evolution.discovery_effects import discovery_effects
from mcp_matrix.evolution.effects import (
    NEW_TOOL_KINDS,
    Sides,
    probe_effects,
    result_effects,
    tool_effects,
)
from mcp_matrix.evolution.guidance import Context, advice
from mcp_matrix.evolution.model import SEVERITIES, Change, ClientEffect, at_least, worse
from mcp_matrix.evolution.populations import populations
from mcp_matrix.evolution.schema import is_raw_twin
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.snapshot import Snapshot

FORMAT = "mcp-matrix.diff"
VERSION = 1
FAIL_ON = ("breaking", "risky", "any", "none")
_TOOL_KINDS = ("tool-removed", "tool-renamed") + NEW_TOOL_KINDS
_RESULT_KINDS = ("output-schema-added", "output-schema-changed", "output-field-retyped")


@dataclass(frozen=True)
class Side:
    """One side of the diff as reports name it."""

    source: str
    server: JSON
    target: object
    tools: int

    @classmethod
    def of(cls, snap: Snapshot) -> Side:
        return cls(
            source=snap.source or "live",
            server=snap.doc.get("serverInfo"),
            target=snap.doc.get("target"),
            tools=len(snap.tools),
        )

    @property
    def label(self) -> str:
        info = self.server if isinstance(self.server, Mapping) else {}
        name = " ".join(str(info[k]) for k in ("name", "version") if info.get(k))
        target = self.target if isinstance(self.target, Mapping) else {}
        where = (
            target.get("server") or target.get("url") or " ".join(target.get("command") or []) or ""
        )
        origin = self.source if self.source != "live" else f"live: {where}" if where else "live"
        return f"{name} ({origin})" if name else origin

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "server": self.server,
            "target": self.target,
            "tools": self.tools,
        }


@dataclass(frozen=True)
class Diff:
    old: Side
    new: Side
    profiles: tuple[str, ...]
    caching: tuple[str, ...]
    changes: tuple[Change, ...]
    stale_for: Mapping[str, str] = field(
        default_factory=dict
    )  # caching profile -> how long a stale schema lives

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.changes if c.severity == s) for s in SEVERITIES}

    def worst(self) -> str | None:
        return next((s for s in SEVERITIES if any(c.severity == s for c in self.changes)), None)

    def failing(self, fail_on: str = "breaking") -> list[Change]:
        return [c for c in self.changes if fails(c.severity, fail_on)]

    def to_json(self, fail_on: str = "breaking") -> dict:
        counts = self.counts()
        failing = self.failing(fail_on)
        return {
            "format": FORMAT,
            "version": VERSION,
            "mcp_matrix": __version__,
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "profiles": list(self.profiles),
            "caching_profiles": list(self.caching),
            "stale_for": dict(self.stale_for),
            "fail_on": fail_on,
            "summary": {
                "changes": len(self.changes),
                **counts,
                "worst": self.worst(),
                "failing": len(failing),
                "passed": not failing,
            },
            "changes": [c.to_json() for c in self.changes],
        }


def fails(severity: str, fail_on: str) -> bool:
    """Whether a change of ``severity`` is at or above the ``--fail-on`` threshold."""
    if fail_on == "none":
        return False
    if fail_on == "any":
        return True
    return at_least(severity, fail_on)


def diff_snapshots(
    old: Snapshot, new: Snapshot, profiles: Sequence[Profile], server: str | None = None
) -> Diff:
    """Classify every change from ``old`` to ``new`` for every profile (offline: snapshots only)."""
    server = server or new.server_name
    old_tools = [t for _, t in old.tools]
    new_tools = [t for _, t in new.tools]
    sides = Sides(
        profiles=tuple(profiles),
        # Discovery runs on copies: the comparison must see the tools exactly as the servers sent
        # them, whatever a behaviour does to its input.
        old_views={v.profile: v for v in discover_all(_copy(old), profiles, server=server)},
        new_views={v.profile: v for v in discover_all(_copy(new), profiles, server=server)},
        old_tools=tools_by_name(old_tools),
        new_tools=tools_by_name(new_tools),
        old_snapshot=old,
        new_snapshot=new,
    )
    ctx = Context(
        twins=_twins(new_tools),
        read_only=frozenset(
            n for n, t in {**sides.old_tools, **sides.new_tools}.items() if read_only(t)
        ),
        caching=tuple(sides.caching()),
    )
    found = discovery_effects(sides, compare_lists(old_tools, new_tools))
    out = []
    for change in found:
        if change.kind == "param-added-optional" and change.tool in ctx.twins:
            change = replace(change, detail={**change.detail, "raw_twin": ctx.twins[change.tool]})
        effects = list(change.clients)
        if change.kind in _TOOL_KINDS:
            effects += tool_effects(sides, change)
        if change.kind in _RESULT_KINDS:
            effects += result_effects(sides, change)
        for probe in change.probes:
            effects += probe_effects(sides, change, probe)
        effects = _order(effects, [p.name for p in profiles])
        change = replace(change, clients=tuple(effects))
        pops, measured = populations(sides, change)
        severity, reasons = _severity(change, pops, measured, len(profiles))
        touched = {e.profile for e in effects}
        change = replace(
            change,
            populations=pops,
            severity=severity,
            reasons=tuple(reasons),
            unaffected=tuple(p.name for p in profiles if p.name not in touched),
        )
        out.append(replace(change, advice=advice(change, ctx)))
    order = _tool_order(old_tools, new_tools)
    out.sort(key=lambda c: (SEVERITIES.index(c.severity), order.get(c.tool, len(order))))
    return Diff(
        old=Side.of(old),
        new=Side.of(new),
        profiles=tuple(p.name for p in profiles),
        caching=ctx.caching,
        changes=tuple(out),
        stale_for={p.name: sides.window(p).text for p in profiles if p.name in ctx.caching},
    )


def _severity(change: Change, pops, measured: bool, total: int) -> tuple[str, list[str]]:
    """The base severity made worse by the effects, and the effects that decided it."""
    new_tool = change.kind in NEW_TOOL_KINDS
    found: list[tuple[str, str, str]] = []  # (severity, why, profile)
    for e in change.clients:
        if e.effect in LOST:
            # A new tool that breaks the session or makes the client drop the server takes the
            # tools already there down with it: breaking, however new the tool is.
            whole = BY_NAME[e.effect].loses != "tool"
            level = "risky" if new_tool and not whole else "breaking"
            found.append((level, f"{e.effect} in", e.profile))
        elif (
            e.effect == V.DEGRADED.name and not new_tool
        ):  # a new tool's own discovery is `discover`'s business
            found.append(("risky", "degraded in", e.profile))
        elif e.effect == V.LOUD.name and e.shape == "old" and e.refused_by_client:
            # Refused by the client before sending: no queued retry goes through the client, and
            # the model repeating an old call is told in the same turn (`loud`, the safe outcome).
            found.append(
                (
                    "risky",
                    "frozen calls are refused by the client (the model is told) in",
                    e.profile,
                )
            )
        elif e.effect in SILENT_CHANGE or e.effect == V.LOUD.name:
            who = "frozen calls" if e.shape == "old" else "new calls"
            what = "are refused in" if e.effect == V.LOUD.name else "lose data silently in"
            found.append(("breaking" if e.shape == "old" else "risky", f"{who} {what}", e.profile))
    if measured and pops and pops[1].effect in ("permanent-loss", V.SILENT_LOSS.name):
        found.append(("breaking", f"queued retries: {pops[1].effect}", ""))
    severity = change.severity
    for level, _, _ in found:
        severity = worse(severity, level)
    reasons: dict[str, list[str]] = {}
    for level, why, profile in found:
        if level == severity:
            reasons.setdefault(why, [])
            if profile:
                reasons[why].append(profile)
    return severity, [f"{k} {_who(v, total)}" if v else k for k, v in reasons.items()]


def _who(names: list[str], total: int) -> str:
    names = list(dict.fromkeys(names))
    if total > 2 and len(names) == total:
        return f"every client profile ({total})"
    return ", ".join(names)


def _order(effects: Iterable[ClientEffect], names: list[str]) -> list[ClientEffect]:
    """One effect per (profile, call shape), the worst, in profile order."""
    best: dict[tuple[str, str], ClientEffect] = {}
    for e in effects:
        key = (e.profile, e.shape)
        if key not in best or rank(e.effect) < rank(best[key].effect):
            best[key] = e
    index = {n: i for i, n in enumerate(names)}
    return sorted(best.values(), key=lambda e: (index.get(e.profile, len(index)), e.shape))


def _copy(snap: Snapshot) -> Snapshot:
    return Snapshot(_json_copy(dict(snap.doc)), source=snap.source)


def _json_copy(doc: dict) -> dict:
    """New dicts and lists, the same leaves, without a frame per level: ``copy.deepcopy`` took
    two per level and overflowed the stack on a tool schema 300 levels deep (``run`` and
    ``discover`` read it; the JSON reader allows about 1,000 levels)."""
    root: dict = {}
    todo: list[tuple[Any, Any]] = [(doc, root)]
    while todo:
        source, copied = todo.pop()
        items = source.items() if type(source) is dict else enumerate(source)
        for key, value in items:
            if type(value) is dict or type(value) is list:
                child: Any = {} if type(value) is dict else []
                todo.append((value, child))
                value = child
            if type(copied) is dict:
                copied[key] = value
            else:
                copied.append(value)
    return root


def _tool_order(old_tools: list[object], new_tools: list[object]) -> dict[str, int]:
    order: dict[str, int] = {}
    for t in list(new_tools) + list(old_tools):
        if isinstance(t, Mapping) and isinstance(t.get("name"), str):
            order.setdefault(t["name"], len(order))
    return order


def _twins(tools: list[Any]) -> dict[str, str]:
    """Rich tool -> its raw twin, for twins named after the tool or naming it in their description."""
    by = tools_by_name(tools)
    out: dict[str, str] = {}
    for name, tool in by.items():
        if not is_raw_twin(tool):
            continue
        text = str(tool.get("description") or "")
        for other in by:
            if (
                other != name
                and not is_raw_twin(by[other])
                and (name.startswith(other) or f"{other} " in text)
            ):
                out.setdefault(other, name)
    return out


__all__ = ["FAIL_ON", "FORMAT", "VERSION", "Diff", "Side", "diff_snapshots", "fails"]
