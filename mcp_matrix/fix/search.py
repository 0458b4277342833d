"""The fix loop: for each root cause of the triage, the smallest edit the re-run proves.

A cause is taken from the triage of the list as it stands (``mcp_matrix.report.triage``). Its
candidate edits (``mcp_matrix.fix.kinds``) are measured together first, then one by one: an
edit is kept when every required client's cell loses the cause's finding and no cell of any
client gets worse (a worse verdict, a new loss, a worse call). Then the list is measured again
and the next cause is taken, until no cause is left untried. What is left is explained.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_matrix.core.model import ClientView, ToolView
from mcp_matrix.fix import kinds
from mcp_matrix.fix.cost import corrected, costs
from mcp_matrix.fix.measure import Measured, intent, measure
from mcp_matrix.fix.model import (
    Applied,
    ClientCounts,
    Edit,
    FixOutcome,
    Rename,
    ServerItem,
    Unfixed,
)
from mcp_matrix.fix.patch import diff
from mcp_matrix.profiles.model import Profile
from mcp_matrix.report.grid import default_required
from mcp_matrix.report.triage import Cause, build_triage, cause_title, problems
from mcp_matrix.run.discovery import discovery_events
from mcp_matrix.targets.snapshot import Snapshot

MAX_ROUNDS = 60  # causes tried at most (each is one or a few re-runs)
RETRIES = 3  # times a cause fixed in part is taken again for what is left of it
# A list with edits made: the tools, and each edit with the tool as it was just before it.
Trial = tuple[list[Any], list[tuple[Any, Edit]]]


def _name(tool: Any) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return name if isinstance(name, str) else ""


@dataclass(frozen=True)
class _Run:
    """What every re-run of one fix shares: the snapshot, the profiles, the required clients and
    each tool's call (by its original name)."""

    doc: Mapping[str, Any]
    profiles: Sequence[Profile]
    server: str | None
    required: tuple[str, ...]
    intents: Mapping[str, Any]


class _State:
    """The list as the loop has it: tools, renames so far (new -> original), checks, applied."""

    def __init__(self, tools: list[Any]) -> None:
        self.tools = tools
        self.original: dict[str, str] = {_name(t): _name(t) for t in tools}
        self.checks: dict[str, list[Any]] = {}
        self.applied: list[Applied] = []

    def index(self, name: str) -> int | None:
        return next((i for i, t in enumerate(self.tools) if _name(t) == name), None)


def fix(
    snapshot: Snapshot,
    profiles: Sequence[Profile],
    require: Sequence[str] | None = None,
    server: str | None = None,
) -> FixOutcome:
    """Fix every root cause a schema change can fix, proved by re-running every profile."""
    doc = snapshot.doc
    tools = [copy.deepcopy(t) for _, t in snapshot.tools]
    intents = {
        t["name"]: intent(t.get("inputSchema"))
        for t in tools
        if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    }
    state = _State(tools)
    before = measure(doc, tools, profiles, server, {}, intents)
    events = _events(snapshot, before, profiles)
    required = tuple(require) if require else default_required(events)
    run = _Run(doc, profiles, server, required, intents)
    current = before
    tried: set[tuple] = set()
    unfixed: list[Unfixed] = []
    rounds: dict[tuple, int] = {}  # a cause fixed in part is taken again (at most RETRIES times)
    for _ in range(MAX_ROUNDS):
        cause = _next_cause(snapshot, current, profiles, required, tried)
        if cause is None:
            break
        key = _key(cause)
        rounds[key] = rounds.get(key, 0) + 1
        result = _try_cause(cause, state, run, current)
        if isinstance(result, Unfixed):
            unfixed.append(result)
            tried.add(key)
        else:
            current = result
            if rounds[key] >= RETRIES:
                tried.add(key)
    after_intents = {_new_name(state, n): a for n, a in intents.items()}
    final = measure(doc, state.tools, profiles, server, state.checks, after_intents)
    still = _still_unfixed(snapshot, final, profiles, required, unfixed)
    list_items, eras = _cache_hints(doc)
    fixed_doc = corrected(doc, state.tools, eras)
    return FixOutcome(
        server=snapshot.server_name,
        required=required,
        tools_before=tuple(t for _, t in snapshot.tools),
        tools_after=tuple(state.tools),
        applied=tuple(state.applied),
        unfixed=tuple(unfixed + still),
        clients=_counts(before, final, profiles, required, state),
        list_items=list_items,
        eras=eras,
        costs=costs(snapshot, fixed_doc, profiles, server),
        document=fixed_doc,
    )


