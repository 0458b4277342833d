"""The job summary: a Markdown page that always fits a CI job summary (GitHub drops one over
1 MiB; the full Markdown report is about 1.5 KB per finding).

It opens with the release gate's verdict, read from the checklist (``mcp_matrix.gate.checklist.evaluate``,
the same judgement ``mcp-matrix check`` makes), then the failed gate items, each root cause once
(``mcp_matrix.report.triage``), and the verdict counts. Every list stops at a fixed length with an
"N more" line naming where the rest is (the Markdown, HTML and JSON reports, the checklist), and
the whole page is cut at ``MAX_BYTES`` whatever the server sent. Server text is escaped as in the
Markdown report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import IO

from mcp_matrix.core.events import CallCell, DiscoveryCell, Event, RunStarted, typed_events
from mcp_matrix.core.verdicts import SYMBOL, rank
from mcp_matrix.gate.checklist import Item, evaluate
from mcp_matrix.gate.policy import Policy
from mcp_matrix.report.cause_words import cause_title, cause_where, problems
from mcp_matrix.report.grid import RELEASE_FAILING
from mcp_matrix.report.markdown import md
from mcp_matrix.report.triage import build_triage

MAX_BYTES = 64 * 1024  # GitHub's limit is 1 MiB per step; several steps may add to one summary
MAX_ITEMS = 25  # failed gate items listed
MAX_CAUSES = 30  # root causes listed
MAX_LINE = 1000  # characters of one line (a hostile tool name or reason can be megabytes)
ELSEWHERE = "the full reports (matrix.md, matrix.html, results.jsonl, checklist.md)"


def write_summary(
    events: Iterable[Event],
    stream: IO[str],
    failing: Iterable[str] = RELEASE_FAILING,
    policy: Policy | None = None,
) -> None:
    """The summary page for ``events``; ``policy`` (default: the default policy failing on
    ``failing``) is the one the gate applies."""
    stream.write(render_summary(typed_events(events), policy or Policy(fail_on=tuple(failing))))


def render_summary(events: list[Event], policy: Policy) -> str:
    items = evaluate(events, policy)
    failed = [i for i in items if not i.passed]
    cells = [e for e in events if isinstance(e, (DiscoveryCell, CallCell))]
    out = [
        f"## mcp-matrix: release gate {'FAILED' if failed else 'passed'}",
        "",
        _headline(events, cells, items, failed, policy),
        "",
    ]
    if policy.extra.get("baseline") or policy.extra.get("aliases"):
        out += [
            (
                "The gate (`mcp-matrix check`) also applies this policy's schema-evolution items "
                "(baseline, aliases), which need the live server: see checklist.md."
            ),
            "",
        ]
    if failed:
        out += [f"### Gate: {len(failed)} failed", ""]
        out += [_item(i) for i in failed[:MAX_ITEMS]]
        out += _more(len(failed) - MAX_ITEMS, "failed gate items", "checklist.md")
        out.append("")
    causes = problems(build_triage(events))
    out += [f"### Root causes ({len(causes)})", ""]
    if not causes:
        out.append("No problems to fix: every cell is visible, intact or tolerated.")
    for n, c in enumerate(causes[:MAX_CAUSES], 1):
        line = f"{n}. **{md(c.verdict)}** {md(cause_title(c))} ({md(cause_where(c))})"
        if c.fix:
            line += f" Fix: {md(c.fix)}"
        out.append(_cut(line))
    out += _more(len(causes) - MAX_CAUSES, "root causes", "matrix.md or matrix.html")
    out += ["", "### Verdicts", "", "| verdict | cells |", "|---|---|"]
    counts = Counter(c.verdict for c in cells)
    for verdict in sorted(counts, key=rank):
        out.append(f"| {SYMBOL.get(verdict, '')} {md(verdict)} | {counts[verdict]} |")
    out += ["", f"Every cell, its reason, evidence and fix: {ELSEWHERE}.", ""]
    return _capped("\n".join(out))


def _headline(
    events: list[Event], cells: list, items: list[Item], failed: list[Item], policy: Policy
) -> str:
    servers = []
    for e in events:
        if isinstance(e, RunStarted) and isinstance(e.server, dict):
            name = " ".join(str(x) for x in (e.server.get("name"), e.server.get("version")) if x)
            if name and name not in servers:
                servers.append(name)
    clients = sorted({c.profile for c in cells})
    tools = {c.tool for c in cells}
    fail_on = ", ".join(policy.fail_on) or "no verdict"
    return _cut(
        f"**{md(', '.join(servers) or 'unknown server')}** · {len(tools)} tools · "
        f"{len(clients)} clients · {len(cells)} cells · {len(items) - len(failed)} of {len(items)} "
        f"gate items passed · policy: {md(policy.source)} (fails on {md(fail_on)})"
    )


def _item(item: Item) -> str:
    return _cut(f"- ❌ {md(item.name)}: {md(item.evidence)}")


def _more(n: int, what: str, where: str) -> list[str]:
    return [f"- … and {n} more {what}: see {where} in {ELSEWHERE}"] if n > 0 else []


def _cut(line: str) -> str:
    """One line at most ``MAX_LINE`` characters, cut where no escape sequence is split."""
    if len(line) <= MAX_LINE:
        return line
    head = line[: MAX_LINE - 1]
    while head.endswith("\\"):  # never leave a dangling escape
        head = head[:-1]
    amp = head.rfind("&")
    if amp > head.rfind(";"):  # nor half an entity
        head = head[:amp]
    return head + "…"


def _capped(text: str) -> str:
    """The page, whole lines only, at most ``MAX_BYTES`` of UTF-8 with the closing note."""
    if len(text.encode("utf-8", "backslashreplace")) <= MAX_BYTES:
        return text
    note = f"\n\n… the summary was cut at {MAX_BYTES // 1024} KiB: see {ELSEWHERE}.\n"
    budget = MAX_BYTES - len(note.encode("utf-8"))
    kept: list[str] = []
    for line in text.split("\n"):
        size = len(line.encode("utf-8", "backslashreplace")) + 1
        if size > budget:
            break
        kept.append(line)
        budget -= size
    return "\n".join(kept) + note


__all__ = ["MAX_BYTES", "render_summary", "write_summary"]
