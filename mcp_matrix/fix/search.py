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

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.fix import kinds
from mcp_matrix.fix.causes import (
    cause_events,
    cause_key,
    fewer,
    losses_of,
    next_cause,
    no_fix_why,
    remains,
    still_unfixed,
)
from mcp_matrix.fix.cost import corrected, costs
from mcp_matrix.fix.measure import Measured, intent, measure
from mcp_matrix.fix.model import Applied, Edit, FixOutcome, Rename, Unfixed
from mcp_matrix.fix.outcome import cache_hints, client_counts
from mcp_matrix.fix.patch import diff
from mcp_matrix.profiles.model import Profile
from mcp_matrix.report.cause import Cause
from mcp_matrix.report.cause_words import cause_title
from mcp_matrix.report.grid import default_required
from mcp_matrix.targets.snapshot import Snapshot

MAX_ROUNDS = 60  # causes tried at most (each is one or a few re-runs)
RETRIES = 3  # times a cause fixed in part is taken again for what is left of it
# A list with edits made: the tools, and each edit with the tool as it was just before it.
Trial = tuple[list[JSON], list[tuple[JSON, Edit]]]


def _name(tool: JSON) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return name if isinstance(name, str) else ""


@dataclass(frozen=True)
class _Run:
    """What every re-run of one fix shares: the snapshot, the profiles, the required clients and
    each tool's call (by its original name)."""

    doc: Mapping[str, JSON]
    profiles: Sequence[Profile]
    server: str | None
    required: tuple[str, ...]
    intents: Mapping[str, JSON]


class _State:
    """The list as the loop has it: tools, renames so far (new -> original), checks, applied."""

    def __init__(self, tools: list[Any]) -> None:
        self.tools = tools
        self.original: dict[str, str] = {_name(t): _name(t) for t in tools}
        self.checks: dict[str, list[JSON]] = {}
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
    events = cause_events(snapshot, before, profiles)
    required = tuple(require) if require else default_required(events)
    run = _Run(doc, profiles, server, required, intents)
    current = before
    tried: set[tuple] = set()
    unfixed: list[Unfixed] = []
    rounds: dict[tuple, int] = {}  # a cause fixed in part is taken again (at most RETRIES times)
    for _ in range(MAX_ROUNDS):
        cause = next_cause(snapshot, current, profiles, required, tried)
        if cause is None:
            break
        key = cause_key(cause)
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
    still = still_unfixed(snapshot, final, profiles, required, unfixed)
    list_items, eras = cache_hints(doc)
    fixed_doc = corrected(doc, state.tools, eras)
    return FixOutcome(
        server=snapshot.server_name,
        required=required,
        tools_before=tuple(t for _, t in snapshot.tools),
        tools_after=tuple(state.tools),
        applied=tuple(state.applied),
        unfixed=tuple(unfixed + still),
        clients=client_counts(before, final, profiles, required, state.original),
        list_items=list_items,
        eras=eras,
        costs=costs(snapshot, fixed_doc, profiles, server),
        document=fixed_doc,
    )


def _new_name(state: _State, original: str) -> str:
    return next((new for new, old in state.original.items() if old == original), original)


def _try_cause(
    cause: Cause,
    state: _State,
    run: _Run,
    current: Measured,
) -> Measured | Unfixed:
    title = cause_title(cause)
    losses = losses_of(cause, current, run.required)
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
        return Unfixed(title, cause.code, tuple(cause.tools), clients, no_fix_why(cause))
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
                and fewer(cause, measured, current, run.required)
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
    left = remains(cause, measured, run.required, touched)
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
