"""Apply a profile to one intended call: the held schema, the wire call, and its mutations."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from mcp_matrix.behaviours import registry
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan, ClientView, Finding, Mutation
from mcp_matrix.core.tools import escape
from mcp_matrix.profiles.model import BehaviourUse, Profile
from mcp_matrix.simulate.caching import stale_window
from mcp_matrix.targets.snapshot import Snapshot


class Variant(NamedTuple):
    """One way the client may send the call; ``sometimes`` names intermittent behaviours applied.

    A named tuple: one is made for every call and profile group a replay plans (a frozen
    dataclass's ``__init__`` was ~1% of the 10,000-call replay)."""

    plan: CallPlan
    mutations: tuple[Mutation, ...]
    sometimes: tuple[str, ...] = ()


def _noting_reads(name: str) -> Any:
    """A field of ``ReadsContext`` that sets ``read_held`` when it is read."""

    def read(self: CallContext) -> JSON:
        held = self.__dict__  # straight into the instance's dict: half object.__setattr__'s cost
        held["read_held"] = True
        return held[name]  # type: ignore[no-any-return]

    def write(self: CallContext, value: JSON) -> None:
        self.__dict__[name] = value

    return property(read, write)


class ReadsContext(CallContext):
    """A call context that notes whether a behaviour read what the client holds (``read_held``).

    A plan made without reading the held schema or tool is the same plan for every held copy
    of the tool: ``replay`` plans a call once for the profiles whose behaviours did not read it
    (their held schemas differ only by discovery's rewrites). Reset ``read_held`` with ``fresh``."""

    read_held = False

    # The two held fields as properties that note a read (an attribute hook on every read of
    # the context was 3% of a large offline replay); the dataclass's __init__ sets them here.
    held_schema = _noting_reads("held_schema")
    held_tool = _noting_reads("held_tool")

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
    """Every distinct way the profile may send the call: with and without its intermittent behaviours.

    With a ``ReadsContext`` (offline replay), a behaviour given the call as written is applied
    once per call for every profile that has it (``_on_first``)."""
    steps, choices = _steps(profile)
    first, memo = _first_plan(ctx.tool, arguments, omit)
    tracked = isinstance(ctx, ReadsContext)
    variants = []
    for active in choices:
        plan = first
        for fn, params, key, sometimes, once in steps:
            if sometimes and key not in active:
                continue
            if plan is first and tracked and once is not None:
                plan = _on_first(fn, params, once, ctx, first, memo)
            else:
                plan = fn(plan, ctx, **params) if params else fn(plan, ctx)
            if plan.refused is not None:
                break
        changes = (
            ()  # behaviours return the very arguments they leave alone
            if plan.arguments is arguments and plan.omit_arguments == omit
            else mutations(arguments, plan.arguments, omit, plan.omit_arguments)
        )
        variants.append(Variant(plan, changes, active))
    return variants


def leaves_alone(profile: Profile, ctx: CallContext, arguments: Any, omit: bool = False) -> bool:
    """Whether every call behaviour of ``profile`` leaves the call as written: each returns the
    very plan it is given, so every variant is the first plan, as for a profile with no call
    behaviour. Judged once per call and behaviour (``_on_first``); False when one changes it,
    or may (a ``CallContext`` that does not note reads): ``plan_call`` plans it then, finding
    the behaviours already applied."""
    steps, _ = _steps(profile)
    if not steps:
        return True
    if not isinstance(ctx, ReadsContext):
        return False
    first, memo = _first_plan(ctx.tool, arguments, omit)
    for fn, params, _, _, once in steps:
        if once is None or _on_first(fn, params, once, ctx, first, memo) is not first:
            return False
    return True


def as_written(
    profile: Profile, ctx: CallContext, arguments: Any, omit: bool = False
) -> Variant | None:
    """The usual variant when ``profile`` sends the call as written (``leaves_alone``), else None."""
    if not leaves_alone(profile, ctx, arguments, omit):
        return None
    return Variant(_first_plan(ctx.tool, arguments, omit)[0], ())


# The plan before any behaviour, and what each behaviour made of it (``_on_first``).
_FIRST: list[tuple[CallPlan, dict] | None] = [None]


def _first_plan(tool: str, arguments: Any, omit: bool) -> tuple[CallPlan, dict]:
    """The plan before any behaviour: the one object for every profile planning the same call
    in a row (a replay plans one recorded call for each profile group in turn; plans are frozen
    and behaviours never mutate), with its memo of behaviours applied to it. The slot is read
    and replaced whole: threads never mix two."""
    last = _FIRST[0]
    if last is not None:
        plan = last[0]
        if plan.arguments is arguments and plan.tool == tool and plan.omit_arguments == omit:
            return last
    last = _FIRST[0] = (CallPlan(tool=tool, arguments=arguments, omit_arguments=omit), {})
    return last


def _on_first(
    fn: Callable[..., CallPlan],
    params: dict[str, Any],
    once: tuple,  # the behaviour's memo keys (``_keys``)
    ctx: CallContext,  # a ``ReadsContext``
    first: CallPlan,
    memo: dict,
) -> CallPlan:
    """``fn`` with ``params`` applied to the call as written (``first``), once for every profile
    group planning the call in a row (offline, ~10 of them share a behaviour such as
    round-big-integers). Behaviours are pure functions of the plan, the context and their
    params: what one made of ``first`` without reading what is held (the schema, the tool) is
    kept under the behaviour and ``stale`` alone; what it made reading them, under the held
    objects too (a hit then counts as a read: ``read_held``, which replay's sharing reads)."""
    fields = ctx.__dict__  # the held fields without noting a read (``_noting_reads``)
    key = once[fields["stale"]]
    plan: CallPlan | None = memo.get(key)
    if plan is not None:
        return plan
    schema, tool = fields["held_schema"], fields["held_tool"]
    hit = memo.get((key, id(schema), id(tool)))
    if hit is not None and hit[0] is schema and hit[1] is tool:
        fields["read_held"] = True
        return hit[2]  # type: ignore[no-any-return]
    was = fields.get("read_held", False)
    fields["read_held"] = False
    plan = fn(first, ctx, **params) if params else fn(first, ctx)
    if fields["read_held"]:
        memo[key, id(schema), id(tool)] = (schema, tool, plan)  # holding both keeps the ids
    else:
        memo[key] = plan
        fields["read_held"] = was
    return plan


_Step = tuple[
    Callable[..., CallPlan], dict[str, Any], str, bool, tuple | None
]  # behaviour, params, id, intermittent, its memo keys, fresh and stale (None: never kept)


def _keys(behaviour: tuple) -> tuple[tuple, tuple]:
    """A behaviour's keys in ``_on_first``'s memo, by ``stale`` (False, True): made once."""
    return (behaviour, False), (behaviour, True)


# A call behaviour whose plan differs each time it is applied (a uuid4): never kept (``_on_first``).
UNREPEATABLE = frozenset({"add-meta"})
_STEPS: dict[int, tuple[Profile, tuple[_Step, ...], tuple[tuple[str, ...], ...]]] = {}


def _steps(profile: Profile) -> tuple[tuple[_Step, ...], tuple[tuple[str, ...], ...]]:
    """A profile's call behaviours as steps (each behaviour's function looked up once), and the
    intermittent ones each variant applies (all of them, then none), worked out once a profile
    (planning runs for every call)."""
    hit = _STEPS.get(id(profile))
    if hit is not None and hit[0] is profile:  # held: the id stays this profile's
        return hit[1], hit[2]
    functions = registry.load_all()
    steps = tuple(
        (
            functions[u.name].fn,
            dict(u.params),
            u.id or u.name,
            u.frequency == "sometimes",
            None if u.name in UNREPEATABLE else _keys((u.name, registry.freeze(u.params))),
        )
        for u in profile.call
    )
    sometimes = tuple(key for _, _, key, intermittent, _ in steps if intermittent)
    choices = (sometimes, ()) if sometimes else (sometimes,)
    if len(_STEPS) > 1024:
        _STEPS.clear()
    _STEPS[id(profile)] = (profile, steps, choices)
    return steps, choices


_USES: dict[int, tuple[Profile, tuple[BehaviourUse, ...]]] = {}


def evidence_for(profile: Profile, names) -> tuple[Evidence, ...]:
    """The profile's evidence for the behaviours ``names``, in the order of its entries."""
    hit = _USES.get(id(profile))
    if hit is None or hit[0] is not profile:  # held: the id stays this profile's
        if len(_USES) > 1024:
            _USES.clear()
        uses = tuple(u for phase in profile.phases().values() for u in phase)
        hit = _USES[id(profile)] = (profile, uses)
    out: list[Evidence] = []
    for u in hit[1]:
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
