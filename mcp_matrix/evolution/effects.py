"""What each change does to each client, and to each population of frozen callers.

Clients, from the profiles (nothing here is hard-coded per client):

- **discovery**: every profile's discovery runs on both snapshots; a tool whose verdict gets
  worse (visible -> hidden, a server lost in a session) or better is put on the change whose
  JSON pointer the deciding finding points into;
- **calls**: each change carries representative calls (``Probe``): a *frozen* call valid
  against the old schema, or a *new* call using what the new schema adds. Each profile builds
  the call from the tool list it holds after the deploy (its cache behaviours: a caching
  client keeps the old list), runs its call behaviours (strip unknown arguments, its own
  validation, ...), and the new schema judges what arrives. The same call before the change
  (frozen: old list, old server; new: a fresh list) is the baseline, so only what the change
  makes worse is reported.

Populations (docs/design.md#rename-additively): the frozen call is judged by the new schema
alone, with no model to adapt: live conversations recover after a legible error, queued
retries fail on every attempt (a permanent loss), transcript replays diverge silently (a
false negative). The server is assumed to validate arguments against the schema it lists.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mcp_matrix.behaviours.validation import Violation, plain_errors
from mcp_matrix.core.evidence import weakest
from mcp_matrix.core.model import ClientView, Finding, ToolView
from mcp_matrix.core.verdicts import LOST, SHOWN, rank
from mcp_matrix.evolution.model import Change, ClientEffect, PopulationEffect, Probe
from mcp_matrix.evolution.schema import (
    deprecation,
    input_schema,
    properties,
    required,
)
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.classify import Answer, Verdict, classify
from mcp_matrix.run.deliver import SUCCESS, Intended, SchemaServer, deliver, hold_tool, unread
from mcp_matrix.simulate.caching import StaleWindow, stale_window
from mcp_matrix.simulate.calls import evidence_for, held_view
from mcp_matrix.targets.snapshot import Snapshot

NEW_TOOL_KINDS = ("tool-added", "tool-parallel", "raw-twin-added")
TOOL_LEVEL_KINDS = NEW_TOOL_KINDS + ("tool-renamed",)


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


def alias_pairs(schema: Any) -> list[tuple[str, str]]:
    """(alias, target) pairs at the root where neither is required: the handler needs one of them."""
    props, req = properties(schema), required(schema)
    out = []
    for name, sub in props.items():
        d = deprecation(name, sub, props)
        if d and d.target in props and name not in req and d.target not in req:
            out.append((name, d.target))
    return out


def alias_rule(schema: Any, arguments: Any) -> Violation | None:
    """The handler's at-least-one rule of an alias and its target, as a refusal (for ``SchemaServer``)."""
    if not isinstance(arguments, Mapping):
        return None
    for alias, target in alias_pairs(schema):
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


def schema_server(tools: Mapping[str, Any]) -> SchemaServer:
    """The server the diff assumes: it validates against the schema it lists, and keeps the alias rule."""
    return SchemaServer(tools, rules=(alias_rule,))


def server_outcome(schema: Any, arguments: Any) -> CallOutcome:
    """How a server that validates against ``schema`` answers ``arguments`` (a frozen call, no client)."""
    tool = {"inputSchema": schema}
    server = schema_server({"tool": tool})
    answer = server.answer("tool", arguments)
    lost = unread(server, Intended("tool", arguments), tool, arguments, answer) if answer.ok else ()
    verdict = classify(
        expect=SUCCESS, mutations=(), answer=answer, invalid=answer.violations, unread=lost
    )
    if verdict.verdict == "silent-loss":
        plain = f"{_dotted(lost)} is ignored (the new schema no longer names it)"
        return CallOutcome("silent-loss", verdict.reason, detail=plain)
    return _outcome(verdict, answer)


def _dotted(pointers: Sequence[str]) -> str:
    return ", ".join(p.lstrip("/").replace("/", ".") for p in pointers)


