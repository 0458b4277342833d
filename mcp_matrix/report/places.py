"""Where a report cell points: JSON Pointers into its run's snapshot document (the tool, the
property a mutation touched), its tools found by name once per run.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_matrix.core.jsontypes import JSON


class SnapshotTools:
    """A run's snapshot tools, indexed by name once: a run of 10,000 tools has 10,000s of cells,
    and looking each cell's tool up by a scan made the report quadratic."""

    def __init__(self, snapshot: JSON) -> None:
        entries = snapshot.get("tools") if isinstance(snapshot, Mapping) else None
        entries = entries if isinstance(entries, list) else []
        self.tools = [t.get("tool") if isinstance(t, Mapping) else None for t in entries]
        self.index: dict[str, int] = {}
        for i, t in enumerate(self.tools):
            name = t.get("name") if isinstance(t, Mapping) else None
            if isinstance(name, str):
                self.index.setdefault(name, i)


def _tool_pointer(index: int | None) -> str | None:
    return None if index is None else f"/tools/{index}/tool"


def under_tool(index: int | None, rel: str) -> str | None:
    """A pointer relative to a tool as a pointer into the snapshot document."""
    base = _tool_pointer(index)
    if base is None:
        return None
    return base + (rel if rel.startswith("/") else "")


def call_pointer(index: int | None, mutated: str | None) -> str | None:
    """The input schema of the called tool, at the property the first mutation touched (its
    pointer into the arguments: ``mutated``)."""
    base = _tool_pointer(index)
    if base is None:
        return None
    if mutated is None:
        return base + "/inputSchema"
    path = "/inputSchema"
    for p in mutated.split("/")[1:]:
        path += "/items" if p.isdigit() else f"/properties/{p}"
    return base + path


__all__ = ["SnapshotTools", "call_pointer", "under_tool"]
