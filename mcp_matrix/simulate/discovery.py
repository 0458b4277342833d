"""Apply a profile's discovery behaviours to a snapshot: the ClientView per profile.

Pure and offline: it needs only the snapshot. Each behaviour's new findings are stamped
with the behaviour's name and the profile's evidence for it, so every cell of the grid can
be traced to a rule and its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.run_scope import fold_run_scope
from mcp_matrix.behaviours.schema_limits import enum_findings
from mcp_matrix.behaviours.schema_refs import external_ref_findings
from mcp_matrix.core.collector import collector_paused
from mcp_matrix.core.evidence import weakest
from mcp_matrix.core.materiality import MATERIAL, derive
from mcp_matrix.core.model import ClientView, Finding, ListState, ToolState, ToolView, evolve
from mcp_matrix.core.model import blamed as blame
from mcp_matrix.core.verdicts import V
from mcp_matrix.profiles.model import BehaviourUse, Profile


def initial_state(tools: Sequence[tuple[int, Any]], server: str) -> ListState:
    """The list as the server sent it: ``tools`` is ``(page, raw_tool)`` pairs."""
    states = []
    for index, (page, raw) in enumerate(tools):
        name = raw.get("name") if isinstance(raw, dict) else None
        schema = raw.get("inputSchema") if isinstance(raw, dict) else None
        description = raw.get("description") if isinstance(raw, dict) else None
        states.append(
            ToolState(
                original=raw,
                page=page,
                index=index,
                name=name if isinstance(name, str) else "",
                schema=schema,
                findings=external_ref_findings(raw) + enum_findings(raw),
                description=description,
            )
        )
    pages = 1 + max((p for p, _ in tools), default=0)
    return ListState(server=server, tools=tuple(states), pages=pages)


def _stamp(finding: Finding, use: BehaviourUse, done: dict | None = None) -> Finding:
    if finding.behaviour:
        return finding
    if done is None:
        return evolve(finding, behaviour=use.name, evidence=use.evidence)
    stamped = done.get(id(finding))  # findings shared by tools (memoised rewrites) stamp once
    if stamped is None:
        stamped = done[id(finding)] = evolve(finding, behaviour=use.name, evidence=use.evidence)
    return stamped


def _stamp_new(before: ListState, after: ListState, use: BehaviourUse) -> ListState:
    """Attribute the findings ``use`` just added to it (by count, findings only grow).

    Tools the behaviour left as they were (the same object) are not looked at again.
    """
    if after is before:
        return after
    if len(before.tools) != len(
        after.tools
    ):  # a behaviour that re-shaped the list stamps everything unstamped
        tools = tuple(
            evolve(t, findings=tuple(_stamp(f, use) for f in t.findings)) for t in after.tools
        )
    elif after.tools is before.tools:
        tools = after.tools
    else:
        out = None
        done: dict = {}  # id(finding) -> stamped; every finding stays alive through the loop
        for i, (old, new) in enumerate(zip(before.tools, after.tools)):
            if new is old:
                continue
            n = len(old.findings)
            if len(new.findings) > n:
                if out is None:
                    out = list(after.tools)
                out[i] = evolve(
                    new,
                    findings=new.findings[:n]
                    + tuple(_stamp(f, use, done) for f in new.findings[n:]),
                )
        tools = after.tools if out is None else tuple(out)
    n = len(before.findings)
    if len(after.findings) > n:
        findings = after.findings[:n] + tuple(_stamp(f, use) for f in after.findings[n:])
        return evolve(after, tools=tools, findings=findings)
    return after if tools is after.tools else evolve(after, tools=tools)


def sending_order(profile: Profile) -> tuple[BehaviourUse, ...]:
    """The profile's discovery entries as they apply: the client's own in order, then the
    model API's (``provider``) in order. The API judges the request the client sends, so its
    checks see the names and schemas after every rewrite of the client (a client that shortens
    names to 64 never sends a 70-character one), wherever ``extends`` placed the entry."""
    uses = profile.discovery
    if not any(u.provider for u in uses):
        return uses
    return tuple(u for u in uses if not u.provider) + tuple(u for u in uses if u.provider)


def refused_by_api(profile: Profile, rule: Finding) -> bool:
    """Whether ``rule`` (a culprit's last finding) is one of the model API's (``provider``):
    the client built and sends the tool, and the API refuses the request. A culprit of a
    client's own rule (a throw in its conversion, its list gate) was never sent."""
    return any(
        u.provider and u.name == rule.behaviour and u.evidence == rule.evidence
        for u in profile.discovery
    )


_Step = tuple[ListState, tuple[ToolState, ...]]  # the state after some entries, the tools set aside


def run_discovery(
    profile: Profile, state: ListState, prefixes: dict[tuple, _Step] | None = None
) -> ListState:
    """Run every discovery behaviour of ``profile`` over ``state``, in ``sending_order``.

    A behaviour that breaks the session because of one tool (``session-broken`` with a
    culprit: a model API that refuses the request that tool's name or schema makes) does not
    end discovery: the culprit is set aside with that finding and the behaviour runs again
    over the other tools, and so do the behaviours after it. The final state has the culprits
    back in place, ``outcome`` ``session-broken`` and their indices in ``blocked``; every other
    tool holds what the client does with it if the API accepted the request (no per-tool
    prediction is hidden by a session-level claim no offline run can show). A culprit of the
    API's rules (``provider``, run last) holds every rewrite of the client: what it sends.

    ``prefixes`` (``client_views``': one for the profiles run over one ``state``) keeps where
    each run of entries led: a profile whose list starts with entries another ran (the same
    behaviours, params and evidence, in the same order) starts where that run was.
    """
    uses = sending_order(profile)
    keys = _prefix_keys(uses) if prefixes is not None else ()
    step: _Step = (state, ())
    done = 0
    for n in range(len(keys), 0, -1):  # the longest prefix already run
        hit = prefixes.get(keys[n - 1]) if prefixes is not None else None
        if hit is not None:
            step, done = hit, n
            break
    for i in range(done, len(uses)):
        step = _run_use(uses[i], step)
        if prefixes is not None:
            prefixes[keys[i]] = step
    state, kept = step
    if not kept:
        return state
    tools = tuple(sorted(state.tools + kept, key=lambda t: t.index))
    blocked = tuple(sorted(t.index for t in kept))
    if state.outcome != "ok":  # a later failure of the whole list (a dropped server) decides
        return evolve(state, tools=tools, blocked=blocked)
    return evolve(state, tools=tools, outcome="session-broken", culprit=blocked[0], blocked=blocked)


def _prefix_keys(uses: Sequence[BehaviourUse]) -> list[tuple]:
    """A key for each prefix of ``uses``: the previous prefix's key and the entry's behaviour,
    params and evidence (what its findings are stamped with)."""
    keys: list[tuple] = []
    key: tuple = ()
    for use in uses:
        key = (key, use.name, registry.freeze(use.params), use.evidence)
        keys.append(key)
    return keys


def _run_use(use: BehaviourUse, step: _Step) -> _Step:
    """One discovery entry over the state, its culprits set aside (``run_discovery``)."""
    state, kept = step
    aside = list(kept)
    spec = registry.get(use.name)
    after = _stamp_new(state, spec.fn(state, **dict(use.params)), use)
    reruns = 0
    while (culprit := _blocking(state, after)) is not None:
        if reruns == 2:
            # Many culprits: a rule of one tool (its name, its schema) fails that tool alone
            # too, so the rest are found in one pass, not by a run of the list per culprit.
            alone = _alone(state, spec.fn, use)
            if alone:
                aside += alone
                out = {t.index for t in alone}
                state = evolve(
                    state,
                    tools=tuple(t for t in state.tools if t.index not in out),
                    findings=state.findings + tuple(t.findings[-1] for t in alone),
                )
                after = _stamp_new(state, spec.fn(state, **dict(use.params)), use)
                reruns += 1
                continue
        finding = after.findings[-1]
        aside.append(state.tools[culprit].with_finding(finding))
        state = evolve(
            state,
            tools=state.tools[:culprit] + state.tools[culprit + 1 :],
            findings=state.findings + (finding,),
        )
        after = _stamp_new(state, spec.fn(state, **dict(use.params)), use)
        reruns += 1
    return after, tuple(aside)


def _alone(state: ListState, fn: Any, use: BehaviourUse) -> list[ToolState]:
    """The tools that break the session even as the only tool of the list, each with the
    behaviour's finding added (stamped)."""
    out = []
    params = dict(use.params)
    for tool in state.tools:
        if tool.hidden:
            continue
        one = evolve(state, tools=(tool,))
        after = fn(one, **params)
        if _blocking(one, after) == 0:
            out.append(tool.with_finding(_stamp(after.findings[-1], use)))
    return out


def _blocking(before: ListState, after: ListState) -> int | None:
    """The position in ``before`` of the tool that made ``after`` break the session, if one did."""
    if before.outcome != "ok" or after.outcome != V.SESSION_BROKEN.name or after.culprit is None:
        return None
    return next((i for i, t in enumerate(before.tools) if t.index == after.culprit), None)


def client_view(profile: Profile, state: ListState) -> ClientView:
    """Turn the final list state into a discovery verdict per tool (docs/design.md#verdicts)."""
    with collector_paused():
        return _client_view(profile, state)


def client_views(profiles: Iterable[Profile], state: ListState) -> list[ClientView]:
    """``client_view`` for each profile, with one collector pause around them all: the
    collection a pause ends with scans what the profiles kept (views, the memo) once,
    rather than once per profile."""
    prefixes: dict[tuple, _Step] = {}  # profiles share the runs of entries their lists share
    with collector_paused():
        return [_client_view(p, state, prefixes) for p in profiles]


def _client_view(
    profile: Profile, state: ListState, prefixes: dict[tuple, _Step] | None = None
) -> ClientView:
    final = run_discovery(profile, state, prefixes)
    if final.outcome != "ok" and not (final.blocked and final.outcome == V.SESSION_BROKEN.name):
        return _whole_view(profile, final)
    blocked = set(final.blocked)
    views = []
    for tool in final.tools:
        label = tool.server_name or f"#{tool.index}"
        if tool.index in blocked:  # its last finding is the rule that breaks the session
            sent = refused_by_api(profile, tool.findings[-1])  # shown: what the API refuses
            views.append(_view(tool, label, "session-broken", tool.findings, sent))
        elif tool.hidden:
            views.append(_view(tool, label, "hidden", tool.findings, sent=False))
        else:
            findings = derive(tool.findings)  # degraded only when a constraint or guidance was lost
            verdict = (
                V.DEGRADED.name
                if any(f.materiality in MATERIAL for f in findings)
                else V.VISIBLE.name
            )
            views.append(_view(tool, label, verdict, findings, sent=True))
    culprits = tuple(v.tool for v in views if v.verdict == V.SESSION_BROKEN.name)
    return ClientView(
        profile=profile.name,
        outcome=final.outcome,
        tools=tuple(views),
        findings=final.findings,
        culprits=culprits,
    )


def _whole_view(profile: Profile, final: ListState) -> ClientView:
    """Every tool carries the list's outcome (a dropped server: the client holds none of them);
    the culprit's cell has the finding, every other cell a copy naming the culprit. A library
    that raises the failure (``list-failure-raises``) widens it to the run (blast radius ``run``)."""
    reason = fold_run_scope(final.findings)
    blamed = None
    culprit = next((t for t in final.tools if t.index == final.culprit), None)
    if reason is not None and final.culprit is not None:
        culprit_name = (culprit.server_name or f"#{final.culprit}") if culprit else "?"
        blamed = blame(reason, culprit_name)
    views = []
    for tool in final.tools:
        findings = tool.findings
        if reason is not None:
            own = blamed is None or final.culprit == tool.index
            findings = findings + (reason if own or blamed is None else blamed,)
        label = tool.server_name or f"#{tool.index}"
        views.append(_view(tool, label, final.outcome, findings, sent=False))
    return ClientView(
        profile=profile.name, outcome=final.outcome, tools=tuple(views), findings=final.findings
    )


_VIEW = ToolView(tool="", index=0, verdict="", model_name=None, model_schema=None)


def _view(
    tool: ToolState, label: str, verdict: str, findings: tuple[Finding, ...], sent: bool
) -> ToolView:
    """One cell; ``sent``: the client puts the tool in its request to the model, so the cell
    shows the name, schema and description it sends (a tool the API refuses included)."""
    return evolve(
        _VIEW,
        tool=label,
        index=tool.index,
        verdict=verdict,
        model_name=tool.name if sent else None,
        model_schema=tool.schema if sent else None,
        model_description=tool.description if sent else None,
        findings=derive(findings),
        weakest_evidence=_weakest(findings) if findings else None,
    )


_WEAKEST: dict[int, tuple[Any, str | None]] = {}


def _weakest(findings: tuple[Finding, ...]) -> str | None:
    """``weakest`` over the findings' evidence, each evidence tuple ranked once (profiles
    share one tuple per behaviour use across every finding it stamps)."""
    levels = []
    for f in findings:
        evidence = f.evidence
        hit = _WEAKEST.get(id(evidence))
        if hit is None or hit[0] is not evidence:
            if len(_WEAKEST) > 10_000:
                _WEAKEST.clear()
            hit = _WEAKEST[id(evidence)] = (evidence, weakest(evidence))
        if hit[1] is not None:
            levels.append(hit[1])
    if len(levels) < 2:
        return levels[0] if levels else None
    return weakest(levels)
