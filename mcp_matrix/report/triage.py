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
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import NamedTuple

from mcp_matrix.core.events import (
    CallCell,
    Cell,
    CellEvidence,
    CellFinding,
    DiscoveryCell,
    Event,
    SnapshotTaken,
    typed_events,
)
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.jsontypes import JSONObject
from mcp_matrix.core.materiality import MATERIAL, keyword_at, materiality_of
from mcp_matrix.core.model import ClientView, Finding, culprit_message
from mcp_matrix.core.tools import tools_by_name
from mcp_matrix.core.verdicts import FINE, LOST, SHOWN, V, rank
from mcp_matrix.report.advice import KEEP_LOUD, advice_for
from mcp_matrix.report.grid import gate_scope

LIST_LIMIT = 6  # names listed before "and N more"

# A discovery cell as the triage reads it: (profile, tool, verdict, findings, weakest evidence),
# from its typed event or straight from the view it was made of (``discover`` never types its
# cells one by one: 260,000 at 5,000 tools x 52 profiles). The findings are the event's
# (``CellFinding``) or the view's (``Finding``): the triage reads the fields both have.
AnyFinding = CellFinding | Finding
Row = tuple[str, str, str, Sequence[CellFinding] | Sequence[Finding], str | None]


@dataclass
class Cause:
    """One root cause and everything it takes down."""

    verdict: str  # the worst verdict among its cells
    tool: str  # the tool that causes it ("" when many tools share a schema habit)
    code: str
    summary: str  # what happens, in one sentence (from a representative cell)
    fix: str | None
    tools: list[str] = field(default_factory=list)
    clients: list[str] = field(default_factory=list)
    cells: int = 0
    calls_lost: int = 0  # calls that could not reach the tool because of it
    blast_radius: str = "tool"
    lost: list[str] = field(
        default_factory=list
    )  # what the model loses: "default at /properties/x"
    evidence: list[tuple[str, str]] = field(default_factory=list)  # (level, source) a user can open
    weakest: str | None = None
    stricter: bool = False  # a forced stricter schema: a note, not a loss
    culprits: list[str] = field(default_factory=list)  # tools whose own cell carries the finding
    # a tool that breaks the session while the other tools keep their own cells: how many tools
    # the server lists in the client(s), every one of them failing if the request is refused
    session_tools: int = 0
    optional: bool = False  # the default release gate fails on none of its cells
    by_verdict: dict[str, list[str]] = field(default_factory=dict)  # verdict -> clients
    # every cell loud and the only advice "keep validating strictly": the safe outcome, listed
    # after the problems, never one to fix
    safe: bool = False
    keywords: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set, repr=False)  # (event, profile, tool, case) counted

    @property
    def severity(self) -> tuple[int, int, int, int]:
        """Notes last, after the safe outcomes; before them, what hits a client the gate requires
        comes before what hits only opt-in configurations and probes (a pinned protocol era, a
        rollout flag)."""
        return (
            2 if self.stricter else 1 if self.safe else 0,
            1 if self.optional else 0,
            rank(self.verdict),
            -self.cells,
        )

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "tool": self.tool,
            "code": self.code,
            "summary": self.summary,
            "fix": self.fix,
            "tools": self.tools,
            "clients": self.clients,
            "cells": self.cells,
            "calls_lost": self.calls_lost,
            "blast_radius": self.blast_radius,
            "lost": self.lost,
            "evidence": [{"level": lv, "source": src} for lv, src in self.evidence],
            "weakest_evidence": self.weakest,
            "note": self.stricter,
            "by_verdict": self.by_verdict,
            "optional": self.optional,
            "safe": self.safe,
        }


_BLAMED = "because of tool "
NOTES = {
    "additional-properties-forced": "additionalProperties: false added: the model is told no other keys are allowed",
    "made-required": "optional properties made required (strict mode): the model must always send a value",
}
# A bare section number ("§4", "notes.md §4, §7 [CODE]:"): it names no page a reader can open.
# The bundled profiles cite URLs, calibration records and docs/clients/<page>.md#<section>.
_SECTION_NUMBERS = re.compile(
    r"\s*\(?(?:[\w./-]+\.md\s*)?§\s*[\d.]+(?:\s*,\s*§?\s*[\d.]+)*\)?(?:\s*\[[A-Z]+\])?:?"
)


def citable(note: str) -> str:
    """An evidence source as a reader can follow it: URLs, calibration records and docs/clients/
    anchors whole, bare section numbers of some other document dropped."""
    return re.sub(r"\s{2,}", " ", _SECTION_NUMBERS.sub("", note or "")).strip()


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


