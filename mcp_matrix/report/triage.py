"""Triage: the cells of a run grouped by root cause, worst first, so each problem is read once.

A root cause is what one change of the server fixes:

- a tool that a client hides, or that makes a client drop the server or break the session:
  keyed by (the tool that causes it, the finding code, the fix); the cells of the other tools
  a dropped server takes along, and the calls that could not reach a hidden tool, are counted
  in its blast radius rather than listed again;
- a schema loss (a keyword a client strips): keyed by (finding code, keyword, fix), with every
  tool and client it touches, since one schema habit (say, ``default`` values) is one fix;
- a call problem: keyed by (tool, verdict, behaviours, fix), with the cases it covers.

Only cells worse than ``visible``/``intact`` (and ``tolerated``) become causes. Findings that
lose nothing (materiality ``none``) never do; a forced stricter schema is its own, lowest
cause (``note``), not a loss. Every writer opens with this list (terminal, Markdown, HTML).
A cause, how a cell is counted in it and how causes merge is ``report.cause``; how every
writer words one, ``report.cause_words``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain
from typing import NamedTuple

from mcp_matrix.core.event_values import CellEvidence, CellFinding
from mcp_matrix.core.events import (
    CallCell,
    DiscoveryCell,
    Event,
    RunStarted,
    SnapshotTaken,
    typed_events,
)
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.jsontypes import JSONObject
from mcp_matrix.core.materiality import MATERIAL, keyword_at, materiality_of
from mcp_matrix.core.model import ClientView, Finding, culprit_message
from mcp_matrix.core.tools import tools_by_name
from mcp_matrix.core.verdicts import FINE, LOST, SHOWN, V
from mcp_matrix.report.advice import KEEP_LOUD, advice_for
from mcp_matrix.report.cause import Cause, add_cell, count_cell, merge_causes
from mcp_matrix.report.grid import gate_scope

# A discovery cell as the triage reads it: (profile, tool, verdict, findings, weakest evidence),
# from its typed event or straight from the view it was made of (``discover`` never types its
# cells one by one: 260,000 at 5,000 tools x 52 profiles). The findings are the event's
# (``CellFinding``) or the view's (``Finding``): the triage reads the fields both have.
AnyFinding = CellFinding | Finding
Row = tuple[str, str, str, Sequence[CellFinding] | Sequence[Finding], str | None]

_BLAMED = "because of tool "
NOTES = {
    "additional-properties-forced": "additionalProperties: false added: the model is told no other keys are allowed",
    "made-required": "optional properties made required (strict mode): the model must always send a value",
}


def _sources(evidence: Iterable[CellEvidence] | Iterable[Evidence] | None) -> list[tuple[str, str]]:
    return [(e.level or "assumed", e.source) for e in evidence or () if e.source]


def _tools_by_name(events: list[Event]) -> dict[str, JSONObject]:
    snap = next((e.snapshot for e in events if isinstance(e, SnapshotTaken)), None) or {}
    listed = snap.get("tools")
    entries = listed if isinstance(listed, list) else []
    return tools_by_name(t.get("tool") for t in entries if isinstance(t, dict))


def _decisive(findings: Sequence[AnyFinding]) -> AnyFinding:
    """The finding that decided a hidden/dropped/broken cell: it comes last."""
    return findings[-1] if findings else _NO_FINDING


_NO_FINDING = CellFinding(code="None", message="")  # a lost cell without findings: the key it had


def _material(findings: Sequence[AnyFinding]) -> list[AnyFinding]:
    out = []
    for f in findings:
        level = f.materiality or materiality_of(f.code, f.pointer or "", bool(f.lost))
        if level in MATERIAL:
            out.append(f)
    return out


def _stricter(findings: Sequence[AnyFinding]) -> list[AnyFinding]:
    return [f for f in findings if f.materiality == "stricter" and f.code != "changed-by-client"]


def _where(pointer: str) -> str:
    p = pointer.removeprefix("/inputSchema")
    keyword, whole = keyword_at(pointer)
    if whole:
        return f"property {p.rsplit('/', 1)[-1]!r}" if keyword == "properties" else p or "/"
    parent = p.rsplit("/", 1)[0] if p.count("/") > 1 else "/"
    return f"{keyword} at {parent}" if keyword else p or "/"


def _blamed_summary(message: str, culprit: str) -> tuple[bool, str]:
    """Whether a hard finding blames another tool, and the summary the cause is keyed by.

    Another tool's cell in a dropped server: the culprit field names the tool, and the culprit's
    own message is read with it (files written before the field: the words).
    """
    blamed = bool(culprit) or message.startswith(_BLAMED)
    if culprit:
        return blamed, culprit_message(message, culprit)
    if blamed and ": " in message:
        return blamed, message.split(": ", 1)[1]
    return blamed, message


def event_rows(events: Iterable[Event]) -> Iterator[Row]:
    """The discovery cells of a stream as rows."""
    for e in events:
        if isinstance(e, DiscoveryCell):
            yield e.profile, e.tool, e.verdict, e.findings, e.weakest_evidence


def view_rows(views: Iterable[ClientView]) -> Iterator[Row]:
    """Every cell of the views as a row, in the order ``discovery_events`` types them."""
    for v in views:
        profile = v.profile
        for t in v.tools:
            yield profile, t.tool, t.verdict, t.findings, t.weakest_evidence


class _Step(NamedTuple):  # a tuple: tens of thousands are made, and frozen fields cost 12 calls
    """What every cell with one verdict and findings adds to one cause: its key (a hidden tool's
    cause is the tool's own: ``per_tool``), the cause it starts when it is the first, and the
    kind's own part: a hard cause's culprit (a finding not blamed on another tool), a loss's
    place (``where``, "" for the whole tool)."""

    kind: str  # hard, lost or note
    key: tuple
    verdict: str  # the verdict a new cause starts with
    code: str
    summary: str
    fix: str | None
    evidence: tuple[tuple[str, str], ...]
    blast_radius: str = "tool"
    per_tool: bool = False
    culprit: bool = False
    where: str = ""
    keyword: str = ""

    def start(self) -> Cause:
        return Cause(
            self.verdict,
            "",
            self.code,
            self.summary,
            self.fix,
            blast_radius=self.blast_radius,
            evidence=list(self.evidence),
            stricter=self.kind == "note",
            keywords=[self.keyword] if self.keyword else [],
        )


def _fixes() -> Callable[[str, AnyFinding | None], str | None]:
    """The fix for one finding of a discovery cell (None: a cell without findings), worked out
    once per (verdict, code, behaviour, blast radius): all a discovery cell's advice reads of one finding
    (``advice.advice_parts``; tests/report/test_triage_views.py holds them to it). 5,000 tools
    x 52 profiles have ~19,000 distinct findings, but a few hundred such keys."""
    known: dict[tuple[str, str, str, str, bool] | str, str | None] = {}

    def fix_for(verdict: str, finding: AnyFinding | None) -> str | None:
        key = (
            verdict
            if finding is None
            else (
                verdict,
                finding.code,
                finding.behaviour or "",
                finding.blast_radius or "",
                bool(finding.lost),
            )
        )
        if key not in known:
            cell = DiscoveryCell(profile="", tool="", verdict=verdict)
            one = None
            if finding is not None:
                one = CellFinding(
                    finding.code,
                    "",
                    lost=finding.lost,
                    blast_radius=finding.blast_radius,
                    behaviour=finding.behaviour or None,
                )
            known[key] = advice_for(cell, finding=one)
        return known[key]

    return fix_for


def _plan(
    verdict: str,
    findings: Sequence[AnyFinding],
    fix_for: Callable[[str, AnyFinding | None], str | None],
) -> tuple[_Step, ...]:
    """The steps of every cell with this verdict and these findings (profiles share them)."""
    steps = []
    if verdict in LOST:
        f = _decisive(findings)
        blamed, summary = _blamed_summary(f.message, f.culprit or "")
        steps.append(
            _Step(
                "hard",
                ("hard", verdict, f.code, summary, ""),
                verdict,
                f.code,
                summary,
                fix_for(verdict, findings[-1] if findings else None),
                tuple(_sources(f.evidence)),
                blast_radius=f.blast_radius or "tool",
                per_tool=verdict == V.HIDDEN.name,
                culprit=not blamed,
            )
        )
    elif verdict not in FINE:
        for f in _material(findings) or findings[:1]:
            code, pointer = f.code, f.pointer or ""
            keyword = keyword_at(pointer)[0] if code.endswith("-by-client") else ""
            fix = fix_for(verdict, f)
            steps.append(
                _Step(
                    "lost",
                    ("lost", code, keyword, fix),
                    verdict,
                    code,
                    f.message or code,
                    fix,
                    tuple(_sources(f.evidence)),
                    where=_where(pointer) if pointer else "",
                    keyword=keyword,
                )
            )
    if verdict in SHOWN:  # a forced stricter schema (additionalProperties: false added): a note
        for f in _stricter(findings):
            code = f.code
            text = NOTES.get(code, f.message or code)
            steps.append(
                _Step(
                    "note",
                    ("note", code),
                    V.VISIBLE.name,
                    code,
                    text,
                    None,
                    tuple(_sources(f.evidence)),
                )
            )
    return tuple(steps)


def build_triage(events: Iterable[Event], views: Iterable[ClientView] = ()) -> list[Cause]:
    """The root causes of a run's cells, worst first. ``views``: discovery cells given as the
    views they come from, counted after the events' own (``discover``: the run's start and
    finish as events, the cells never typed)."""
    events = typed_events(events)
    calls = _in_run_order(events, [e for e in events if isinstance(e, CallCell)])
    causes: dict[tuple, Cause] = {}
    # Membership beside each cause's ordered lists: a cause that takes down 5,000 tools is
    # added to once per cell (100,000), and scanning its lists made the triage quadratic.
    tools_of: dict[tuple, set[str]] = {}
    hard_of: dict[tuple[str, str], tuple] = {}  # (profile, tool) -> the key of its hiding cause
    _discovery_causes(
        chain(event_rows(events), view_rows(views)), causes, tools_of, hard_of if calls else None
    )
    add = partial(add_cell, causes, tools_of)
    tools = _tools_by_name(events) if calls else {}
    for c in calls:
        verdict, tool = c.verdict, c.tool
        if verdict in FINE:
            continue
        if verdict == V.UNREACHABLE.name:
            hard = hard_of.get((c.profile, tool))
            if hard is not None:
                causes[hard].calls_lost += 1
                continue
        fix = advice_for(c, tools.get(tool))
        key = ("call", tool, verdict, c.behaviours, fix)
        add(
            key,
            Cause(
                verdict,
                tool,
                ",".join(c.behaviours) or verdict,
                c.reason or verdict,
                fix,
                blast_radius="call",
                evidence=_sources(c.evidence),
            ),
            c,
        )
    # Labelled "not required by default" exactly when the default gate ignores every cell of
    # the cause (read over every run of a merged file, as the gate reads it).
    gate = gate_scope(events)
    merged = merge_causes(causes)
    for cause in merged:
        cause.optional = (
            bool(cause.clients)
            and not set(cause.clients) & gate.required
            and not any(
                gate.judges(verdict, client)
                for verdict, clients in cause.by_verdict.items()
                for client in clients
            )
        )
        cause.safe = set(cause.by_verdict) == {V.LOUD.name} and cause.fix == KEEP_LOUD
    return sorted(merged, key=lambda c: c.severity)


def _in_run_order(events: Sequence[Event], calls: list[CallCell]) -> list[CallCell]:
    """The call cells by their profile's place in the run (its run-started line; profiles no
    run lists after, by name), each profile's in the order it made them: profiles call side by
    side (``--jobs``), so arrival order differs between two runs of the same server, and the
    triage's client lists must not."""
    place: dict[str, int] = {}
    for e in events:
        if isinstance(e, RunStarted):
            for listed in e.profiles:
                place.setdefault(listed.name, len(place))
    last = len(place)
    return sorted(calls, key=lambda c: (place.get(c.profile, last), c.profile))


