"""Discovery differences put on the change they come from: what each client shows before and after.

Every profile's discovery runs on both snapshots; a tool whose verdict gets worse
(visible -> hidden, a server lost in a session) or better is put on the change whose JSON
pointer the deciding finding points into (else the change whose parameter its message names,
else a ``discovery-changed`` change of its own).
"""

from __future__ import annotations

import re
from dataclasses import replace

from mcp_matrix.core.evidence import weakest
from mcp_matrix.core.model import ClientView, Finding, ToolView
from mcp_matrix.core.verdicts import LOST, V, rank
from mcp_matrix.evolution.effects import NEW_TOOL_KINDS, Sides
from mcp_matrix.evolution.model import Change, ClientEffect
from mcp_matrix.profiles.model import Profile

TOOL_LEVEL_KINDS = NEW_TOOL_KINDS + ("tool-renamed",)


def discovery_effects(sides: Sides, changes: list[Change]) -> list[Change]:
    """Put every discovery difference on the change it comes from (by JSON pointer)."""
    placed = _Placed(changes)
    # A renamed tool is compared with its old self, and its effects go on the rename.
    renamed = {c.detail["to"]: c.tool for c in changes if c.kind == "tool-renamed"}
    for profile in sides.profiles:
        ov, nv = sides.old_views[profile.name], sides.new_views[profile.name]
        # A view whose session a tool breaks (``culprits``) still holds every other tool's own
        # prediction: it is compared tool by tool, the culprit's cell naming the rule.
        if nv.whole and not ov.whole:
            _whole_lost(placed, profile, nv)
        elif ov.whole and nv.outcome == "ok":
            _whole_back(placed, profile, ov)
        elif not nv.whole:
            _tool_by_tool(placed, profile, ov, nv, renamed)
    out = [
        replace(c, clients=c.clients + tuple(placed.found.get(i, ())))
        for i, c in enumerate(changes)
    ]
    for tool, effects in placed.extra.items():
        out.append(
            Change(
                kind="discovery-changed",
                tool=tool,
                severity="safe",
                pointer="",
                message=f"clients show {tool} differently",
                clients=tuple(effects),
            )
        )
    return out


class _Placed:
    """The client effects found so far, each on the change it belongs to (or on none yet)."""

    def __init__(self, changes: list[Change]) -> None:
        self.changes = changes
        self.found: dict[int, list[ClientEffect]] = {}
        self.extra: dict[str, list[ClientEffect]] = {}
        self.by_tool: dict[str, list[int]] = {}
        for i, c in enumerate(changes):
            self.by_tool.setdefault(c.tool, []).append(i)

    def attach(self, tool: str, pointer: str, effect: ClientEffect) -> None:
        indexes = self.by_tool.get(tool, [])
        index = _best(self.changes, indexes, pointer)
        if index is None or not self.changes[index].pointer:
            named = _named(self.changes, indexes, effect.message)
            index = index if named is None else named
        if index is None:
            self.extra.setdefault(tool, []).append(effect)
        else:
            self.found.setdefault(index, []).append(effect)


def _whole_lost(placed: _Placed, profile: Profile, nv: ClientView) -> None:
    """The new list takes the whole server or session down in this client: on the culprit tool."""
    culprit, reason = _culprit(nv)
    if culprit is None or reason is None:
        return
    lost = (
        "every tool of the server is lost"
        if nv.outcome == V.SERVER_DROPPED.name
        else "every request of the session fails"
    )
    message = f"{lost} in this client because of {culprit.tool}: {reason.message}"
    placed.attach(culprit.tool, reason.pointer, _effect(profile, nv.outcome, message, reason))


def _whole_back(placed: _Placed, profile: Profile, ov: ClientView) -> None:
    """The old list took the server or session down in this client and the new one does not."""
    culprit, reason = _culprit(ov)
    if culprit is None or reason is None:
        return
    message = f"the server's tools are back in this client (was {ov.outcome}: {reason.message})"
    placed.attach(culprit.tool, reason.pointer, _effect(profile, "visible", message, reason))


