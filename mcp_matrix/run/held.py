"""What a client holds: the tool list one profile calls with (``Held``), built only here.

``hold`` (a whole list, its cache behaviours and stale-cache window applied in
``simulate.calls.held_view``) and ``hold_tool`` (the diff's one tool) are the only builders, so
``run``, ``replay``, ``diff`` and ``fix`` cannot disagree on it (tests/unit/test_held.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, ClientView, Finding, ToolView
from mcp_matrix.profiles.model import Profile
from mcp_matrix.simulate.calls import held_view
from mcp_matrix.targets.snapshot import Snapshot


@dataclass(frozen=True)
class Held:
    """The tool list one profile calls with: its views by server tool name and the raw tools."""

    profile: Profile
    view: ClientView | None  # None when only some tools' views are at hand (the diff's one tool)
    tools: Mapping[str, ToolView]
    raw: Mapping[str, Any]  # the tools as the client holds them (the baseline's for a stale cache)
    live_raw: Mapping[str, Any]  # the tools as the server lists them now
    note: Finding | None = None  # the cache behaviour's finding, when it kept an old list
    contexts: dict[str, CallContext] = field(default_factory=dict, compare=False, repr=False)

    @property
    def stale(self) -> bool:
        return self.raw is not self.live_raw

    def context(self, tool: str, view: ToolView) -> CallContext:
        """The call context of ``tool`` (the same for every call: made once)."""
        ctx = self.contexts.get(tool)
        if ctx is None:
            ctx = CallContext(
                tool=tool,
                held_schema=view.model_schema,
                held_tool=self.raw.get(tool),
                stale=self.stale,
            )
            self.contexts[tool] = ctx
        return ctx


def hold(
    profile: Profile,
    live: ClientView,
    baseline: ClientView | None,
    live_tools: Mapping[str, object],
    baseline_tools: Mapping[str, object] | None = None,
    old: Snapshot | None = None,
    new: Snapshot | None = None,
) -> Held:
    """The profile's held list: its cache behaviours choose the live or the baseline view, within
    the stale window of the snapshots ``old`` and ``new`` (``held_view``). Every driver builds it here."""
    view, note = held_view(profile, live, baseline, old, new)
    raw = baseline_tools if (view is not live and baseline_tools is not None) else live_tools
    return Held(profile, view, view.by_tool(), raw, live_tools, note)


def hold_tool(
    profile: Profile, tool: str, view: ToolView | None, raw: JSON, live: JSON | None = None
) -> Held:
    """One tool's held list (the diff's frozen call): ``view`` as the client shows it (None: it
    does not), ``raw`` the tool as the client holds it; ``live``, when given, the tool as the
    server lists it now, the client keeping the stale ``raw``."""
    tools = {tool: view} if view is not None else {}
    held_raw = {tool: raw}
    if live is None:
        return Held(profile, None, tools, held_raw, held_raw)
    note = Finding(
        code="stale-cache", message="the client keeps the tool list it read at session start"
    )
    return Held(profile, None, tools, held_raw, {tool: live}, note)
