"""The one call pipeline: an intended call, through a client profile, to a server, to a verdict.

``deliver(profile, held, call, server)`` is everything between a case (or a recorded call, or
a diff's representative call) and its verdict: whether the client shows the tool, the ways it
may send the call (``plan_call``: its call behaviours, intermittent ones included), the server's
answer, the client's result behaviours, the intact call's answer when calling twice is safe,
and ``mcp_matrix.run.classify``. ``run``, ``replay`` and ``diff`` are its three drivers; they differ
only in the ``Server`` they pass, so they agree on a verdict whenever their servers answer alike:

- ``LiveServer``: a connection to the real server (``run``, and ``replay`` with a target);
- ``SchemaServer``: offline, a server that validates arguments against the ``inputSchema``
  it lists and whose handler reads only the properties it lists (``diff``, and ``replay``
  against a snapshot). That is a model, said so in every verdict it decides: the sameness it
  shows is the sameness of what such a handler reads, and a key it does not list is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.validation import Violation, validate
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan, ClientView, Finding, ToolView
from mcp_matrix.core.verdicts import SHOWN, rank
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.classify import CONVERSIONS, Answer, Expectation, Verdict, classify, same_result
from mcp_matrix.simulate.calls import Variant, evidence_for, held_view, plan_call
from mcp_matrix.targets.snapshot import Snapshot

SERVER_DIALECT = "2020-12"  # what an MCP server validates against unless its schema says otherwise
INVALID_PARAMS = -32602
SUCCESS = Expectation("success")


@dataclass(frozen=True)
class Intended:
    """One intended call: what the caller (a model, a queued job, a transcript) meant to send."""

    tool: str
    arguments: JSON
    omit_arguments: bool = False
    expect: Expectation = SUCCESS
    id: str = (
        ""  # the case or recorded call it comes from (a live server's references are keyed by it)
    )


# -- what a client holds ------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    """The tool list one profile calls with: its views by server tool name and the raw tools."""

    profile: Profile
    view: ClientView | None  # None when only some tools' views are at hand (the diff's one tool)
    tools: Mapping[str, ToolView]
    raw: Mapping[str, Any]  # the tools as the client holds them (the baseline's for a stale cache)
    live_raw: Mapping[str, Any]  # the tools as the server lists them now
    note: Finding | None = None  # the cache behaviour's finding, when it kept an old list
    contexts: dict[str, CallContext] = field(default_factory=dict, compare=False, repr=False)

    @property
    def stale(self) -> bool:
        return self.raw is not self.live_raw

    def context(self, tool: str, view: ToolView) -> CallContext:
        """The call context of ``tool`` (the same for every call: made once)."""
        ctx = self.contexts.get(tool)
        if ctx is None:
            ctx = CallContext(
                tool=tool,
                held_schema=view.model_schema,
                held_tool=self.raw.get(tool),
                stale=self.stale,
            )
            self.contexts[tool] = ctx
        return ctx


def hold(
    profile: Profile,
    live: ClientView,
    baseline: ClientView | None,
    live_tools: Mapping[str, object],
    baseline_tools: Mapping[str, object] | None = None,
    old: Snapshot | None = None,
    new: Snapshot | None = None,
) -> Held:
    """The profile's held list: its cache behaviours choose the live or the baseline view, within
    the stale window of the snapshots ``old`` and ``new`` (``held_view``). Every driver builds it here."""
    view, note = held_view(profile, live, baseline, old, new)
    raw = baseline_tools if (view is not live and baseline_tools is not None) else live_tools
    return Held(profile, view, view.by_tool(), raw, live_tools, note)


def hold_tool(
    profile: Profile, tool: str, view: ToolView | None, raw: JSON, live: JSON | None = None
) -> Held:
    """One tool's held list (the diff's frozen call): ``view`` as the client shows it (None: it
    does not), ``raw`` the tool as the client holds it; ``live``, when given, the tool as the
    server lists it now, the client keeping the stale ``raw``."""
    tools = {tool: view} if view is not None else {}
    held_raw = {tool: raw}
    if live is None:
        return Held(profile, None, tools, held_raw, held_raw)
    note = Finding(
        code="stale-cache", message="the client keeps the tool list it read at session start"
    )
    return Held(profile, None, tools, held_raw, {tool: live}, note)


# -- the server seam ----------------------------------------------------------------------------


class Server(Protocol):
    """Where a planned call goes. ``judges_results``: its results are real (result behaviours apply)."""

    judges_results: bool

    def send(self, plan: CallPlan) -> Answer: ...

    def may_repeat(self, call: Intended) -> bool:
        """Whether ``call``'s tool may be called more than once (else the call goes out once,
        one way: ``deliver``; no intact call is made beside it)."""
        ...

    def intact(self, call: Intended, plan: CallPlan) -> Answer | None:
        """The intact call's answer, made as ``plan`` was (its session, right after it) where
        calling twice is safe, else None (sameness unknown)."""
        ...

    def violations(self, tool: str, arguments: JSON) -> tuple[Violation, ...]:
        """What the server's listed ``inputSchema`` says of ``arguments`` (empty: valid, or no schema)."""
        ...

    def again(self, call: Intended, plan: CallPlan) -> Answer | None:
        """``plan`` sent (once more, or with other arguments) where calling twice is safe, else None."""
        ...


