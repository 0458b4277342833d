"""Calls replayed through one profile in one session: each prepared, sent (to the live server,
or offline to the modelled one), classified and counted in the profile's tally, with retries,
aliases and recorded results compared live."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from mcp_matrix.behaviours.registry import freeze
from mcp_matrix.behaviours.rewrite import fingerprint
from mcp_matrix.core.event_values import CellViolation
from mcp_matrix.core.model import CallContext
from mcp_matrix.core.replay_events import ReplayCall
from mcp_matrix.core.tools import read_only, retry_safe
from mcp_matrix.core.verdicts import SHOWN
from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.evolution.effects import schema_server
from mcp_matrix.evolution.replay_config import Alias, ReplayConfig
from mcp_matrix.evolution.replay_effects import (
    ReplayEffect,
    alias_decided,
    changed_by,
    count_divergence,
    counted,
    retry_decided,
    validation_failure,
)
from mcp_matrix.evolution.replay_prepare import (
    Prepared,
    intended_call,
    prepare_and_classify,
    to_send,
)
from mcp_matrix.evolution.replay_report import (
    CATEGORY_OF,
    Tally,
    TranscriptTally,
    add_numbers,
    divergence,
)
from mcp_matrix.evolution.replay_shared import OFFLINE_MEMO, SharedOutcomes, memo_key
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.call_servers import Intended, LiveServer, SchemaServer, sorted_words
from mcp_matrix.run.classify import Answer, Verdict
from mcp_matrix.run.connection import Connection  # a session that reopens after a failure
from mcp_matrix.run.deliver import decide
from mcp_matrix.run.held import Held
from mcp_matrix.simulate.calls import ReadsContext, as_written, leaves_alone

# Call behaviours that change nothing the modelled server reads or replay reports: a ``_meta``
# (the server reads none), a session of its own (offline there is no session), the name of
# the rule on the verdict's evidence (not reported). Offline, a profile whose call behaviours
# differ from another's only by these plans the call alike (``_kind``): one outcome for both.
# tests/evolution/test_replay_unseen_offline.py checks that each changes only those fields.
UNSEEN_OFFLINE = frozenset({"add-meta", "new-session-per-call", "send-as-written"})

# What a profile's offline outcome of a call of a tool depends on besides the arguments
# (``ReplaySegment._kind``): the kind's number, what its behaviours may read, hidden or not.
Kind = tuple[int, tuple | None, bool]

_STRIPPED: dict[int, tuple[Profile, Profile]] = {}


def unseen_stripped(profile: Profile) -> Profile:
    """``profile`` without its ``UNSEEN_OFFLINE`` call behaviours (the same object when it has
    none), one copy a profile: offline they change nothing replay reads or reports, and
    planning with them made a ``_meta`` and a uuid4 for every call and profile."""
    if not any(u.name in UNSEEN_OFFLINE for u in profile.call):
        return profile
    hit = _STRIPPED.get(id(profile))
    if hit is None or hit[0] is not profile:  # holding the profile keeps its id unique
        kept = tuple(u for u in profile.call if u.name not in UNSEEN_OFFLINE)
        hit = _STRIPPED[id(profile)] = (profile, replace(profile, call=kept))
    return hit[1]


class ReplaySegment:
    """Calls replayed in one session (a fresh process for a stdio server): a live or retry file, or one transcript."""

    def __init__(
        self,
        config: ReplayConfig,
        held: Held,
        tally: Tally,
        shared: SharedOutcomes | None = None,
        server: SchemaServer | None = None,
    ) -> None:
        self.config = config
        self.held = held
        self.profile = held.profile
        self.tally = tally
        self.conn = (
            Connection(config.target, config.timeouts, held.profile) if config.target else None
        )
        # offline, the server is modelled: it validates against the inputSchema it lists (as diff's)
        self.server: LiveServer | SchemaServer = (
            LiveServer(
                self.conn,
                held.live_raw,
                reference=self._reference,
                repeat_safe=lambda call: read_only(held.live_raw.get(call.tool)),
            )
            if self.conn is not None
            else server
            if server is not None and server.tools is held.live_raw
            else schema_server(held.live_raw)
        )
        self._offline: dict[tuple[str, str], tuple[Verdict, Answer | None, Prepared]] = {}
        self.shared = shared if self.conn is None else None
        # tool -> what this profile's outcome of a call depends on (``_kind``)
        self._kinds: dict[str, Kind] = {}
        self._base: int | None = None  # the kind's number of a tool this profile shows
        self._plans = False  # whether a call behaviour of the kind plans the call
        # what else decides the outcome of a call as written (``_judge``, as ``_sent``)
        self._written = (held.stale, held.note is not None, id(held.live_raw))
        # offline, calls are planned without the behaviours the modelled server cannot tell
        # apart (``UNSEEN_OFFLINE``: a uuid4 per call for ``add-meta``, for nothing)
        self.planner = self.profile if self.conn is not None else unseen_stripped(self.profile)

    def _reference(self, call: Intended) -> Answer | None:
        """The intact call, on the same session, for a read-only tool (calling it twice changes nothing)."""
        if self.conn is None or not read_only(self.held.live_raw.get(call.tool)):
            return None
        if isinstance(self.server, LiveServer):  # always, with a connection
            self.server.used = True
        return self.conn.call(
            call.tool, call.arguments, None, call.omit_arguments, new_session=False
        )

    def play(self, calls: Iterable[RecordedCall]) -> None:
        try:
            for call in calls:
                self._call(call, self.tally)
            self._reads(self.tally)
        finally:
            if self.conn is not None:
                self.conn.close()

    # -- sessions -------------------------------------------------------------------------

    def _reads(self, tally: Tally) -> None:
        """The ``read_after`` tools, called once the segment's calls are done (counters summed over sessions)."""
        if self.conn is None or not (isinstance(self.server, LiveServer) and self.server.used):
            return
        for tool in self.config.read_after:
            answer = self.conn.call(tool, {}, None, False, new_session=False)
            sc = answer.result.get("structuredContent") if answer.ok else None
            if isinstance(sc, dict):
                tally.reads[tool] = add_numbers(tally.reads.get(tool), sc)
            else:
                tally.note(f"the read {tool} after the replay gave no structuredContent")

    # -- one call -------------------------------------------------------------------------

    def _attempt(
        self, call: RecordedCall, arguments: dict | None = None
    ) -> tuple[Verdict, Answer | None, Prepared]:
        """Prepare, send (to the live server, or offline to the modelled one) and classify one call."""
        target = call if arguments is None else replace(call, arguments=arguments)
        if self.shared is not None:
            return self._shared(target, self.shared)
        key = memo_key(target) if self.conn is None else None
        if key is not None and key in self._offline:
            return self._offline[key]
        prepared = prepare_and_classify(self.profile, self.held, target)
        if prepared.verdict is not None:
            done: tuple[Verdict, Answer | None, Prepared] = (prepared.verdict, None, prepared)
        else:
            intended = Intended(call.tool, target.arguments, id=call.id)
            ctx, primary = to_send(prepared)
            verdict, answer = decide(self.profile, self.held, ctx, intended, primary, self.server)
            done = (verdict, answer, prepared)
        if (
            key is not None
        ):  # offline the outcome is a pure function of the call: remember the last few
            if len(self._offline) >= OFFLINE_MEMO:
                self._offline.clear()
            self._offline[key] = done
        return done

    def _compute(
        self, call: RecordedCall, changed: bool = False
    ) -> tuple[Verdict, Answer | None, Prepared]:
        """One call through this profile and the modelled server (offline), not remembered.
        ``changed``: a call behaviour is known to change the call (``_judge`` asked): it is
        planned without asking ``leaves_alone`` again."""
        prepared = None if changed else self._as_written(call)
        if prepared is None:
            prepared = prepare_and_classify(self.planner, self.held, call)
        if prepared.verdict is not None:
            return prepared.verdict, None, prepared
        sent = self._sent(call, prepared)
        hit = self.shared.decided.get(sent) if sent is not None and self.shared else None
        if hit is not None:
            return hit[0], hit[1], prepared
        ctx, primary = to_send(prepared)
        verdict, answer = decide(
            self.planner, self.held, ctx, intended_call(call), primary, self.server
        )
        if sent is not None and self.shared is not None:
            self.shared.decide(sent, (verdict, answer))
        return verdict, answer, prepared

    def _as_written(self, call: RecordedCall) -> Prepared | None:
        """Offline, a call that every call behaviour of this profile leaves as written, made
        ready as a profile without any makes it (``as_written``: each behaviour applied to the
        call once for every group that has it), not planned again; None when one changes it.
        Most calls are left alone by most groups (14 of 17 plans of a 10,000-call replay); its
        verdict is then the one those groups share (``_sent``: the same key)."""
        held = self.held
        ctx = held.contexts.get(call.tool)
        if ctx is None:
            view = held.tools.get(call.tool)
            if view is None or view.verdict not in SHOWN:
                return None  # prepare says why the tool is not called
            ctx = held.context(call.tool, view)
        usual = as_written(self.planner, ctx, call.arguments)
        return None if usual is None else Prepared([usual], None, usual, ctx, None)

    def _sent(self, call: RecordedCall, prepared: Prepared) -> tuple | None:
        """What replay reports of ``decide``'s verdict on a call the client sends, offline (its
        name, words, answer and violations), depends on: the intended and the wire arguments
        (the mutations follow from the two) and the cache state. The modelled server reads
        neither ``_meta`` nor the session, and the behaviours that made the call and the
        intermittent ones only name the verdict's evidence, which replay does not report.
        Profiles of other kinds often send a call alike (a behaviour that changes nothing here,
        or only ``_meta``): they share the modelled server's verdict."""
        if self.shared is None or prepared.primary is None:
            return None
        words = self.shared.key(-1, call)
        plan = prepared.primary.plan
        if words is None or plan.omit_arguments:
            return None
        if plan.arguments is call.arguments:
            wire = ""
        else:
            try:
                wire = sorted_words(plan.arguments)
            except (TypeError, ValueError):
                return None
        held = self.held
        return (
            words,
            wire,
            held.stale,
            held.note is not None,
            id(held.live_raw),
        )

    def _kind(self, tool: str) -> Kind:
        """What this profile's offline outcome of a call of ``tool`` depends on besides the arguments.

        A tool the client does not show: why it does not (the arguments do not matter; the
        outcome is kept for good, one per tool and reason: ``SharedOutcomes.unseen``). Otherwise the call behaviours with their parameters and the cache state (as a
        number: kinds are compared for every call and profile; ``UNSEEN_OFFLINE`` ones left
        out), and, apart, what the behaviours may read (``CallContext``: the held schema and tool) when there are any. ``decide``
        reads the modelled server's tools and the cache note. Two profiles of one kind plan and
        send the call alike when the behaviours read nothing held or the same held schema and
        tool, so its outcome differs only in the evidence behind its verdict, which replay
        does not report: the outcome is shared as it is."""
        kind = self._kinds.get(tool)
        if kind is None:
            held = self.held
            view = held.tools.get(tool)
            assert self.shared is not None
            if view is None or view.verdict not in SHOWN:
                unseen = prepare_and_classify(self.profile, held, {"tool": tool})
                assert unseen.verdict is not None  # a tool not shown is unreachable
                why = (unseen.verdict.reason, unseen.verdict.behaviours)
                kind = (self.shared.number(("hidden", why)), None, True)
                self.shared.unseen.setdefault((kind[0], tool), (unseen.verdict, None, unseen))
            else:
                if self._base is None:  # the same for every tool this profile shows
                    uses = tuple(
                        (u.name, u.id, u.frequency, freeze(u.params))
                        for u in self.profile.call
                        if u.name not in UNSEEN_OFFLINE
                    )
                    self._plans = bool(uses)
                    base = (uses, held.stale, held.note is not None, id(held.live_raw))
                    self._base = self.shared.number(base)
                reads = None
                if self._plans:  # planned with a context that says whether it read what is held
                    reads = (fingerprint(view.model_schema), id(held.raw.get(tool)))
                    if tool not in held.contexts:
                        held.contexts[tool] = ReadsContext(
                            tool, view.model_schema, held.raw.get(tool), held.stale
                        )
                kind = (self._base, reads, False)
            self._kinds[tool] = kind
        return kind

    def _shared(
        self,
        call: RecordedCall,
        shared: SharedOutcomes,
        kind: Kind | None = None,
        changed: bool = False,
    ) -> tuple[Verdict, Answer | None, Prepared]:
        """The offline outcome of ``call``, computed once for the profiles of one kind (``_kind``,
        or ``kind`` when the caller has it): once for all of them when their behaviours read
        nothing held, else once per held copy."""
        base, reads, hidden = kind if kind is not None else self._kind(call.tool)
        if hidden:
            return shared.unseen[base, call.tool]
        key = shared.key(base, call)
        if key is None:
            return self._compute(call, changed)
        for needs, done in shared.memo.get(key, ()):
            if needs is None or needs == reads:
                return done
        ctx = self.held.contexts.get(call.tool)
        if isinstance(ctx, ReadsContext):
            ctx.fresh()
        done = self._compute(call, changed)
        read = reads is not None and (not isinstance(ctx, ReadsContext) or ctx.read_held)
        shared.remember(key, (reads if read else None, done))
        return done

    def _call(self, call: RecordedCall, tally: Tally) -> None:
        self._count(call, self._judge(call), tally)

    def _judge(
        self,
        call: RecordedCall,
        kind: Kind | None = None,
        written: dict[tuple, ReplayEffect] | None = None,
        alone: dict[int, bool | None] | None = None,
    ) -> ReplayEffect:
        """The outcome of ``call`` through this profile, and what it adds to a tally that does
        not depend on which profile's tally it is (offline, every part: ``SegmentsTogether``,
        which passes the tool's ``kind``, ``written``: this call's outcome as written, and
        ``alone``: whether it is left as written, by the kind's numbers several groups share,
        ``_leaves_alone``).

        Offline, a call that every call behaviour of the profile leaves as written has the
        outcome of the call as written (``_as_written``): the same for every profile group
        that leaves it so (most of them, for most calls), whatever its behaviours, but for what
        ``_sent`` says decides it (the held list's cache state and the modelled server), which
        keys ``written``. It is judged once a call for them, not once a group."""
        if written is None or kind is None or kind[2] or self.shared is None:
            return self._judged(call, kind)
        ctx = self.held.contexts[call.tool] if self._plans else None  # made by ``_kind``
        if ctx is not None and not (
            self._leaves_alone(call, kind[0], ctx, alone)
            if alone is not None and kind[0] in alone  # a number several groups share
            else leaves_alone(self.planner, ctx, call.arguments)
        ):
            return self._judged(call, kind, changed=True)
        effect = written.get(self._written)
        if effect is None:
            effect = written[self._written] = self._judged(call, kind)
        return effect

    def _leaves_alone(
        self,
        call: RecordedCall,
        base: int,
        ctx: CallContext,
        alone: dict[int, bool | None],
    ) -> bool:
        """``leaves_alone``, asked once a call for the groups of one kind's number (``base``:
        the same behaviours, cache state and server; ``alone`` names the numbers several groups
        share) when the behaviours read nothing held: such groups differ only by the schema
        and tool they hold (``_kind``'s reads), which the answer then does not depend on."""
        if not isinstance(ctx, ReadsContext):  # made before ``_kind``: its reads go unnoted
            return leaves_alone(self.planner, ctx, call.arguments)
        known = alone[base]
        if known is not None:
            return known
        found = leaves_alone(self.planner, ctx.fresh(), call.arguments)
        if not ctx.read_held:
            alone[base] = found
        return found

    def _judged(
        self, call: RecordedCall, kind: Kind | None = None, changed: bool = False
    ) -> ReplayEffect:
        verdict, answer, prepared = (
            self._shared(call, self.shared, kind, changed)
            if kind is not None and self.shared is not None
            else self._attempt(call)
        )
        category = CATEGORY_OF[verdict.verdict]
        retry = (
            retry_decided(category, prepared, self.conn is None)
            if self.tally.population == "retry"
            else None
        )
        alias = self.config.alias
        aliased = None
        if alias is not None and alias.used_by(call):
            unprobed = self.conn is None or not retry_safe(self.held.live_raw.get(call.tool))
            aliased = alias_decided(category, unprobed) or ("", "")
        sometimes = changed_by(prepared)
        return ReplayEffect(
            verdict,
            answer,
            prepared,
            category,
            sometimes,
            retry,
            aliased,
            counted(verdict, category, sometimes, retry),
        )

    def _count(self, call: RecordedCall, e: ReplayEffect, tally: Tally) -> None:
        """``e`` counted in ``tally`` (this profile's), its example kept, its event emitted."""
        tally.calls += 1
        for behaviours in e.sometimes:
            tally.sometimes[behaviours] += 1
        category = e.category
        tally.categories[category] += 1
        tally.verdicts[e.verdict.verdict] += 1
        if category != "delivered" and tally.wants_example(category):
            tally.example(category, e.example(call))
        retry = diverged = alias = None
        if tally.population == "retry":
            if e.retry is not None:
                tally.retry[e.retry[0]] += 1
                retry = e.retry[1]
            else:
                retry = self._retry(call, e.answer, e.prepared, tally)
        t = None
        if tally.population == "transcript" and call.transcript is not None:
            t = tally.transcripts.setdefault(call.transcript, TranscriptTally())
            t.calls += 1
        if (
            call.has_result and self.conn is not None
        ):  # a modelled answer is not the server's result
            failed = category in ("loud", "unreachable", "broken")
            why = divergence(call.result, e.answer, self.config.ignore_keys, failed=failed)
            count_divergence(call, why, tally, t)
            diverged = why is not None
        if e.alias is not None:
            tally.alias["uses"] += 1
            if e.alias[0]:
                tally.alias[e.alias[0]] += 1
                alias = e.alias[1]
            else:
                assert self.config.alias is not None  # an effect with an alias comes from one
                alias = self._alias(call, tally, self.config.alias)
        if self.config.emit is not None:
            self.config.emit(
                ReplayCall(
                    profile=self.profile.name,
                    file=tally.file,
                    line=call.line,
                    id=call.id,
                    tool=call.tool,
                    population=tally.population,
                    category=category,
                    verdict=e.verdict.verdict,
                    reason=e.reason(),
                    retry=retry,
                    diverged=diverged,
                    alias=alias,
                    mutations=e.cell_mutations(),
                    answer=e.verdict.answer,
                    violations=tuple(CellViolation.build(v.to_json()) for v in e.verdict.violations)
                    or None,
                )
            )

    def _retry(
        self, call: RecordedCall, answer: Answer | None, prepared: Prepared, tally: Tally
    ) -> str:
        """A failed queued retry that the failure alone does not decide (``retry_decided``),
        live: sent again when that is safe, else judged by whether the failure is deterministic."""
        r = tally.retry
        if retry_safe(self.held.live_raw.get(call.tool)):
            for _ in range(self.config.retries):
                r["attempts"] += 1
                again, _, _ = self._attempt(call)
                if CATEGORY_OF[again.verdict] == "delivered":
                    r["recovered"] += 1
                    return "recovered on retry"
            r["measured"] += 1
            return f"failed on every attempt ({1 + self.config.retries})"
        if validation_failure(answer, prepared, self.held.live_raw.get(call.tool)):
            r["deterministic"] += 1
            return (
                "would fail on every attempt (a validation error is deterministic; "
                "not retried: the tool is not repeat-safe)"
            )
        r["unknown"] += 1
        tally.note(
            "some failed retries were not sent again: the tool is neither read-only nor idempotent, "
            "and the failure is not a validation error, so whether a retry recovers is not measured"
        )
        return "undecided (not repeat-safe, not a validation error)"

    def _alias(self, call: RecordedCall, tally: Tally, alias: Alias) -> str:
        """An old-name call refused loudly, live, by a repeat-safe tool: was it refused because
        of the name? Probed with the new name (``alias_decided`` decides the other cases)."""
        a = tally.alias
        verdict, _, _ = self._attempt(call, alias.renamed(call.arguments))
        if CATEGORY_OF[verdict.verdict] == "delivered":
            a["name"] += 1
            tally.example(
                "alias-refused",
                {
                    "id": call.id,
                    "line": call.line,
                    "reason": f"refused with {alias.old}, delivered with {alias.new}",
                },
            )
            return f"refused for the old name: the same call with {alias.new} was delivered"
        a["both"] += 1
        return f"refused under both names (not about {alias.old})"


__all__ = ["ReplaySegment"]
