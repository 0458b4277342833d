"""The values a fix is made of: patch operations with reasons, server-side checklist items,
renames with their cost, the causes no schema change removes, and the per-client counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.jsontypes import JSON


@dataclass(frozen=True)
class Op:
    """One RFC 6902 operation on a tool, with why it is made (``reason`` is an extra member,
    which RFC 6902 section 4 says a patch reader ignores)."""

    op: str  # add | remove | replace
    path: str
    value: JSON = None
    reason: str = ""

    def to_json(self) -> dict:
        out: dict[str, JSON] = {"op": self.op, "path": self.path}
        if self.op != "remove":
            out["value"] = self.value
        out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class ServerItem:
    """Work the server must do because the schema no longer says it (mcp-matrix cannot edit a handler)."""

    tool: str
    rule: str  # the exact rule, e.g. "refuse a call unless agent_id or agent is given"
    replaces: str  # what the schema said before, e.g. "root anyOf"
    check: JSON = (
        None  # a JSON Schema the handler's check is equivalent to (the offline server uses it)
    )


@dataclass(frozen=True)
class Rename:
    """A tool renamed for clients that cannot take its name: frozen callers pay for it."""

    old: str
    new: str
    clients: tuple[str, ...]  # the clients whose loss the rename removes
    guidance: tuple[
        str, ...
    ] = ()  # the rename guidance (mcp_matrix.evolution.guidance), alias kept


@dataclass(frozen=True)
class Edit:
    """One candidate change of one tool: the tool after it, and what it costs."""

    kind: str  # flatten-root | object-root | rename | describe-keyword | add-items | ...
    tool: str  # the tool's name before the edit
    after: Any  # the whole tool after the edit
    reason: str
    items: tuple[ServerItem, ...] = ()
    renames: tuple[Rename, ...] = ()
    cost: str = ""  # what frozen callers or clients that kept the keyword give up


@dataclass(frozen=True)
class Applied:
    """An edit the re-run proved: its operations and the cells it fixed."""

    edit: Edit
    ops: tuple[Op, ...]
    fixed: tuple[tuple[str, str], ...]  # (client, tool) cells no longer lost


@dataclass(frozen=True)
class Unfixed:
    """A root cause left as it is, and why no schema change removes it."""

    title: str
    code: str
    tools: tuple[str, ...]
    clients: tuple[str, ...]
    why: str
    tried: tuple[str, ...] = ()  # candidate edits measured and rejected, with what they broke


@dataclass(frozen=True)
class ClientCounts:
    """One client's cells before and after: lost tools and calls, and what changed."""

    client: str
    required: bool
    tools: int
    lost_before: int  # tools not visible (degraded, hidden, dropped, broken)
    lost_after: int
    calls_before: int  # calls worse than intact
    calls_after: int
    now_intact: tuple[str, ...] = ()
    still_lost: tuple[tuple[str, str], ...] = ()  # (tool, why)
    calls_still_lost: tuple[tuple[str, str], ...] = ()  # (tool, the call's verdict and reason)


@dataclass(frozen=True)
class FixOutcome:
    """Everything ``fix`` found: the corrected list, the patches, the checklist and the counts."""

    server: str
    required: tuple[str, ...]
    tools_before: tuple[object, ...]
    tools_after: tuple[JSON, ...]
    applied: tuple[Applied, ...]
    unfixed: tuple[Unfixed, ...]
    clients: tuple[ClientCounts, ...]
    list_items: tuple[ServerItem, ...] = ()  # list-level work (cache hints of 2026-07-28 lists)
    eras: JSON = None  # the corrected snapshot's eras (cache hints set)
    notes: tuple[str, ...] = field(default=())
    costs: tuple[Any, ...] = ()  # mcp_matrix.fix.cost.Cost: what diff says the corrected list costs
    document: JSON = None  # the corrected snapshot document

    @property
    def items(self) -> tuple[ServerItem, ...]:
        return tuple(i for a in self.applied for i in a.edit.items) + self.list_items

    @property
    def renames(self) -> tuple[Rename, ...]:
        return tuple(r for a in self.applied for r in a.edit.renames)

    def patches(self) -> dict[str, list[dict]]:
        """One RFC 6902 patch per tool (by its name as the server lists it today)."""
        out: dict[str, list[dict]] = {}
        for a in self.applied:
            out.setdefault(_first_name(self, a.edit.tool), []).extend(o.to_json() for o in a.ops)
        return out


def _first_name(outcome: FixOutcome, name: str) -> str:
    """A tool's name in the list as given (through the renames made before this edit)."""
    for r in reversed(outcome.renames):
        if r.new == name:
            name = r.old
    return name