def _tool_by_tool(
    placed: _Placed, profile: Profile, ov: ClientView, nv: ClientView, renamed: dict[str, str]
) -> None:
    """Each tool's verdict in this client before and after: worse, degraded still, or better."""
    old_by = ov.by_tool()
    for tv in nv.tools:
        name = renamed.get(tv.tool, tv.tool)
        before = old_by.get(name)
        if before is None:
            if tv.verdict != V.VISIBLE.name:
                finding = _deciding(tv, None)
                effect = _effect(profile, tv.verdict, _say(finding, tv.verdict), finding)
                placed.attach(tv.tool, "", effect)
        elif rank(tv.verdict) < rank(before.verdict) or tv.verdict == V.DEGRADED.name:
            _worse(placed, profile, nv, name, tv, before)
        elif rank(tv.verdict) > rank(before.verdict):
            finding = _deciding(before, None)
            message = f"{before.verdict} -> {tv.verdict}" + (
                f" (it was: {finding.message})" if finding else ""
            )
            placed.attach(
                name,
                finding.pointer if finding else "",
                _effect(profile, tv.verdict, message, finding),
            )


def _worse(
    placed: _Placed, profile: Profile, nv: ClientView, name: str, tv: ToolView, before: ToolView
) -> None:
    """A tool shown worse than before (or degraded before and after, by a new finding)."""
    finding = _deciding(tv, before)
    if finding is None:
        return
    how = (
        f"{before.verdict} -> {tv.verdict}"
        if before.verdict != tv.verdict
        else f"still {tv.verdict}, and now"
    )
    if tv.tool in nv.culprits:
        how = f"every request of the session fails in this client because of {tv.tool}"
    placed.attach(
        name, finding.pointer, _effect(profile, tv.verdict, f"{how}: {finding.message}", finding)
    )


def _best(changes: list[Change], indexes: list[int], pointer: str) -> int | None:
    best, size = None, -1
    for i in indexes:
        p = changes[i].pointer
        if not p:
            if size < 0:
                best, size = i, 0
            continue
        meets = pointer == p or pointer.startswith(p + "/") or p.startswith(pointer + "/")
        if pointer and meets and len(p) > size:
            best, size = i, len(p)
    if best is not None and size == 0 and changes[best].kind not in TOOL_LEVEL_KINDS:
        return None  # only a tool-level change takes an unplaced finding
    return best


def _named(changes: list[Change], indexes: list[int], message: str) -> int | None:
    """A change whose parameter the finding's message names (``'account_id'``), when pointers do not meet."""
    for i in indexes:
        param = changes[i].param
        if param and re.search(
            rf"(?<![A-Za-z0-9_]){re.escape(param.rsplit('.', 1)[-1])}(?![A-Za-z0-9_])", message
        ):
            return i
    return None


def _culprit(view: ClientView) -> tuple[ToolView | None, Finding | None]:
    reason = view.findings[-1] if view.findings else None
    if reason is None:
        return None, None
    same = (reason.code, reason.pointer, reason.message)  # cells carry it with its materiality
    for tv in view.tools:
        if any((f.code, f.pointer, f.message) == same for f in tv.findings):
            return tv, reason
    return None, reason


def _deciding(now: ToolView, before: ToolView | None) -> Finding | None:
    """The finding that makes ``now`` what it is (and was not in ``before``)."""
    seen = {(f.code, f.pointer) for f in before.findings} if before else set()
    if now.verdict in LOST:
        return now.findings[-1] if now.findings else None
    fresh = [f for f in now.findings if f.lost and (f.code, f.pointer) not in seen]
    if fresh:
        return fresh[0]
    if before is not None:
        return None
    lost = [f for f in now.findings if f.lost]
    return lost[0] if lost else (now.findings[0] if now.findings else None)


def _say(finding: Finding | None, verdict: str) -> str:
    return f"{verdict}: {finding.message}" if finding else verdict


def _effect(profile: Profile, verdict: str, message: str, finding: Finding | None) -> ClientEffect:
    behaviours = (finding.behaviour,) if finding and finding.behaviour else ()
    level = weakest(finding.evidence) if finding and finding.evidence else None
    return ClientEffect(
        profile=profile.name, effect=verdict, message=message, behaviours=behaviours, evidence=level
    )


__all__ = ["discovery_effects"]
