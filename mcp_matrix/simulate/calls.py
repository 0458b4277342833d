"""Apply a profile to one intended call: the held schema, the wire call, and its mutations."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_matrix.behaviours import registry
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.model import CallContext, CallPlan, ClientView, Finding, Mutation
from mcp_matrix.core.tools import escape
from mcp_matrix.profiles.model import BehaviourUse, Profile
from mcp_matrix.simulate.caching import stale_window
from mcp_matrix.targets.snapshot import Snapshot


@dataclass(frozen=True)
class Variant:
    """One way the client may send the call; ``sometimes`` names intermittent behaviours applied."""

    plan: CallPlan
    mutations: tuple[Mutation, ...]
    sometimes: tuple[str, ...] = ()


HELD_FIELDS = frozenset({"held_schema", "held_tool"})


class ReadsContext(CallContext):
    """A call context that notes whether a behaviour read what the client holds (``read_held``).

    A plan made without reading the held schema or tool is the same plan for every held copy
    of the tool: ``replay`` plans a call once for the profiles whose behaviours did not read it
    (their held schemas differ only by discovery's rewrites). Reset ``read_held`` with ``fresh``."""

    read_held = False

    def __getattribute__(self, name: str) -> Any:
        if name in HELD_FIELDS:
            object.__setattr__(self, "read_held", True)
        return object.__getattribute__(self, name)

    def fresh(self) -> ReadsContext:
        object.__setattr__(self, "read_held", False)
        return self


def held_view(
    profile: Profile,
    live: ClientView,
    baseline: ClientView | None,
    old: Snapshot | None = None,
    new: Snapshot | None = None,
) -> tuple[ClientView, Finding | None]:
    """The tool list the client calls with, after its cache behaviours: the baseline only while
    the stale window of the snapshots ``old`` (baseline) and ``new`` (live) is open (not when the
    client honours the old list's ``ttlMs`` 0 or listens for a list_changed the server sends).
    ``run``, ``replay`` and ``diff`` all decide here."""
    view, note = live, None
    for use in profile.cache:
        view, finding = registry.get(use.name).fn(live, baseline, **dict(use.params))
        if finding is not None:
            note = Finding(**{**finding.__dict__, "behaviour": use.name, "evidence": use.evidence})
    if view is not live and not stale_window(profile, old, new).stale:
        return live, None
    return view, note


def plan_call(
    profile: Profile, ctx: CallContext, arguments: Any, omit: bool = False
) -> list[Variant]:
    """Every distinct way the profile may send the call: with and without its intermittent behaviours."""
    sometimes = [u for u in profile.call if u.frequency == "sometimes"]
    choices = [tuple(u.id or u.name for u in sometimes)]
    if sometimes:
        choices.append(())
    variants = []
    for active in choices:
        plan = CallPlan(
            tool=ctx.tool, arguments=arguments, omit_arguments=omit
        )  # behaviours never mutate: no copy
        for use in profile.call:
            if use.frequency == "sometimes" and (use.id or use.name) not in active:
                continue
            plan = registry.get(use.name).fn(plan, ctx, **dict(use.params))
            if plan.refused is not None:
                break
        variants.append(
            Variant(plan, mutations(arguments, plan.arguments, omit, plan.omit_arguments), active)
        )
    return variants


def evidence_for(profile: Profile, names) -> tuple[Evidence, ...]:
    uses: list[BehaviourUse] = [u for phase in profile.phases().values() for u in phase]
    out: list[Evidence] = []
    for u in uses:
        if u.name in names:
            out.extend(u.evidence)
    return tuple(out)


def mutations(
    intended: Any, wire: Any, omit_before: bool = False, omit_after: bool = False
) -> tuple[Mutation, ...]:
    """JSON-pointer differences between the intended and the wire arguments."""
    if omit_before != omit_after:
        return (Mutation("removed" if omit_after else "added", "", intended, wire),)
    out: list[Mutation] = []
    _diff(intended, wire, "", out)
    return tuple(out)


def _diff(a: Any, b: Any, ptr: str, out: list[Mutation]) -> None:
    if a is b or len(out) > 100:  # behaviours return the very same object for what they leave alone
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            sub = f"{ptr}/{escape(k)}"
            if k not in b:
                out.append(Mutation("removed", sub, a[k], None))
            else:
                _diff(a[k], b[k], sub, out)
        for k in b:
            if k not in a:
                out.append(Mutation("added", f"{ptr}/{escape(k)}", None, b[k]))
        return
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{ptr}/{i}", out)
        return
    if _equal(a, b):
        return
    if isinstance(b, str) and not isinstance(a, str):
        try:
            if _equal(json.loads(b), a):
                out.append(Mutation("stringified", ptr, a, b))
                return
        except ValueError:
            pass
    if b is None and a is not None:
        out.append(Mutation("nulled", ptr, a, b))
    elif type(a) is not type(b) and not (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        out.append(Mutation("retyped", ptr, a, b))
    else:
        out.append(Mutation("changed", ptr, a, b))


def _equal(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b