def _add(
    causes: dict[tuple, Cause], tools_of: dict[tuple, set[str]], key: tuple, make: Cause, cell: Cell
) -> Cause:
    """Count ``cell`` under the cause at ``key`` (``make`` when it is new); ``tools_of`` mirrors
    each cause's tools as a set."""
    cause = causes.get(key)
    if cause is None:
        cause = causes[key] = make
        tools_of[key] = set(cause.tools)
    case = cell.case if isinstance(cell, CallCell) else None
    cell_id = (cell.KIND, cell.profile, cell.tool, case)
    _count(cause, tools_of[key], cell_id, cell.verdict, cell.weakest_evidence)
    return cause


def _count(
    cause: Cause, listed: set[str], cell_id: tuple, verdict: str, weakest: str | None
) -> None:
    """One cell (``cell_id``: kind, profile, tool, case) counted in ``cause``, once however many
    of its findings lead there; ``listed`` is the cause's tools as a set."""
    _, profile, tool, _ = cell_id
    if cell_id not in cause.seen:
        cause.seen.add(cell_id)
        cause.cells += 1
    if profile not in cause.clients:
        cause.clients.append(profile)
    if tool and tool not in listed:
        listed.add(tool)
        cause.tools.append(tool)
    in_verdict = cause.by_verdict.get(verdict)
    if in_verdict is None:
        in_verdict = cause.by_verdict[verdict] = []
    if profile not in in_verdict:
        in_verdict.append(profile)
    if verdict != cause.verdict and not cause.stricter and rank(verdict) < rank(cause.verdict):
        cause.verdict = verdict
    if (
        weakest
        and weakest != cause.weakest
        and (cause.weakest is None or _weaker(weakest, cause.weakest))
    ):
        cause.weakest = weakest


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
    once per (verdict, code, behaviour): all a discovery cell's advice reads of one finding
    (``advice.advice_parts``; tests/report/test_triage_views.py holds them to it). 5,000 tools
    x 52 profiles have ~19,000 distinct findings, but a few hundred such keys."""
    known: dict[tuple[str, str, str] | str, str | None] = {}

    def fix_for(verdict: str, finding: AnyFinding | None) -> str | None:
        key = verdict if finding is None else (verdict, finding.code, finding.behaviour or "")
        if key not in known:
            cell = DiscoveryCell(profile="", tool="", verdict=verdict)
            one = None
            if finding is not None:
                one = CellFinding(finding.code, "", behaviour=finding.behaviour or None)
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
                    "note", ("note", code), "visible", code, text, None, tuple(_sources(f.evidence))
                )
            )
    return tuple(steps)


def build_triage(events: Iterable[Event], views: Iterable[ClientView] = ()) -> list[Cause]:
    """The root causes of a run's cells, worst first. ``views``: discovery cells given as the
    views they come from, counted after the events' own (``discover``: the run's start and
    finish as events, the cells never typed)."""
    events = typed_events(events)
    calls = [e for e in events if isinstance(e, CallCell)]
    causes: dict[tuple, Cause] = {}
    # Membership beside each cause's ordered lists: a cause that takes down 5,000 tools is
    # added to once per cell (100,000), and scanning its lists made the triage quadratic.
    tools_of: dict[tuple, set[str]] = {}
    hard_of: dict[tuple[str, str], tuple] = {}  # (profile, tool) -> the key of its hiding cause
    _discovery_causes(
        chain(event_rows(events), view_rows(views)), causes, tools_of, hard_of if calls else None
    )
    add = partial(_add, causes, tools_of)
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
    merged = _merged(causes)
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
        cause.safe = set(cause.by_verdict) == {"loud"} and cause.fix == KEEP_LOUD
    return sorted(merged, key=lambda c: c.severity)


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
            _count(cause, tools_of[key], cell_id, verdict, weakest)
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
        _count(cause, tools_of[step.key], cell_id, verdict, weakest)


def _merged(causes: dict[tuple, Cause]) -> list[Cause]:
    """Hard causes that differ only in wording across clients (same tool, code and fix) as one."""
    out: list[Cause] = []
    seen: dict[tuple, Cause] = {}
    for key, cause in causes.items():
        if key[0] == "hard":
            same: tuple = ("hard", cause.tool, cause.code, cause.fix)
        elif key[0] == "note":
            out.append(cause)
            continue
        else:  # one schema habit or one call behaviour across tools, in the same clients: one fix
            same = (
                key[0],
                cause.code,
                cause.fix,
                tuple(sorted((v, tuple(n)) for v, n in cause.by_verdict.items())),
            )
        first = seen.get(same)
        if first is None:
            seen[same] = cause
            out.append(cause)
            continue
        first.cells += len(cause.seen - first.seen)
        first.seen |= cause.seen
        first.calls_lost += cause.calls_lost
        first.session_tools = max(first.session_tools, cause.session_tools)
        first.clients += [c for c in cause.clients if c not in first.clients]
        listed = set(first.tools)
        first.tools += [t for t in cause.tools if t not in listed]
        named = set(first.culprits)
        first.culprits += [t for t in cause.culprits if t not in named]
        first.evidence += [e for e in cause.evidence if e not in first.evidence]
        first.keywords += [k for k in cause.keywords if k not in first.keywords]
        gone = set(first.lost)
        first.lost += [w for w in cause.lost if w not in gone]
        for v, names in cause.by_verdict.items():
            have = first.by_verdict.setdefault(v, [])
            have += [n for n in names if n not in have]
        if rank(cause.verdict) < rank(first.verdict):
            first.verdict = cause.verdict
        if cause.weakest and (first.weakest is None or _weaker(cause.weakest, first.weakest)):
            first.weakest = cause.weakest
    return out


_LEVELS = {level: i for i, level in enumerate(("observed", "code", "issue", "doc", "assumed"))}


def _weaker(a: str, b: str) -> bool:
    return _LEVELS.get(a, 9) > _LEVELS.get(b, 9)


def name_list(items: list[str], limit: int = LIST_LIMIT, show: Callable[[str], str] = str) -> str:
    shown = ", ".join(show(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def whole_server(c: Cause) -> bool:
    """A cause no single tool carries: every tool's own cell has it (the handshake, the era)."""
    return not c.tool and len(c.culprits) > 1