def _new_name(state: _State, original: str) -> str:
    return next((new for new, old in state.original.items() if old == original), original)


def _events(snapshot: Snapshot, measured: Measured, profiles: Sequence[Profile]) -> list:
    """The measured cells as the discovery events the triage reads."""
    views = []
    for p in profiles:
        cells = [c for (name, _), c in measured.cells.items() if name == p.name]
        views.append(ClientView(p.name, "ok", tuple(_view(i, c) for i, c in enumerate(cells))))
    return discovery_events(snapshot, views, profiles)


def _view(index: int, cell: Any) -> ToolView:
    from mcp_matrix.core.model import Finding

    findings = tuple(
        Finding(x.code, x.message, x.pointer, lost=True, materiality="constraint")
        for x in cell.losses
    )
    return ToolView(cell.tool, index, cell.verdict, None, None, findings)


def _key(cause: Cause) -> tuple:
    return (cause.code, tuple(cause.keywords), cause.summary if not cause.keywords else "")


def _next_cause(
    snapshot: Snapshot,
    measured: Measured,
    profiles: Sequence[Profile],
    required: Sequence[str],
    tried: set[tuple],
) -> Cause | None:
    for cause in problems(build_triage(_events(snapshot, measured, profiles))):
        if _key(cause) in tried or not set(cause.clients) & set(required):
            continue
        if cause.blast_radius == "call":
            continue
        return cause
    return None


def _losses_of(
    cause: Cause, measured: Measured, required: Sequence[str]
) -> list[tuple[str, str, str, str]]:
    """(tool, code, pointer, message) of the cause's findings in the required clients."""
    out: list[tuple[str, str, str, str]] = []
    for (profile, tool), cell in measured.cells.items():
        if profile not in required or profile not in cause.clients:
            continue
        for loss in cell.losses:
            if loss.code != cause.code:
                continue
            if cause.keywords and loss.pointer.rsplit("/", 1)[-1] not in cause.keywords:
                continue
            owner = loss.culprit or tool
            # A cause without keywords is one tool's (or the list's): the triage merges the
            # clients' different wordings of it, so it is matched by its tools, not its words.
            if not cause.keywords and cause.tools and owner not in cause.tools:
                continue
            item = (owner, loss.code, loss.pointer, loss.message)
            if item not in out:
                out.append(item)
    return out


def _remains(
    cause: Cause, measured: Measured, required: Sequence[str], tools: set[str]
) -> list[str]:
    """The required clients where the cause's finding is still on one of ``tools``."""
    left = []
    for (profile, tool), cell in measured.cells.items():
        if (
            profile in required
            and tool in tools
            and any(
                x.code == cause.code
                and (not cause.keywords or x.pointer.rsplit("/", 1)[-1] in cause.keywords)
                for x in cell.losses
            )
        ):
            left.append(f"{profile} {tool}")
    return left


def _try_cause(
    cause: Cause,
    state: _State,
    run: _Run,
    current: Measured,
) -> Measured | Unfixed:
    title = cause_title(cause)
    losses = _losses_of(cause, current, run.required)
    # (tool, code, pointer, message, how many candidates): an edit is made again on the tool as
    # it stands when applied, so two edits of one node (minimum, maximum) both keep their text.
    proposals: list[tuple[str, str, str, str, int]] = []
    done: set[tuple[str, str]] = set()
    for tool, code, pointer, message in losses:
        if (tool, pointer) in done:
            continue
        done.add((tool, pointer))
        i = state.index(tool)
        if i is None:
            continue
        count = len(kinds.candidates(state.tools[i], code, pointer, message, state.tools))
        if count:
            proposals.append((tool, code, pointer, message, count))
    clients = tuple(c for c in cause.clients if c in run.required)
    if not proposals:
        return Unfixed(title, cause.code, tuple(cause.tools), clients, _no_fix_why(cause))
    tried: list[str] = []
    # All first candidates at once (one re-run), else each finding's candidates in turn.
    batch = _apply_all(state, [(*p[:4], 0) for p in proposals])
    if batch is not None:
        measured, bad, fixed = _judge(cause, batch, state, run, current)
        if not bad:
            _commit(state, batch, fixed)
            return measured
        tried.append(f"{len(proposals)} edit(s) together: " + "; ".join(bad[:3]))
    kept_any = False
    for tool, code, pointer, message, count in proposals:
        for k in range(count):
            trial = _apply_all(state, [(tool, code, pointer, message, k)])
            if trial is None:
                continue
            measured, bad, fixed = _judge(cause, trial, state, run, current)
            if (
                bad
                and bad[0].startswith("still lost")
                and _fewer(cause, measured, current, run.required)
            ):
                bad = bad[1:]  # this edit removed its own part of the cause; others remain
            if bad:
                edit = trial[1][0][1]
                tried.append(f"{edit.kind} of {edit.tool}: " + "; ".join(bad[:3]))
                continue
            _commit(state, trial, fixed)
            current, kept_any = measured, True
            break
    if kept_any:
        return current
    what = cause.summary.split(" Fix: ", 1)[0]
    why = f"{what}; every candidate edit left the loss or made another cell worse (tried below)"
    return Unfixed(title, cause.code, tuple(cause.tools), clients, why, tuple(tried))


