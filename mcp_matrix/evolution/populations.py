"""The three populations of frozen callers, and what a change does to each.

Populations (docs/design.md#rename-additively): the frozen call is judged by the new schema
alone, with no model to adapt: live conversations recover after a legible error, queued
retries fail on every attempt (a permanent loss), transcript replays diverge silently (a
false negative). The server is assumed to validate arguments against the schema it lists
(``effects.server_outcome``).
"""

from __future__ import annotations

from mcp_matrix.core.verdicts import LOST, V, rank
from mcp_matrix.evolution.effects import Sides, server_outcome
from mcp_matrix.evolution.model import Change, PopulationEffect
from mcp_matrix.evolution.schema import input_schema


def populations(sides: Sides, change: Change) -> tuple[tuple[PopulationEffect, ...], bool]:
    """The three populations of frozen callers; True when the fate was measured with a frozen call.

    A frozen call (a probe of shape ``old``) is judged by the new schema alone: queued retries
    and transcript replays send the stored JSON as it is, with no model to adapt it.
    """
    tool = change.tool
    new_schema = input_schema(sides.new_tools.get(tool))
    old_schema = input_schema(sides.old_tools.get(tool))
    stuck = sorted(
        {
            e.profile
            for e in change.clients
            if e.stale and e.effect == V.LOUD.name and e.shape == "old"
        }
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
    if fate == V.LOUD.name:
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
    elif fate == V.SILENT_LOSS.name:
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


__all__ = ["populations"]