def call_outcomes(
    profile: Profile,
    tool: str,
    view: ToolView | None,
    raw: Any,
    stale: bool,
    arguments: Any,
    schema: Any,
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
        if worst is None or (worst.verdict == "unreachable" and not stale):
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
        if stale and probe.shape == "old" and worst.verdict == "loud":
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


# -- discovery ------------------------------------------------------------------------------------


def discovery_effects(sides: Sides, changes: list[Change]) -> list[Change]:
    """Put every discovery difference on the change it comes from (by JSON pointer)."""
    found: dict[int, list[ClientEffect]] = {}
    extra: dict[str, list[ClientEffect]] = {}
    by_tool: dict[str, list[int]] = {}
    for i, c in enumerate(changes):
        by_tool.setdefault(c.tool, []).append(i)
    # A renamed tool is compared with its old self, and its effects go on the rename.
    renamed = {c.detail["to"]: c.tool for c in changes if c.kind == "tool-renamed"}

    def attach(tool: str, pointer: str, effect: ClientEffect) -> None:
        index = _best(changes, by_tool.get(tool, []), pointer)
        if index is None or not changes[index].pointer:
            named = _named(changes, by_tool.get(tool, []), effect.message)
            index = index if named is None else named
        if index is None:
            extra.setdefault(tool, []).append(effect)
        else:
            found.setdefault(index, []).append(effect)

    for profile in sides.profiles:
        ov, nv = sides.old_views[profile.name], sides.new_views[profile.name]
        # A view whose session a tool breaks (``culprits``) still holds every other tool's own
        # prediction: it is compared tool by tool, the culprit's cell naming the rule.
        if nv.whole and not ov.whole:
            culprit, reason = _culprit(nv)
            if culprit is not None and reason is not None:
                lost = (
                    "every tool of the server is lost"
                    if nv.outcome == "server-dropped"
                    else "every request of the session fails"
                )
                attach(
                    culprit.tool,
                    reason.pointer,
                    _effect(
                        profile,
                        nv.outcome,
                        f"{lost} in this client because of {culprit.tool}: {reason.message}",
                        reason,
                    ),
                )
            continue
        if ov.whole and nv.outcome == "ok":
            culprit, reason = _culprit(ov)
            if culprit is not None and reason is not None:
                attach(
                    culprit.tool,
                    reason.pointer,
                    _effect(
                        profile,
                        "visible",
                        f"the server's tools are back in this client (was {ov.outcome}: "
                        f"{reason.message})",
                        reason,
                    ),
                )
            continue
        if nv.whole:
            continue
        old_by = ov.by_tool()
        for tv in nv.tools:
            name = renamed.get(tv.tool, tv.tool)
            before = old_by.get(name)
            if before is None:
                if tv.verdict != "visible":
                    finding = _deciding(tv, None)
                    attach(
                        tv.tool,
                        "",
                        _effect(profile, tv.verdict, _say(finding, tv.verdict), finding),
                    )
                continue
            if before.verdict == tv.verdict and tv.verdict != "degraded":
                continue
            if rank(tv.verdict) < rank(before.verdict) or tv.verdict == "degraded":
                finding = _deciding(tv, before)
                if finding is None:
                    continue
                how = (
                    f"{before.verdict} -> {tv.verdict}"
                    if before.verdict != tv.verdict
                    else f"still {tv.verdict}, and now"
                )
                if tv.tool in nv.culprits:
                    how = f"every request of the session fails in this client because of {tv.tool}"
                attach(
                    name,
                    finding.pointer,
                    _effect(profile, tv.verdict, f"{how}: {finding.message}", finding),
                )
            elif rank(tv.verdict) > rank(before.verdict):
                finding = _deciding(before, None)
                attach(
                    name,
                    finding.pointer if finding else "",
                    _effect(
                        profile,
                        tv.verdict,
                        f"{before.verdict} -> {tv.verdict}"
                        + (f" (it was: {finding.message})" if finding else ""),
                        finding,
                    ),
                )
    out = [replace(c, clients=c.clients + tuple(found.get(i, ()))) for i, c in enumerate(changes)]
    for tool, effects in extra.items():
        out.append(
            Change(
                kind="discovery-changed",
                tool=tool,
                severity="safe",
                pointer="",
                message=f"clients show {tool} differently",
                clients=tuple(effects),
            )
        )
    return out


def _best(changes: list[Change], indexes: list[int], pointer: str) -> int | None:
    best, size = None, -1
    for i in indexes:
        p = changes[i].pointer
        if not p:
            if size < 0:
                best, size = i, 0
            continue
        meets = pointer == p or pointer.startswith(p + "/") or p.startswith(pointer + "/")
        if pointer and meets and len(p) > size:
            best, size = i, len(p)
    if best is not None and size == 0 and changes[best].kind not in TOOL_LEVEL_KINDS:
        return None  # only a tool-level change takes an unplaced finding
    return best


def _named(changes: list[Change], indexes: list[int], message: str) -> int | None:
    """A change whose parameter the finding's message names (``'account_id'``), when pointers do not meet."""
    for i in indexes:
        param = changes[i].param
        if param and re.search(
            rf"(?<![A-Za-z0-9_]){re.escape(param.rsplit('.', 1)[-1])}(?![A-Za-z0-9_])", message
        ):
            return i
    return None


def _culprit(view: ClientView) -> tuple[ToolView | None, Finding | None]:
    reason = view.findings[-1] if view.findings else None
    if reason is None:
        return None, None
    same = (reason.code, reason.pointer, reason.message)  # cells carry it with its materiality
    for tv in view.tools:
        if any((f.code, f.pointer, f.message) == same for f in tv.findings):
            return tv, reason
    return None, reason


def _deciding(now: ToolView, before: ToolView | None) -> Finding | None:
    """The finding that makes ``now`` what it is (and was not in ``before``)."""
    seen = {(f.code, f.pointer) for f in before.findings} if before else set()
    if now.verdict in LOST:
        return now.findings[-1] if now.findings else None
    fresh = [f for f in now.findings if f.lost and (f.code, f.pointer) not in seen]
    if fresh:
        return fresh[0]
    if before is not None:
        return None
    lost = [f for f in now.findings if f.lost]
    return lost[0] if lost else (now.findings[0] if now.findings else None)


def _say(finding: Finding | None, verdict: str) -> str:
    return f"{verdict}: {finding.message}" if finding else verdict


def _effect(profile: Profile, verdict: str, message: str, finding: Finding | None) -> ClientEffect:
    behaviours = (finding.behaviour,) if finding and finding.behaviour else ()
    level = weakest(finding.evidence) if finding and finding.evidence else None
    return ClientEffect(
        profile=profile.name, effect=verdict, message=message, behaviours=behaviours, evidence=level
    )


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


# -- populations ----------------------------------------------------------------------------------


def populations(sides: Sides, change: Change) -> tuple[tuple[PopulationEffect, ...], bool]:
    """The three populations of frozen callers; True when the fate was measured with a frozen call.

    A frozen call (a probe of shape ``old``) is judged by the new schema alone: queued retries
    and transcript replays send the stored JSON as it is, with no model to adapt it.
    """
    tool = change.tool
    new_schema = input_schema(sides.new_tools.get(tool))
    old_schema = input_schema(sides.old_tools.get(tool))
    stuck = sorted(
        {e.profile for e in change.clients if e.stale and e.effect == "loud" and e.shape == "old"}
    )
    fate, call, detail, measured = "unaffected", "", "", False
    for probe in (p for p in change.probes if p.shape == "old"):
        before = server_outcome(old_schema, probe.arguments)
        after = server_outcome(new_schema, probe.arguments)
        if rank(after.verdict) < rank(before.verdict):
            fate, call, detail, measured = after.verdict, _sentence(probe.about), after.detail, True
            break
    kind = change.kind
    if kind in ("tool-removed", "tool-renamed"):
        fate, call, detail = "loud", f"A call to {tool}", "an unknown tool"
    if fate == "loud":
        live = (
            "recovers",
            (
                f"{call} is refused ({detail}) with an error the model can read; the conversation recovers "
                "within a turn or two, after a degraded stretch."
            ),
        )
        if kind == "tool-removed":
            live = (
                "blocked",
                (
                    f"{call} is refused ({detail}) and no tool takes its place: the task cannot be "
                    "finished in that conversation."
                ),
            )
        if kind == "tool-renamed":
            live = (
                "recovers",
                (
                    f"{call} is refused ({detail}); a client that lists tools again offers "
                    f"{change.detail.get('to')}, and the model can switch after a failed turn."
                ),
            )
        if stuck:
            live = (
                live[0],
                live[1] + f" Where the client keeps its cached list ({', '.join(stuck)}), the "
                "model still sees the old shape and repeats it until a new session.",
            )
        result = [
            PopulationEffect("live", *live),
            PopulationEffect(
                "retry",
                "permanent-loss",
                f"The stored call is refused on every attempt ({detail}): "
                "no model is in the loop to adapt it, so the job spends its retry budget and the "
                "work is lost.",
            ),
            PopulationEffect(
                "transcript",
                "diverges",
                f"The replay fails at this call ({detail}) and every later "
                "turn happens in a different world; the harness still runs to completion and "
                "reports that the bug does not reproduce: a false negative.",
            ),
        ]
    elif fate == "silent-loss":
        result = [
            PopulationEffect(
                "live",
                "silent-loss",
                f"{call} succeeds while {detail}; nothing tells the model, so nothing recovers.",
            ),
            PopulationEffect(
                "retry",
                "silent-loss",
                f"The stored call succeeds while {detail}: a permanent, unannounced loss.",
            ),
            PopulationEffect(
                "transcript",
                "diverges",
                f"The replay succeeds while {detail}; later turns diverge "
                "silently: a false negative.",
            ),
        ]
    else:
        result = list(_unmeasured(change))
    lost_in = [e.profile for e in change.clients if e.effect in LOST]
    if lost_in and result[0].effect in ("unaffected", "recovers"):
        result[0] = PopulationEffect(
            "live",
            "blocked",
            f"{_lost_text(change)}: conversations there cannot call "
            "it, and the model is not told why.",
        )
    if lost_in and result[2].effect == "unaffected":
        result[2] = PopulationEffect(
            "transcript",
            "diverges",
            f"Replays through {', '.join(lost_in)} cannot make "
            "this call and diverge from the recording.",
        )
    return tuple(result), measured


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lost_text(change: Change) -> str:
    parts = []
    for verdict, words in (
        ("hidden", "the tool is no longer offered"),
        ("server-dropped", "every tool of the server is lost"),
        ("session-broken", "every request of the session fails"),
    ):
        names = [e.profile for e in change.clients if e.effect == verdict]
        if names:
            parts.append(f"in {', '.join(names)} {words}")
    return _sentence("; ".join(parts))


def _unmeasured(change: Change) -> tuple[PopulationEffect, ...]:
    """Kinds without a frozen call that breaks: what each population meets, in words."""
    kind, d = change.kind, change.detail
    name = change.param or change.tool
    if kind == "annotation-changed" and change.severity == "breaking":
        hint = d.get("hint")
        return (
            PopulationEffect(
                "live",
                "recovers",
                f"Clients that gate on {hint} now ask before each call: an "
                "approval per call, or a refusal where nobody can approve.",
            ),
            PopulationEffect(
                "retry",
                "blocked",
                "A worker allowed to run only read-only or non-destructive tools "
                f"unattended stops at this call on every attempt ({hint} changed).",
            ),
            PopulationEffect(
                "transcript",
                "blocked",
                "A replay harness that approves calls by these hints stops at this call.",
            ),
        )
    if kind in ("constraint-tightened", "additional-properties-tightened"):
        which = (
            "calls whose values fall outside the new bounds"
            if kind == "constraint-tightened"
            else "calls carrying keys outside the properties (hybrid calls that also send an old name, "
            "keys a client adds)"
        )
        return (
            PopulationEffect(
                "live", "recovers", f"Only {which}: refused with an error the model can read."
            ),
            PopulationEffect("retry", "permanent-loss", f"Only {which}: refused on every attempt."),
            PopulationEffect("transcript", "diverges", f"Only {which}: the replay diverges there."),
        )
    if kind == "default-changed":
        text = (
            f"Frozen calls that leave {name} out now get {change.new!r} instead of {change.old!r}"
        )
        return (
            PopulationEffect("live", "silent-change", text + "."),
            PopulationEffect("retry", "silent-change", text + ", with no error."),
            PopulationEffect("transcript", "diverges", text + ": the replay diverges silently."),
        )
    if kind in ("output-field-removed", "output-field-retyped", "output-schema-removed"):
        return (
            PopulationEffect(
                "live",
                "unaffected",
                "The model reads the result's text; code that reads "
                "structuredContent is what breaks.",
            ),
            PopulationEffect(
                "retry",
                "blocked",
                "A job whose next step reads the structured result fails after "
                "the call itself succeeded, on every attempt.",
            ),
            PopulationEffect(
                "transcript", "diverges", "A replay that compares structured results diverges here."
            ),
        )
    note = "Frozen calls are accepted as before."
    if kind in ("param-added-optional", "enum-values-added"):
        note = "Frozen calls do not use what is new (new calls may lose it in clients that hold the old schema)."
    elif kind == "alias-added":
        note = (
            "Frozen calls keep working: the old name is still accepted and mapped to the new one."
        )
    return tuple(PopulationEffect(p, "unaffected", note) for p in ("live", "retry", "transcript"))


__all__ = [
    "CallOutcome",
    "Sides",
    "alias_pairs",
    "call_outcomes",
    "discovery_effects",
    "populations",
    "probe_effects",
    "result_effects",
    "server_outcome",
    "tool_effects",
]