def _fewer(cause: Cause, now: Measured, then: Measured, required: Sequence[str]) -> bool:
    """The cause has fewer findings in the required clients than before."""
    return len(_losses_of(cause, now, required)) < len(_losses_of(cause, then, required))


def _apply_all(state: _State, specs: list[tuple[str, str, str, str, int]]) -> Trial | None:
    """The list with each spec's edit made on the tool as it stands by then (candidate ``k`` of
    finding ``code`` at ``pointer``), or None when none applies."""
    tools = list(state.tools)
    made = []
    for tool, code, pointer, message, k in specs:
        i = next((j for j, t in enumerate(tools) if _name(t) == tool), None)
        if i is None:
            continue
        options = kinds.candidates(tools[i], code, pointer, message, tools)
        if k >= len(options):
            continue
        base = tools[i]
        tools[i] = options[k].after
        made.append((base, options[k]))
    if not made:
        return None
    return tools, made


def _judge(
    cause: Cause,
    trial: Trial,
    state: _State,
    run: _Run,
    current: Measured,
) -> tuple[Measured, list[str], list[tuple[str, str]]]:
    tools, pairs = trial
    edits = [e for _, e in pairs]
    names = dict(state.original)
    checks = {k: list(v) for k, v in state.checks.items()}
    for e in edits:
        new = _name(e.after) or e.tool
        if new != e.tool:
            names[new] = names.pop(e.tool, e.tool)
            checks[new] = checks.pop(e.tool, [])
        checks.setdefault(new, []).extend(i.check for i in e.items if i.check is not None)
    now_intents = {n: run.intents[o] for n, o in names.items() if o in run.intents}
    measured = measure(run.doc, tools, run.profiles, run.server, checks, now_intents)
    back = {n: _new_name(state, o) for n, o in names.items()}
    bad = measured.worse_than(current, back)
    touched = {_name(e.after) or e.tool for e in edits}
    left = _remains(cause, measured, run.required, touched)
    if left:
        bad = [f"still lost in {', '.join(left[:4])}"] + bad
    fixed = [
        (p, t)
        for (p, t), c in measured.cells.items()
        if t in touched
        and p in run.required
        and not c.lost
        and current.cells.get((p, back.get(t, t)))
        and current.cells[(p, back.get(t, t))].lost
    ]
    return measured, bad, fixed


def _commit(state: _State, trial: Trial, fixed: list[tuple[str, str]]) -> None:
    for before, edit in trial[1]:
        i = state.index(edit.tool)
        if i is None:
            continue
        ops = tuple(diff(before, edit.after, edit.reason))
        new = _name(edit.after) or edit.tool
        if new != edit.tool:
            state.original[new] = state.original.pop(edit.tool, edit.tool)
            state.checks[new] = state.checks.pop(edit.tool, [])
            clients = tuple(sorted({p for p, t in fixed if t == new}))
            edit = Edit(
                edit.kind,
                edit.tool,
                edit.after,
                edit.reason,
                edit.items,
                tuple(Rename(r.old, r.new, clients, r.guidance) for r in edit.renames),
                edit.cost,
            )
        state.checks.setdefault(new, []).extend(i.check for i in edit.items if i.check is not None)
        state.tools[i] = edit.after
        state.applied.append(
            Applied(edit, ops, tuple(sorted((p, t) for p, t in fixed if t == new)))
        )


