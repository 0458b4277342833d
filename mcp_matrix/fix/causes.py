"""The triage's root causes over a measured list: which to try next, its findings, what is left.

The fix loop (``search``) reads the measured cells as the discovery events the triage reads
(``mcp_matrix.report.triage``): a cause is tried when a required client has it and it is not a
per-call one; what no edit removed is explained (``no_fix_why``, ``still_unfixed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_matrix.core.model import ClientView, Finding, ToolView
from mcp_matrix.fix import names
from mcp_matrix.fix.kinds import NAME_CODES
from mcp_matrix.fix.measure import Measured
from mcp_matrix.fix.model import Unfixed
from mcp_matrix.profiles.model import Profile
from mcp_matrix.report.cause import Cause
from mcp_matrix.report.cause_words import cause_title, problems
from mcp_matrix.report.triage import build_triage
from mcp_matrix.run.discovery import discovery_events
from mcp_matrix.targets.snapshot import Snapshot


def cause_events(snapshot: Snapshot, measured: Measured, profiles: Sequence[Profile]) -> list:
    """The measured cells as the discovery events the triage reads."""
    views = []
    for p in profiles:
        cells = [c for (name, _), c in measured.cells.items() if name == p.name]
        views.append(ClientView(p.name, "ok", tuple(_view(i, c) for i, c in enumerate(cells))))
    return discovery_events(snapshot, views, profiles)


def _view(index: int, cell: Any) -> ToolView:
    findings = tuple(
        Finding(x.code, x.message, x.pointer, lost=True, materiality="constraint")
        for x in cell.losses
    )
    return ToolView(cell.tool, index, cell.verdict, None, None, findings)


def cause_key(cause: Cause) -> tuple:
    return (cause.code, tuple(cause.keywords), cause.summary if not cause.keywords else "")


def next_cause(
    snapshot: Snapshot,
    measured: Measured,
    profiles: Sequence[Profile],
    required: Sequence[str],
    tried: set[tuple],
) -> Cause | None:
    for cause in problems(build_triage(cause_events(snapshot, measured, profiles))):
        if cause_key(cause) in tried or not set(cause.clients) & set(required):
            continue
        if cause.blast_radius == "call":
            continue
        return cause
    return None


def losses_of(
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


def remains(
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


def fewer(cause: Cause, now: Measured, then: Measured, required: Sequence[str]) -> bool:
    """The cause has fewer findings in the required clients than before."""
    return len(losses_of(cause, now, required)) < len(losses_of(cause, then, required))


def no_fix_why(cause: Cause) -> str:
    """Why no schema change removes a cause: what the client does, and what the server can do."""
    what = cause.summary.split(" Fix: ", 1)[0]
    if cause.code.startswith("changed-by-client") and "type" in cause.keywords:
        what += " (the client cannot express this type)"
    chars = names.banned(cause.summary)
    if (
        cause.code in NAME_CODES
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


def still_unfixed(
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
    for cause in problems(build_triage(cause_events(snapshot, final, profiles))):
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


__all__ = [
    "cause_events",
    "cause_key",
    "fewer",
    "losses_of",
    "next_cause",
    "no_fix_why",
    "remains",
    "still_unfixed",
]