def unlisted(tool: JSON, arguments: JSON) -> tuple[JSON, tuple[str, ...]]:
    """``arguments`` without the keys the server's listed ``inputSchema`` does not name, and their pointers."""
    kept, pointers = _read(_input_schema(tool), arguments, "")
    return kept, tuple(pointers)


def listed_violations(tool: JSON, arguments: JSON) -> tuple[Violation, ...]:
    """``arguments`` against the ``inputSchema`` a server lists for ``tool``."""
    schema = tool.get("inputSchema") if isinstance(tool, Mapping) else None
    if not isinstance(schema, (dict, bool)):
        return ()
    return validate(schema, arguments, SERVER_DIALECT).errors


class Caller(Protocol):
    def call(
        self, tool: str, arguments: JSON, meta: JSON, omit: bool, new_session: bool
    ) -> Answer: ...


class LiveServer:
    """The real server, through a connection (``mcp_matrix.run.matrix``'s, reopened after a failure).

    ``repeat_safe`` says whether the tool may be called more than once: then the intact call
    is made on the same connection right after the mutated one, as the client made it (its
    session, a new one for a client that opens one per call), so both meet the same server
    state, and the server is asked whether it reads a key its schema does not list; else a
    call goes out exactly once. ``reference`` replaces that intact call (``replay``'s own);
    ``on_answer`` hears of every answer (the run's circuit breaker). ``used`` says whether a
    call went to the shared session."""

    judges_results = True

    def __init__(
        self,
        conn: Caller,
        tools: Mapping[str, JSON],
        reference: Callable[[Intended], Answer | None] | None = None,
        on_answer: Callable[[str, Answer], None] | None = None,
        repeat_safe: Callable[[Intended], bool] | None = None,
    ) -> None:
        self.conn = conn
        self.tools = tools
        self._reference = reference
        self._on_answer = on_answer
        self._repeat_safe = repeat_safe
        self.used = False

    def send(self, plan: CallPlan) -> Answer:
        self.used = self.used or not plan.new_session
        answer = self.conn.call(
            plan.tool, plan.arguments, plan.meta, plan.omit_arguments, plan.new_session
        )
        if self._on_answer is not None:
            self._on_answer(plan.tool, answer)
        return answer

    def may_repeat(self, call: Intended) -> bool:
        return self._repeat_safe is not None and self._repeat_safe(call)

    def intact(self, call: Intended, plan: CallPlan) -> Answer | None:
        if self._reference is not None:
            return self._reference(call)
        return self.again(call, intact_plan(call, plan))

    def violations(self, tool: str, arguments: JSON) -> tuple[Violation, ...]:
        return listed_violations(self.tools.get(tool), arguments)

    def again(self, call: Intended, plan: CallPlan) -> Answer | None:
        return self.send(plan) if self.may_repeat(call) else None


def intact_plan(call: Intended, plan: CallPlan) -> CallPlan:
    """``plan`` with the intended arguments: the intact call, sent the way the mutated one was."""
    return replace(plan, arguments=call.arguments, omit_arguments=call.omit_arguments)


Rule = Callable[
    [JSON, JSON], Violation | None
]  # (inputSchema, arguments) -> a handler's refusal, or None