def cause_title(
    c: Cause, show: Callable[[str], str] = str, prose: Callable[[str], str] = str
) -> str:
    """What to fix, in one sentence. Every writer words a cause with this (and ``cause_where``),
    so the terminal, Markdown and HTML lists read the same; ``show`` and ``prose`` make names and
    messages from the server safe for the medium (the terminal's sanitiser; identity where the
    writer escapes)."""
    if c.keywords:
        verb = "change" if c.code.startswith("changed") else "drop"
        return (
            f"clients {verb} {', '.join(repr(k) for k in c.keywords)} in {len(c.tools)} tool(s): "
            f"{name_list(c.tools, 4, show)}"
        )
    if whole_server(c):
        who = f"the server (all {len(c.tools)} tools)"
    else:
        who = show(c.tool) if c.tool else name_list(c.tools, 4, show)
    summary = c.summary.split(" Fix: ", 1)[0] if c.fix else c.summary  # the fix has its own line
    return f"{who}: {prose(summary)}"


def cause_where(c: Cause, show: Callable[[str], str] = str) -> str:
    """The clients a cause hits (by verdict) and its blast radius, in one line."""
    parts = []
    for verdict in sorted(c.by_verdict, key=rank):
        clients = c.by_verdict[verdict]
        parts.append(
            f"{verdict} in {name_list(clients, show=show)}"
            if len(c.by_verdict) > 1 or not c.keywords
            else f"in {name_list(clients, show=show)}"
        )
    blast = []
    radius = f"blast radius: {c.blast_radius}"
    if c.session_tools:  # the other tools' cells are their own: say what the refusal takes
        where = "this client" if len(c.clients) == 1 else "each of these clients"
        radius = (
            f"blast radius: every tool of this server in {where} ({c.session_tools} tools), "
            "if the request is refused; the other cells show each tool as if it were accepted"
        )
    elif c.blast_radius in ("server", "session") and len(c.tools) > 1:
        blast.append(f"takes down {len(c.tools)} tools")
    if c.calls_lost:
        blast.append(f"{c.calls_lost} calls could not be made")
    if c.optional:
        blast.append("not required by default (an opt-in configuration or a probe)")
    return " · ".join(parts + ([radius] if c.blast_radius != "tool" else []) + blast)


def problems(causes: list[Cause]) -> list[Cause]:
    """The causes that are problems to fix: not the stricter-schema notes, nor the safe outcomes
    (a loud refusal whose advice is to keep validating strictly: nothing to change)."""
    return [c for c in causes if not c.stricter and not c.safe]


def safe_outcomes(causes: list[Cause]) -> list[Cause]:
    """Loud refusals the model reads and retries on: the server does right, nothing to fix."""
    return [c for c in causes if c.safe and not c.stricter]


__all__ = [
    "Cause",
    "build_triage",
    "cause_title",
    "cause_where",
    "citable",
    "name_list",
    "problems",
    "safe_outcomes",
    "whole_server",
]
