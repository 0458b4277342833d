"""The fix outcome as text (terminal, Markdown) and as a JSON document (``format: mcp-matrix.fix``).

Both texts come from one list of lines, so they say the same: the edits made (kind, tool,
reason, what frozen callers pay), the renames with their guidance, the server-side checklist,
the causes left with why, and per client the tools lost before and after and the calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_matrix import __version__
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.fix.model import FixOutcome

FORMAT = "mcp-matrix.fix"
VERSION = 1


def lines(outcome: FixOutcome, show: Callable[[JSON], str] = str, md: bool = False) -> list[str]:
    """The report, one line per entry; ``show`` makes server text safe for the medium."""
    st = _Style(show, md)
    out = [
        ("# " if md else "")
        + f"mcp-matrix fix: {show(outcome.server)} · {len(outcome.tools_before)} tools · "
        f"required clients: {len(outcome.required)}",
        "",
    ]
    for section in (_edits, _renames, _costs, _checklist, _unfixed, _clients):
        out += section(outcome, st)
    clean = sum(1 for c in outcome.clients if not c.lost_before and not c.lost_after)
    out += ["", f"{clean} client(s) had no loss before or after."]
    return out


@dataclass(frozen=True)
class _Style:
    """How the medium writes a heading and the two list levels; ``show`` makes text safe."""

    show: Callable[[JSON], str]
    md: bool

    def h(self, text: str) -> str:
        return f"## {text}" if self.md else text.upper()

    @property
    def li(self) -> str:
        return "- " if self.md else "  "

    @property
    def sub(self) -> str:
        return "  - " if self.md else "      "

    def section(
        self, title: str, entries: Sequence[Any], entry: Callable[[JSON], list[str]], *lead: str
    ) -> list[str]:
        """A heading, its ``lead`` lines and each entry's lines; nothing when there are no entries."""
        if not entries:
            return []
        return ["", self.h(title), *lead] + [line for e in entries for line in entry(e)]


def _edits(outcome: FixOutcome, st: _Style) -> list[str]:
    show, li, sub = st.show, st.li, st.sub
    out = [st.h(f"Edits ({len(outcome.applied)}), each proved by re-running every profile")]
    for a in outcome.applied:
        fixed = sorted({c for c, _ in a.fixed})
        out.append(f"{li}{a.edit.kind} {show(a.edit.tool)}: {show(a.edit.reason)}")
        if fixed:
            out.append(f"{sub}now visible in: {', '.join(fixed)}")
        if a.edit.cost:
            out.append(f"{sub}cost: {show(a.edit.cost)}")
    if not outcome.applied:
        out.append(f"{li}none: no root cause has a schema fix")
    return out


def _renames(outcome: FixOutcome, st: _Style) -> list[str]:
    def entry(r: Any) -> list[str]:
        who = ", ".join(r.clients) or "the required clients"
        head = f"{st.li}{st.show(r.old)} -> {st.show(r.new)} (for {who})"
        return [head, *(f"{st.sub}{st.show(g)}" for g in r.guidance)]

    return st.section("Renames (frozen callers: never silent)", outcome.renames, entry)


def _costs(outcome: FixOutcome, st: _Style) -> list[str]:
    show, sub = st.show, st.sub
    said: set[str] = set()  # a kind's populations and advice are said once, then referred to

    def entry(c: Any) -> list[str]:
        out = [f"{st.li}{c.severity} {show(c.tool)}: {show(c.message)}"]
        if c.kind in said:
            return out + [f"{sub}frozen callers: as for the {c.kind} above, with this tool's names"]
        said.add(c.kind)
        out += [f"{sub}{show(p)}" for p in c.populations]
        return out + [f"{sub}do: {show(a)}" for a in c.advice[:2]]

    lead = (
        f"{st.li}diff judges the list alone; the server-side checklist below keeps the rules the "
        "list no longer states"
    )
    return st.section(
        "What the corrected list costs frozen callers (mcp-matrix diff of the two lists)",
        outcome.costs,
        entry,
        lead,
    )