class SchemaServer:
    """Offline: a server that validates against the ``inputSchema`` it lists and reads only what it lists.

    An invalid call gets JSON-RPC -32602 with the validation errors as fields; ``rules`` add a
    handler's own refusals (the diff's at-least-one-of an alias and its target). A valid call
    succeeds with what the handler reads (the arguments kept to the listed properties) as its
    text, so the intact call's answer is comparable: calling twice is always safe here, and a
    key the schema does not list is never read (a real server shows whether it reads one only
    when it may be called again: ``LiveServer.again``).
    """

    judges_results = False  # its results are a model: no client check of them means anything

    MEMO = 4096  # distinct calls whose answer is remembered (a replay repeats its calls)

    def __init__(self, tools: Mapping[str, JSON], rules: tuple[Rule, ...] = ()) -> None:
        self.tools = tools
        self.rules = rules
        self._answers: dict[tuple[str, str], Answer] = {}

    def violations(self, tool: str, arguments: JSON) -> tuple[Violation, ...]:
        """The listed schema's errors, else the handler rules'."""
        found = listed_violations(self.tools.get(tool), arguments)
        if found:
            return found
        schema = _input_schema(self.tools.get(tool))
        return tuple(v for v in (rule(schema, arguments) for rule in self.rules) if v is not None)

    def send(self, plan: CallPlan) -> Answer:
        return self.answer(plan.tool, None if plan.omit_arguments else plan.arguments)

    def may_repeat(self, call: Intended) -> bool:
        return True  # a model: nothing is written

    def intact(self, call: Intended, plan: CallPlan) -> Answer | None:
        return self.send(intact_plan(call, plan))

    def answer(self, tool: str, arguments: JSON) -> Answer:
        """How the modelled server answers ``tools/call`` of ``tool`` with ``arguments`` (the same
        arguments: the same answer, so the last ``MEMO`` distinct calls are remembered)."""
        try:
            key: tuple[str, str] | None = (tool, json.dumps(arguments, sort_keys=True))
        except (TypeError, ValueError):
            key = None
        known = self._answers.get(key) if key is not None else None
        if known is None:
            known = self._answer(tool, arguments)
            if key is not None:
                if len(self._answers) >= self.MEMO:
                    self._answers.clear()
                self._answers[key] = known
        return known

    def _answer(self, tool: str, arguments: JSON) -> Answer:
        if tool not in self.tools:
            return Answer(error={"code": INVALID_PARAMS, "message": f"Unknown tool: {tool}"})
        found = self.violations(tool, {} if arguments is None else arguments)
        if found:
            return Answer(
                error={
                    "code": INVALID_PARAMS,
                    "message": "Invalid params: " + "; ".join(v.text for v in found[:3]),
                },
                violations=found,
            )
        read, _ = _read(_input_schema(self.tools[tool]), arguments, "")
        text = json.dumps(read, sort_keys=True, default=str)
        return Answer(result={"content": [{"type": "text", "text": text}], "isError": False})

    def again(self, call: Intended, plan: CallPlan) -> Answer | None:
        return self.send(plan)


def _input_schema(tool: JSON) -> JSON:
    return tool.get("inputSchema") if isinstance(tool, Mapping) else None


def _read(schema: JSON, value: JSON, pointer: str) -> tuple[JSON, list[str]]:
    """What a handler that reads only the listed properties sees of ``value``, and the pointers it ignores.

    Only where the schema names its properties and leaves other keys open (closed ones were
    refused by validation; ``patternProperties`` or a schema for extra keys means they are read)."""
    if not isinstance(value, dict) or not isinstance(schema, Mapping):
        return value, []
    if "patternProperties" in schema or schema.get("additionalProperties") not in (None, True):
        return value, []
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    kept: dict[str, JSON] = {}
    ignored: list[str] = []
    for key, sub in value.items():
        where = f"{pointer}/{key}"
        if key in props:
            kept[key], inner = _read(props[key], sub, where)
            ignored += inner
        else:
            ignored.append(where)
    return kept, ignored


# -- the pipeline -------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class PreparedCall:
    """An intended call made ready to send: the ways the client may send it, or a verdict that needs no server."""

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


__all__ = [
    "SERVER_DIALECT",
    "Delivery",
    "Held",
    "Intended",
    "LiveServer",
    "PreparedCall",
    "SchemaServer",
    "Server",
    "compare",
    "decide",
    "deliver",
    "hold",
    "hold_tool",
    "intact_plan",
    "listed_violations",
    "prepare",
    "result_failure",
    "unlisted",
    "unread",
]