def _no_fix_why(cause: Cause) -> str:
    """Why no schema change removes a cause: what the client does, and what the server can do."""
    what = cause.summary.split(" Fix: ", 1)[0]
    if cause.code.startswith("changed-by-client") and "type" in cause.keywords:
        what += " (the client cannot express this type)"
    chars = kinds.banned(cause.summary)
    if (
        cause.code in kinds.NAME_CODES
        and chars
        and not any(ch in tool for tool in cause.tools for ch in chars)
    ):
        what += (
            f"; the characters ({chars}) are in the server's name as the client's configuration "
            "calls it, not in a tool's: choose a configuration key without them (measure it "
            "with --name KEY)"
        )
    advice = f" Server-side: {cause.fix}" if cause.fix else ""
    return f"no schema change removes it: {what}.{advice}"


def _still_unfixed(
    snapshot: Snapshot,
    final: Measured,
    profiles: Sequence[Profile],
    required: Sequence[str],
    unfixed: list[Unfixed],
) -> list[Unfixed]:
    """Causes still present that no entry of ``unfixed`` explains: those no required client has,
    and what is left of a cause fixed in part."""
    out = []
    known = {u.title for u in unfixed}
    for cause in problems(build_triage(_events(snapshot, final, profiles))):
        title = cause_title(cause)
        if title in known:
            continue
        if set(cause.clients) & set(required):
            out.append(
                Unfixed(
                    title,
                    cause.code,
                    tuple(cause.tools),
                    tuple(c for c in cause.clients if c in required),
                    f"{cause.summary.split(' Fix: ', 1)[0]}; the edits the re-run proved fixed "
                    "part of this cause, and no edit of what is left could be proved",
                )
            )
        else:
            out.append(
                Unfixed(
                    title,
                    cause.code,
                    tuple(cause.tools),
                    tuple(cause.clients),
                    "not in a required client (an opt-in configuration or a probe): left as it is."
                    + (f" Server-side: {cause.fix}" if cause.fix else ""),
                )
            )
    return out


def _counts(
    before: Measured,
    after: Measured,
    profiles: Sequence[Profile],
    required: Sequence[str],
    state: _State,
) -> tuple[ClientCounts, ...]:
    out = []
    for p in profiles:
        then = [c for (name, _), c in before.cells.items() if name == p.name]
        now = [c for (name, _), c in after.cells.items() if name == p.name]
        lost_then = {c.tool for c in then if c.lost}
        now_ok = tuple(
            sorted(
                c.tool
                for c in now
                if not c.lost and state.original.get(c.tool, c.tool) in lost_then
            )
        )
        still = tuple(
            (c.tool, "; ".join(dict.fromkeys(x.message for x in c.losses)) or c.verdict)
            for c in now
            if c.lost
        )
        out.append(
            ClientCounts(
                p.name,
                p.name in required,
                len(now),
                len(lost_then),
                sum(c.lost for c in now),
                sum(c.call_lost for c in then),
                sum(c.call_lost for c in now),
                now_ok,
                still,
                tuple(
                    (c.tool, f"{c.call}: {c.call_reason}")
                    for c in now
                    if c.call_lost and not c.lost
                ),
            )
        )
    return tuple(out)


def _cache_hints(doc: Mapping[str, Any]) -> tuple[tuple[ServerItem, ...], Any]:
    """A 2026-07-28 list without ``ttlMs``/``cacheScope``: the hints the server must send, set in
    the corrected snapshot as the bundled memory server sends them (``ttlMs: 0``, ``private``)."""
    eras = copy.deepcopy(doc.get("eras"))
    modern = eras.get("modern") if isinstance(eras, dict) else None
    if not isinstance(modern, dict) or not modern.get("answered"):
        return (), eras
    missing = [k for k in ("ttlMs", "cacheScope") if modern.get(k) is None]
    if not missing:
        return (), eras
    modern.setdefault("ttlMs", None)
    if modern.get("ttlMs") is None:
        modern["ttlMs"] = 0
    if modern.get("cacheScope") is None:
        modern["cacheScope"] = "private"
    item = ServerItem(
        "",
        "send ttlMs and cacheScope with every tools/list result of the 2026-07-28 era (ttlMs: 0 "
        "while the list may change with a deploy; cacheScope: private for a per-user list): "
        "clients that honour them refetch instead of calling with a stale schema "
        "(handshake.honours_ttl in clients/python-sdk.yaml, clients/python-sdk-modern.yaml)",
        f"no {' or '.join(missing)} in the 2026-07-28 tools/list result",
    )
    return (item,), eras
