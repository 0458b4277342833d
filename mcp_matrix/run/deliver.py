"""The one call pipeline: an intended call, through a client profile, to a server, to a verdict.

``deliver(profile, held, call, server)`` is everything between a case (or a recorded call, or
a diff's representative call) and its verdict: whether the client shows the tool, the ways it
may send the call (``plan_call``: its call behaviours, intermittent ones included), the server's
answer, the client's result behaviours, the intact call's answer when calling twice is safe,
and ``mcp_matrix.run.classify``. ``run``, ``replay`` and ``diff`` are its three drivers; they differ
only in the ``Server`` they pass (``mcp_matrix.run.call_servers``: ``LiveServer`` or the offline
``SchemaServer``), so they agree on a verdict whenever their servers answer alike. What the
profile holds is a ``Held`` (``mcp_matrix.run.held``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.validation import Violation
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan, Finding
from mcp_matrix.core.verdicts import SHOWN, rank
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.call_servers import Intended, Server, unlisted
from mcp_matrix.run.classify import CONVERSIONS, Answer, Verdict, classify, same_result
from mcp_matrix.run.held import Held
from mcp_matrix.simulate.calls import Variant, evidence_for, plan_call


@dataclass(frozen=True)
class Delivery:
    """What became of one intended call through one profile.

    ``verdict`` is the worst of ``verdicts`` (one per variant delivered, in ``plan_call``'s
    order: the all-intermittent variant first, the usual one last); ``answers`` are theirs.
    ``variants`` are every way the client may send the call, delivered or not.
    ``before_server`` is True when the verdict needed no server (the client does not show the
    tool, or refuses to send the call): the same on every attempt. ``unsent`` are the ways the
    client may send the call that were not sent: the tool may not be called twice, so the call
    went out once, the way the client sometimes sends it (``deliver``).
    """

    verdict: Verdict
    verdicts: tuple[Verdict, ...] = ()
    answers: tuple[Answer | None, ...] = ()
    variants: tuple[Variant, ...] = ()
    before_server: bool = False
    notes: tuple[Finding, ...] = ()
    unsent: tuple[Variant, ...] = ()

    @property
    def answer(self) -> Answer | None:
        """The answer of the variant the verdict comes from."""
        for v, a in zip(self.verdicts, self.answers):
            if v is self.verdict:
                return a
        return None

    @property
    def usual(self) -> Variant | None:
        return self.variants[-1] if self.variants else None


class PreparedCall(NamedTuple):
    """An intended call made ready to send: the ways the client may send it, or a verdict that
    needs no server. A named tuple: one is made for every call and profile group a replay plans."""

    variants: tuple[Variant, ...]
    context: CallContext | None
    verdict: Verdict | None = None  # unreachable: the client does not show the tool


def prepare(profile: Profile, held: Held, call: Intended) -> PreparedCall:
    """Whether the client shows the tool, and every way it may send the call (``plan_call``)."""
    view = held.tools.get(call.tool)
    if view is None or view.verdict not in SHOWN:
        if view is not None:
            why = f"not visible in this client ({view.verdict})"
            if view.findings:
                why += f": {view.findings[-1].message}"
        elif held.stale:
            why = "the client never saw this tool (not in its cached list)"
        else:
            why = "the client does not hold this tool (not in its tool list)"
        names = tuple(f.behaviour for f in (view.findings if view else ()) if f.behaviour)
        verdict = classify(
            expect=call.expect,
            mutations=(),
            answer=None,
            hidden_reason=why,
            behaviours=names,
            evidence=evidence_for(profile, names),
        )
        return PreparedCall((), None, verdict)
    ctx = held.context(call.tool, view)
    if profile.call:
        return PreparedCall(
            tuple(plan_call(profile, ctx, call.arguments, call.omit_arguments)), ctx
        )
    # no call behaviour: the arguments go out as they are (plan_call's answer, without its work)
    plan = CallPlan(tool=call.tool, arguments=call.arguments, omit_arguments=call.omit_arguments)
    return PreparedCall((Variant(plan, ()),), ctx)


def deliver(
    profile: Profile, held: Held, call: Intended, server: Server, *, intermittent: bool = True
) -> Delivery:
    """The intended ``call`` through ``profile`` (holding ``held``) to ``server``, and its verdict.

    Each way the client may send the call is delivered (``intermittent=False``: only the usual
    one, ``replay``'s recorded calls) when the server may be called twice for it; otherwise the
    call reaches the server exactly once (a write listed in a cases file runs once per profile):
    the way the client sometimes sends it, when that differs from the usual way (it carries
    every change the usual way does and more: the way most likely to go wrong, so the release
    gate still sees it), and the usual way is ``unsent``. A way the client refuses to send
    needs no server and is always judged.
    """
    ready = prepare(profile, held, call)
    if ready.verdict is not None:
        return Delivery(ready.verdict, (ready.verdict,), (None,), before_server=True)
    ctx = ready.context
    assert ctx is not None  # prepare gives a context whenever it gives no verdict
    chosen = list(ready.variants if intermittent else ready.variants[-1:])
    unsent: tuple[Variant, ...] = ()
    sent = [v for v in chosen if v.plan.refused is None]
    if len(sent) > 1 and not server.may_repeat(call):
        first, usual = sent[0], sent[-1]  # plan_call's order: all intermittent ones on, then none
        differs = set(first.plan.applied) != set(usual.plan.applied)
        kept = first if differs else usual
        chosen = [v for v in chosen if v.plan.refused is not None or v is kept]
        unsent = (usual,) if differs else ()
    verdicts: list[Verdict] = []
    answers: list[Answer | None] = []
    notes: list[Finding] = []
    for variant in chosen:
        verdict, answer = decide(profile, held, ctx, call, variant, server)
        verdicts.append(verdict)
        answers.append(answer)
        notes += variant.plan.notes
    worst = min(verdicts, key=lambda v: rank(v.verdict))
    before = all(v.plan.refused is not None for v in chosen)
    return Delivery(
        worst,
        tuple(verdicts),
        tuple(answers),
        ready.variants,
        before,
        tuple(dict.fromkeys(notes)),
        unsent,
    )


def decide(
    profile: Profile,
    held: Held,
    ctx: CallContext,
    call: Intended,
    variant: Variant,
    server: Server | None,
) -> tuple[Verdict, Answer | None]:
    """One variant sent (unless the client refuses it: then ``server`` may be None) and classified."""
    plan = variant.plan
    answer = failure = reference = unsteady = None
    invalid: tuple[Violation, ...] = ()
    repaired: tuple[Violation, ...] = ()
    lost: tuple[str, ...] = ()
    if plan.refused is None and server is not None:
        answer = server.send(plan)
        if answer.ok and server.judges_results:
            failure = result_failure(profile, answer.result, ctx)
        if variant.mutations and answer.ok and failure is None and call.expect.outcome != "error":
            reference, unsteady = compare(server, call, plan, answer)
        if not answer.ok and answer.wire_error is None:  # why the listed schema refuses it
            invalid = answer.violations or server.violations(call.tool, plan.arguments)
        if answer.ok and failure is None:
            lost = unread(server, call, held.live_raw.get(call.tool), plan.arguments, answer, plan)
        if (
            answer.ok
            and variant.mutations
            and all(m.kind in CONVERSIONS for m in variant.mutations)
        ):
            repaired = server.violations(call.tool, call.arguments)  # as the model wrote it
    names = plan.applied + ((failure.behaviour,) if failure else ())
    if ctx.stale and held.note is not None:
        names += ("cache-tools",)
    names = tuple(dict.fromkeys(names))
    verdict = classify(
        expect=call.expect,
        mutations=variant.mutations,
        answer=answer,
        refused=plan.refused,
        client_failure=failure,
        reference=reference,
        unsteady=unsteady,
        invalid=invalid,
        repaired=repaired,
        unread=lost,
        behaviours=names,
        evidence=evidence_for(profile, names),
        sometimes=variant.sometimes,
    )
    return verdict, answer


def compare(
    server: Server, call: Intended, plan: CallPlan, answer: Answer
) -> tuple[Answer | None, str | None]:
    """The intact call's answer, and why sameness with it could not be shown (None: it could).

    The intact call goes right after the mutated one, the same way (``Server.intact``). When
    the two answers differ, the mutated call is sent once more: the same answer again means the
    server answered the same call alike before and after the intact one, so the difference is
    the mutation's; another answer means the server's state or its answers changed between
    calls, and the difference proves nothing (never a finding on a guess)."""
    reference = server.intact(call, plan)
    if reference is None or (reference.ok and same_result(answer, reference)):
        return reference, None
    if reference.wire_error is not None:
        return reference, f"the intact call got no answer ({reference.wire_error.get('kind')})"
    repeated = server.again(call, plan)
    if repeated is not None and repeated.ok and same_result(answer, repeated):
        return reference, None
    return reference, (
        "the mutated call, sent again right after the intact one, got another answer "
        "(the server's state changed between the calls, or its answer varies)"
    )


def unread(
    server: Server,
    call: Intended,
    tool: JSON,
    arguments: JSON,
    answer: Answer,
    sent: CallPlan | None = None,
) -> tuple[str, ...]:
    """The keys sent that the server accepted without reading them: those its listed schema does
    not name, when the same call without them (made as ``sent`` was) got the same answer
    (measured, never assumed)."""
    kept, pointers = unlisted(tool, arguments)
    if not pointers:
        return ()
    base = sent if sent is not None else CallPlan(tool=call.tool, arguments=arguments)
    without = server.again(call, replace(base, arguments=kept, omit_arguments=False))
    return pointers if without is not None and without.ok and same_result(answer, without) else ()


def result_failure(profile: Profile, result: JSON, ctx: CallContext) -> Finding | None:
    """The first of the profile's result behaviours that turns a successful result into a failure."""
    for use in profile.result:
        finding = registry.get(use.name).fn(result, ctx, **dict(use.params))
        if finding is not None:
            return replace(finding, behaviour=use.name, evidence=use.evidence)
    return None