def _checklist(outcome: FixOutcome, st: _Style) -> list[str]:
    box = "- [ ] " if st.md else "  [ ] "

    def entry(item: Any) -> list[str]:
        who = f"{st.show(item.tool)}: " if item.tool else ""
        return [f"{box}{who}{st.show(item.rule)} (replaces {st.show(item.replaces)})"]

    return st.section(
        "Server-side checklist (mcp-matrix cannot edit the handler)", outcome.items, entry
    )


def _unfixed(outcome: FixOutcome, st: _Style) -> list[str]:
    def entry(u: Any) -> list[str]:
        tried = [f"{st.sub}tried: {st.show(t)}" for t in u.tried]
        return [f"{st.li}{st.show(u.title)}", f"{st.sub}{st.show(u.why)}", *tried]

    return st.section("Left as it is, and why", outcome.unfixed, entry)


def _clients(outcome: FixOutcome, st: _Style) -> list[str]:
    show, li, sub = st.show, st.li, st.sub
    out = ["", st.h("Before -> after, per client (tools lost, calls lost)")]
    for c in outcome.clients:
        if not (c.lost_before or c.lost_after or c.calls_before or c.calls_after):
            continue
        tag = "" if c.required else " (not required)"
        out.append(
            f"{li}{c.client}{tag}: tools lost {c.lost_before} -> {c.lost_after} of {c.tools}; "
            f"calls lost {c.calls_before} -> {c.calls_after}"
        )
        if c.now_intact:
            out.append(f"{sub}now visible: {', '.join(show(t) for t in c.now_intact)}")
        for tool, why in c.still_lost[:5]:
            out.append(f"{sub}still lost: {show(tool)}: {show(why)}")
        if len(c.still_lost) > 5:
            out.append(f"{sub}and {len(c.still_lost) - 5} more")
        for tool, why in c.calls_still_lost[:5]:
            out.append(
                f"{sub}call still lost (a client's call behaviour, no schema fix): {show(tool)}: {show(why)}"
            )
    return out


def document(outcome: FixOutcome) -> dict:
    """The JSON report: edits with their RFC 6902 patches, checklist, causes left, counts."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "mcp_matrix": __version__,
        "server": outcome.server,
        "required": list(outcome.required),
        "edits": [
            {
                "kind": a.edit.kind,
                "tool": a.edit.tool,
                "reason": a.edit.reason,
                "cost": a.edit.cost,
                "patch": [o.to_json() for o in a.ops],
                "fixed": [{"client": c, "tool": t} for c, t in a.fixed],
            }
            for a in outcome.applied
        ],
        "patches": outcome.patches(),
        "renames": [
            {"old": r.old, "new": r.new, "clients": list(r.clients), "guidance": list(r.guidance)}
            for r in outcome.renames
        ],
        "costs": [c.to_json() for c in outcome.costs],
        "checklist": [
            {"tool": i.tool, "rule": i.rule, "replaces": i.replaces, "check": i.check}
            for i in outcome.items
        ],
        "unfixed": [
            {
                "title": u.title,
                "code": u.code,
                "tools": list(u.tools),
                "clients": list(u.clients),
                "why": u.why,
                "tried": list(u.tried),
            }
            for u in outcome.unfixed
        ],
        "clients": [
            {
                "client": c.client,
                "required": c.required,
                "tools": c.tools,
                "lost_before": c.lost_before,
                "lost_after": c.lost_after,
                "calls_lost_before": c.calls_before,
                "calls_lost_after": c.calls_after,
                "now_visible": list(c.now_intact),
                "still_lost": [{"tool": t, "why": w} for t, w in c.still_lost],
                "calls_still_lost": [{"tool": t, "why": w} for t, w in c.calls_still_lost],
            }
            for c in outcome.clients
        ],
    }


def still_lost(outcome: FixOutcome) -> int:
    """Tools a required client still loses after the fix (the exit code's count)."""
    return sum(c.lost_after for c in outcome.clients if c.required)