def _discovery_causes(
    rows: Iterable[Row],
    causes: dict[tuple, Cause],
    tools_of: dict[tuple, set[str]],
    hard_of: dict[tuple[str, str], tuple] | None,
) -> None:
    """Count every discovery cell under its causes, in order; ``hard_of`` (when there are calls
    to blame on a hidden tool): each lost cell's hard cause."""
    # The steps by verdict and findings: 5,000 tools x 52 profiles are 140,000 cells with findings
    # or worse than visible, but 23,000 distinct (verdict, findings); equal findings are equal
    # values (frozen), in an event or a view.
    plans: dict[tuple[str, Sequence[AnyFinding]], tuple[_Step, ...]] = {}
    fix_for = _fixes()
    listed: dict[str, set[str]] = {}  # profile -> the tools it lists
    broken: dict[str, set[str]] = {}  # profile -> the tools that break its session
    culprits_of: dict[tuple, set[str]] = {}  # beside each cause's culprits
    lost_of: dict[tuple, set[str]] = {}  # and beside what each loses
    sessions: set[tuple[tuple, str]] = set()  # (cause, profile) of a culprit's broken session
    notes: list[tuple[_Step, tuple, str, str | None]] = []  # after every other cause
    named: set[str] = set()
    last = None  # the rows come a profile at a time
    for profile, tool, verdict, findings, weakest in rows:
        if profile is not last:
            named, last = listed.setdefault(profile, set()), profile
        named.add(tool)
        if verdict == V.SESSION_BROKEN.name:
            broken.setdefault(profile, set()).add(tool)
        if not findings and verdict in FINE:
            continue  # most cells: nothing to count
        plan = plans.get((verdict, findings))
        if plan is None:
            plan = plans[(verdict, findings)] = _plan(verdict, findings, fix_for)
        cell_id = ("discovery", profile, tool, None)
        for step in plan:
            if step.kind == "note":
                notes.append((step, cell_id, verdict, weakest))
                continue
            key = (*step.key[:-1], tool) if step.per_tool else step.key
            cause = causes.get(key)
            if cause is None:
                cause = causes[key] = step.start()
                tools_of[key] = set()
            count_cell(cause, tools_of[key], cell_id, verdict, weakest)
            if step.kind == "lost":
                where = f"{tool}: {step.where}" if step.where else tool
                gone = lost_of.setdefault(key, set())
                if where not in gone:
                    gone.add(where)
                    cause.lost.append(where)
                continue
            if step.culprit:  # the culprit's own cell names the tool to change
                named_tools = culprits_of.setdefault(key, set())
                if tool not in named_tools:
                    named_tools.add(tool)
                    cause.culprits.append(tool)
                if verdict == V.SESSION_BROKEN.name:
                    sessions.add((key, profile))
                cause.fix = step.fix
            if hard_of is not None:
                hard_of[(profile, tool)] = key
    for key in culprits_of:
        # Every tool's own cell carries a session or server finding (the handshake, the era):
        # the server as a whole is the cause, not one of its tools.
        cause = causes[key]
        cause.tool = cause.culprits[0] if len(cause.culprits) == 1 else ""
    for key, profile in sessions:
        # a tool that breaks the session while the profile's other tools keep their own cells
        if 0 < len(broken.get(profile, ())) < len(listed[profile]):
            causes[key].session_tools = max(causes[key].session_tools, len(listed[profile]))
    for step, cell_id, verdict, weakest in notes:
        cause = causes.get(step.key)
        if cause is None:
            cause = causes[step.key] = step.start()
            tools_of[step.key] = set()
        count_cell(cause, tools_of[step.key], cell_id, verdict, weakest)


__all__ = ["build_triage"]
