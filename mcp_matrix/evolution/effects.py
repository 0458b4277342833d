"""What each change does to each client's calls and whole tools (``populations`` and
``discovery_effects`` add the frozen callers' fate and what each client shows).

Calls: each change carries representative calls (``Probe``): a *frozen* call valid against the
old schema, or a *new* call using what the new schema adds. Each profile builds the call from
the tool list it holds after the deploy (its cache behaviours: a caching client keeps the old
list), runs its call behaviours (strip unknown arguments, its own validation, ...), and the new
schema judges what arrives. The same call before the change (frozen: old list, old server; new:
a fresh list) is the baseline, so only what the change makes worse is reported. Nothing here is
hard-coded per client: it all comes from the profiles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_matrix.behaviours.validation import Violation, plain_errors
from mcp_matrix.core.evidence import weakest
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import ClientView, Finding, ToolView
from mcp_matrix.core.verdicts import SHOWN, V, rank
from mcp_matrix.evolution.model import Change, ClientEffect, Probe
from mcp_matrix.evolution.schema import (
    deprecation,
    input_schema,
    properties,
    required,
)
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.call_servers import SUCCESS, Intended, SchemaServer
from mcp_matrix.run.classify import Answer, Verdict, classify
from mcp_matrix.run.deliver import deliver, unread
from mcp_matrix.run.held import hold_tool
from mcp_matrix.simulate.caching import StaleWindow, stale_window
from mcp_matrix.simulate.calls import evidence_for, held_view
from mcp_matrix.targets.snapshot import Snapshot

NEW_TOOL_KINDS = ("tool-added", "tool-parallel", "raw-twin-added")


@dataclass(frozen=True)
class CallOutcome:
    """One call under one side of a change: its verdict, why, and what was wrong in plain words."""

    verdict: str
    message: str
    behaviours: tuple[str, ...] = ()
    detail: str = ""  # what was wrong, in plain words (for the populations)
    refused_by_client: bool = False  # the client refused it before sending (``client-refused``)


@dataclass(frozen=True)
class Sides:
    """Both snapshots as every profile sees them."""

    profiles: Sequence[Profile]
    old_views: Mapping[str, ClientView]
    new_views: Mapping[str, ClientView]
    old_tools: Mapping[str, Any]
    new_tools: Mapping[str, Any]
    old_snapshot: Snapshot | None = None  # their eras carry ttlMs and listen (version 2)
    new_snapshot: Snapshot | None = None

    def held(self, profile: Profile) -> tuple[ClientView, bool]:
        """The list this profile calls with after the deploy, and whether it is the cached old one
        (not when the old list's ttlMs 0 or a list_changed it listens for makes it refetch)."""
        old, new = self.old_views[profile.name], self.new_views[profile.name]
        view, _ = held_view(profile, new, old, self.old_snapshot, self.new_snapshot)
        return view, view is old and old is not new

    def window(self, profile: Profile) -> StaleWindow:
        """How long a stale schema lives in this client (mcp_matrix.simulate.caching)."""
        return stale_window(profile, self.old_snapshot, self.new_snapshot)

    def caching(self) -> list[str]:
        return [p.name for p in self.profiles if self.held(p)[1]]


# -- calls ----------------------------------------------------------------------------------------


def alias_pairs(schema: JSON) -> list[tuple[str, str]]:
    """(alias, target) pairs at the root where neither is required: the handler needs one of them."""
    props, req = properties(schema), required(schema)
    out = []
    for name, sub in props.items():
        d = deprecation(name, sub, props)
        if d and d.target in props and name not in req and d.target not in req:
            out.append((name, d.target))
    return out


_PAIRS: dict[int, tuple[JSON, tuple[tuple[str, str], ...]]] = {}


def _alias_pairs_of(schema: JSON) -> tuple[tuple[str, str], ...]:
    """``alias_pairs`` of a listed schema, worked out once a schema object (the modelled server
    asks for every valid call it answers, and a replay sends thousands)."""
    hit = _PAIRS.get(id(schema))
    if hit is None or hit[0] is not schema:  # holding the schema keeps its id unique
        if len(_PAIRS) > 4096:
            _PAIRS.clear()
        hit = _PAIRS[id(schema)] = (schema, tuple(alias_pairs(schema)))
    return hit[1]


def alias_rule(schema: JSON, arguments: JSON) -> Violation | None:
    """The handler's at-least-one rule of an alias and its target, as a refusal (for ``SchemaServer``)."""
    if not isinstance(arguments, Mapping):
        return None
    for alias, target in _alias_pairs_of(schema):
        if alias not in arguments and target not in arguments:
            return Violation(
                validator="x-alias-or-target",
                validator_value=[target, alias],
                path=(),
                schema_path=(),
                instance=arguments,
                message=f"neither {target} nor its alias {alias} is given (the handler's at-least-one rule)",
                names=(target, alias),
            )
    return None


def schema_server(tools: Mapping[str, JSON]) -> SchemaServer:
    """The server the diff assumes: it validates against the schema it lists, and keeps the alias rule."""
    return SchemaServer(tools, rules=(alias_rule,))


def server_outcome(schema: JSON, arguments: JSON) -> CallOutcome:
    """How a server that validates against ``schema`` answers ``arguments`` (a frozen call, no client)."""
    tool = {"inputSchema": schema}
    server = schema_server({"tool": tool})
    answer = server.answer("tool", arguments)
    lost = unread(server, Intended("tool", arguments), tool, arguments, answer) if answer.ok else ()
    verdict = classify(
        expect=SUCCESS, mutations=(), answer=answer, invalid=answer.violations, unread=lost
    )
    if verdict.verdict == V.SILENT_LOSS.name:
        plain = f"{_dotted(lost)} is ignored (the new schema no longer names it)"
        return CallOutcome("silent-loss", verdict.reason, detail=plain)
    return _outcome(verdict, answer)


def _dotted(pointers: Sequence[str]) -> str:
    return ", ".join(p.lstrip("/").replace("/", ".") for p in pointers)


def call_outcomes(
    profile: Profile,
    tool: str,
    view: ToolView | None,
    raw: JSON,
    stale: bool,
    arguments: JSON,
    schema: JSON,
) -> dict[tuple[str, ...], CallOutcome]:
    """How ``profile`` delivers ``arguments`` to a server validating against ``schema``.

    One outcome per way the profile may send the call (keyed by the intermittent behaviours
    applied), so that a behaviour that only sometimes fires is compared with itself.
    """
    held = hold_tool(profile, tool, view, raw, {"inputSchema": schema} if stale else None)
    server = schema_server({tool: {"inputSchema": schema}})
    done = deliver(profile, held, Intended(tool, arguments), server)
    if done.before_server and not done.variants:  # the client does not show the tool
        names = done.verdict.behaviours or (("cache-tools",) if stale and view is None else ())
        return {(): CallOutcome("unreachable", done.verdict.reason, names)}
    found = {
        variant.sometimes: _outcome(verdict, answer, variant.plan.refused)
        for variant, verdict, answer in zip(done.variants, done.verdicts, done.answers)
    }
    return found or {(): CallOutcome("intact", "arrived as intended; the expected outcome")}


def _outcome(
    verdict: Verdict, answer: Answer | None, refused: Finding | None = None
) -> CallOutcome:
    """The classifier's verdict for one variant, in its own words: what ``run`` and ``replay``
    say of the same call (its ``reason``); the plain validation errors for the populations;
    whether the client's own check refused it (the finding's code, never its message)."""
    plain = plain_errors(answer.violations) if answer and not answer.ok else ""
    by_client = refused is not None and refused.code == "client-refused"
    return CallOutcome(
        verdict.verdict,
        verdict.reason,
        verdict.behaviours,
        detail=plain,
        refused_by_client=by_client,
    )


def _worse_variant(
    before: dict[tuple[str, ...], CallOutcome], after: dict[tuple[str, ...], CallOutcome]
) -> CallOutcome | None:
    """The worst outcome of ``after`` that is worse than the same variant ``before``, if any."""
    floor = min(before.values(), key=lambda o: rank(o.verdict))
    worse_ones = []
    for key, outcome in after.items():
        then = before.get(key) or before.get(()) or floor
        if rank(outcome.verdict) < rank(then.verdict):
            worse_ones.append(outcome)
    return min(worse_ones, key=lambda o: rank(o.verdict)) if worse_ones else None


def probe_effects(sides: Sides, change: Change, probe: Probe) -> list[ClientEffect]:
    """Per profile: what the change does to this call, against the same call before the change."""
    tool = change.tool
    old_raw, new_raw = sides.old_tools.get(tool), sides.new_tools.get(tool)
    old_schema, new_schema = input_schema(old_raw), input_schema(new_raw)
    out = []
    for profile in sides.profiles:
        old_view = sides.old_views[profile.name].by_tool().get(tool)
        new_view = sides.new_views[profile.name].by_tool().get(tool)
        held, stale = sides.held(profile)
        held_tool = held.by_tool().get(tool)
        held_raw = old_raw if stale else new_raw
        if probe.shape == "old":
            before = call_outcomes(
                profile, tool, old_view, old_raw, False, probe.arguments, old_schema
            )
        else:
            before = call_outcomes(
                profile, tool, new_view, new_raw, False, probe.arguments, new_schema
            )
        after = call_outcomes(
            profile, tool, held_tool, held_raw, stale, probe.arguments, new_schema
        )
        worst = _worse_variant(before, after)
        if worst is None or (worst.verdict == V.UNREACHABLE.name and not stale):
            if (
                stale
                and probe.shape == "new"
                and change.kind in _UNSEEN_KINDS
                and held_tool is not None
            ):
                names: tuple[str, ...] = ("cache-tools",)
                out.append(
                    ClientEffect(
                        profile=profile.name,
                        effect="degraded",
                        stale=True,
                        behaviours=names,
                        shape="new",
                        evidence=weakest(evidence_for(profile, names)),
                        message=f"its model is shown the cached (old) schema, without {_what(change)}, until a new "
                        "session: new calls from it leave it out",
                    )
                )
            continue
        message = f"{probe.about}: {worst.message}"
        if stale and probe.shape == "old" and worst.verdict == V.LOUD.name:
            message += "; its cached schema still shows the old shape, so the model repeats it until a new session"
        elif stale:
            message = "builds the call from its cached (old) schema: " + message
        names = tuple(dict.fromkeys(worst.behaviours))
        out.append(
            ClientEffect(
                profile=profile.name,
                effect=worst.verdict,
                message=message,
                stale=stale,
                behaviours=names,
                evidence=weakest(evidence_for(profile, names)),
                shape=probe.shape,
                refused_by_client=worst.refused_by_client,
            )
        )
    return out


_UNSEEN_KINDS = ("param-added-optional", "enum-values-added")


def _what(change: Change) -> str:
    if change.kind == "enum-values-added":
        return f"the new values of {change.param}"
    return str(change.param)


# -- whole tools ----------------------------------------------------------------------------------


def tool_effects(sides: Sides, change: Change) -> list[ClientEffect]:
    """A removed or added tool, per profile: what a caching client still offers, or never saw."""
    out = []
    for profile in sides.profiles:
        held, stale = sides.held(profile)
        old_view = sides.old_views[profile.name].by_tool().get(change.tool)
        cached = held.by_tool().get(change.tool)
        names = ("cache-tools",) if stale else ()
        level = weakest(evidence_for(profile, names)) if names else None
        if change.kind in ("tool-removed", "tool-renamed"):
            if old_view is None or old_view.verdict not in SHOWN:
                continue
            if stale and cached is not None:
                out.append(
                    ClientEffect(
                        profile.name,
                        "loud",
                        f"its cached list still offers {change.tool}; every call "
                        "fails with an unknown-tool error until a new session",
                        True,
                        names,
                        level,
                        "old",
                    )
                )
            else:
                then = (
                    f"; it shows {change.detail['to']} instead"
                    if change.kind == "tool-renamed"
                    else ""
                )
                out.append(
                    ClientEffect(
                        profile.name,
                        "unreachable",
                        f"{change.tool} is gone from its list{then}",
                        shape="old",
                    )
                )
        elif stale and cached is None:
            out.append(
                ClientEffect(
                    profile.name,
                    "unreachable",
                    f"it caches the tool list and does not see {change.tool} until a new session",
                    True,
                    names,
                    level,
                    "new",
                )
            )
    return out


def result_effects(sides: Sides, change: Change) -> list[ClientEffect]:
    """An outputSchema added or changed, for clients that check results against it."""
    out = []
    for profile in sides.profiles:
        uses = [u for u in profile.result if u.name == "require-structured-content"]
        if uses:
            out.append(
                ClientEffect(
                    profile.name,
                    "loud",
                    "it checks every result against outputSchema: a result without matching "
                    "structuredContent becomes an error",
                    False,
                    ("require-structured-content",),
                    weakest([e for u in uses for e in u.evidence]),
                    "new",
                )
            )
    return out


__all__ = [
    "NEW_TOOL_KINDS",
    "CallOutcome",
    "Sides",
    "alias_pairs",
    "alias_rule",
    "call_outcomes",
    "probe_effects",
    "result_effects",
    "schema_server",
    "server_outcome",
    "tool_effects",
]
