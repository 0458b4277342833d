"""Values passed between the layers: findings and the discovery state a profile transforms.

Everything here is frozen; behaviours return changed copies (``dataclasses.replace``)
instead of mutating, so one snapshot can run through every profile side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, TypeVar

from mcp_matrix.core import verdicts
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.jsontypes import JSON, JSONObject

_T = TypeVar("_T")


def evolve(obj: _T, **changes: object) -> _T:
    """``dataclasses.replace`` for the frozen, plain dataclasses here, without re-running
    ``__init__`` (discovery makes hundreds of thousands of these copies).

    Only for classes without ``__post_init__`` or slots: every field is copied as is.
    """
    new = object.__new__(type(obj))
    fields = new.__dict__
    fields.update(obj.__dict__)
    if "original" in changes:
        fields.pop("server_name", None)  # ToolState caches it from ``original``
    if "tools" in changes:
        fields.pop("_by_tool", None)  # ClientView caches its index of ``tools``
    fields.update(changes)
    return new


# Discovery verdicts, per (profile, tool), worst first: the verdict table's discovery rows.
DISCOVERY_VERDICTS = verdicts.DISCOVERY_VERDICTS


@dataclass(frozen=True)
class Finding:
    """One thing a client does to a tool, stated as a value.

    ``code`` is a stable identifier (e.g. ``keyword-stripped``), ``pointer`` a JSON pointer
    into the tool as the server sent it (``/inputSchema/anyOf``), ``lost`` says whether
    information the server sent no longer reaches the model; ``materiality`` how much that
    matters (mcp_matrix.core.materiality derives it centrally, for every cell). ``behaviour`` and
    ``evidence`` are filled by the simulator from the profile entry that produced it.
    ``culprit`` names the server's tool that caused a list-level failure, on the findings
    copied to the other tools (so no reader recovers it from the message).
    """

    code: str
    message: str
    pointer: str = ""
    lost: bool = False
    blast_radius: str = "tool"
    behaviour: str = ""
    evidence: tuple[Evidence, ...] = ()
    materiality: str = (
        ""  # none | stricter | guidance | constraint, derived by mcp_matrix.core.materiality
    )
    culprit: str = ""

    def to_json(self) -> dict:
        out = {
            "code": self.code,
            "message": self.message,
            "pointer": self.pointer,
            "lost": self.lost,
            "materiality": self.materiality,
            "blast_radius": self.blast_radius,
            "behaviour": self.behaviour,
            "evidence": [e.to_json() for e in self.evidence],
        }
        if self.culprit:
            out["culprit"] = self.culprit
        return out


def blamed(finding: Finding, culprit: str) -> Finding:
    """The copy of a list-level finding that another tool's cell carries: the culprit named in
    the ``culprit`` field and in the words (``culprit_message`` reads the words back)."""
    return replace(
        finding, message=f"because of tool {culprit!r}: {finding.message}", culprit=culprit
    )


def culprit_message(message: str, culprit: str) -> str:
    """The culprit's own message inside a ``blamed`` copy's, found from the ``culprit`` field
    rather than by splitting the words (a tool may be named ``evil: name``)."""
    return message.removeprefix(f"because of tool {culprit!r}: ")


@dataclass(frozen=True)
class ToolState:
    """One tool as a client currently holds it during discovery.

    ``original`` is the tool exactly as the server sent it and is never changed;
    ``name``, ``schema`` and ``description`` are what the client's model will be shown
    (a client may rewrite the description, e.g. Claude Code's "Input constraint" sentence).
    """

    original: JSON  # the tool exactly as sent: an object, unless a server sent something else
    page: int
    index: int
    name: str
    schema: JSON
    hidden: bool = False
    findings: tuple[Finding, ...] = ()
    description: JSON = None

    @cached_property  # read for every tool by every profile; ``original`` never changes
    def server_name(self) -> str:
        """The name the server gave the tool (what ``tools/call`` must send)."""
        name = self.original.get("name") if isinstance(self.original, dict) else None
        return name if isinstance(name, str) else ""

    def with_finding(self, finding: Finding, **changes: JSON) -> ToolState:
        return evolve(self, findings=self.findings + (finding,), **changes)

    def hide(self, finding: Finding) -> ToolState:
        return self.with_finding(finding, hidden=True)


@dataclass(frozen=True)
class ListState:
    """The whole tool list as a client holds it: the unit discovery behaviours transform.

    ``outcome`` is ``ok``, ``server-dropped`` (the client lost every tool of the server) or
    ``session-broken`` (the client keeps the tools but every request fails); ``culprit``
    is the index of the tool that caused it, if one did.

    ``blocked`` (set only by ``mcp_matrix.simulate.discovery.run_discovery`` when it ends) are
    the indices of the tools that break the session (a model API refusing the request
    their names or schemas make): discovery set each aside when it failed the session and
    went on with the others, so every other tool holds its own prediction.
    """

    server: str
    tools: tuple[ToolState, ...]
    pages: int = 1
    outcome: str = "ok"
    culprit: int | None = None
    findings: tuple[Finding, ...] = ()
    blocked: tuple[int, ...] = ()

    def fail(self, outcome: str, finding: Finding, culprit: int | None = None) -> ListState:
        if self.outcome != "ok":  # the first failure decides; later ones add nothing
            return self
        return replace(self, outcome=outcome, culprit=culprit, findings=self.findings + (finding,))

    def visible(self) -> tuple[ToolState, ...]:
        return tuple(t for t in self.tools if not t.hidden)


@dataclass(frozen=True)
class ToolView:
    """The discovery result for one (profile, tool) cell."""

    tool: str
    index: int
    verdict: str
    model_name: str | None
    model_schema: JSON
    findings: tuple[Finding, ...] = ()
    weakest_evidence: str | None = None
    model_description: JSON = None

    def to_json(self) -> dict:
        return {
            "tool": self.tool,
            "index": self.index,
            "verdict": self.verdict,
            "model_name": self.model_name,
            "model_schema": self.model_schema,
            "findings": [f.to_json() for f in self.findings],
            "weakest_evidence": self.weakest_evidence,
        }


@dataclass(frozen=True)
class ClientView:
    """What one client profile makes of a snapshot: a verdict per tool.

    ``culprits`` names the tools that break the session (each one's own cell is
    ``session-broken``, its last finding the rule); every other tool's cell is then its own
    prediction, what the client does with it once the culprits are fixed. When ``outcome`` is
    not ``ok`` and there are no culprits (a dropped server, a handshake that never succeeds),
    every tool carries the outcome: ``whole``.
    """

    profile: str
    outcome: str
    tools: tuple[ToolView, ...]
    findings: tuple[Finding, ...] = field(default=())
    culprits: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        """Every tool shares the list-level outcome: no cell holds a tool's own prediction."""
        return self.outcome != "ok" and not self.culprits

    def by_tool(self) -> dict[str, ToolView]:
        """Tools by name, built once per view: ``diff`` asks for it per change and profile, and
        rebuilding it each time made a diff quadratic in the number of tools. Read it, never
        change it (the dict is shared by every caller)."""
        index = self.__dict__.get("_by_tool")
        if index is None:
            # A server may list one name twice (a repeated page): the client keeps one of them
            # (the first, or the last), and that is the tool its calls reach.
            index = {}
            for t in self.tools:
                kept = index.get(t.tool)
                if kept is None or (
                    kept.verdict not in verdicts.SHOWN and t.verdict in verdicts.SHOWN
                ):
                    index[t.tool] = t
            object.__setattr__(self, "_by_tool", index)
        return index


# -- calls -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallContext:
    """What the client holds for the tool it is about to call (possibly a stale cached copy)."""

    tool: str  # the server's tool name
    held_schema: JSON  # the input schema the client validates and builds against
    held_tool: JSON  # the whole tool as the client holds it (outputSchema, annotations)
    stale: bool = False  # held from a baseline snapshot rather than the live server


@dataclass(frozen=True)
class CallPlan:
    """What a client will put on the wire for one intended call.

    ``refused`` is set when the client refuses to send (its own validation): the call never
    reaches the server. ``applied`` names the behaviours that changed something.
    """

    tool: str
    arguments: JSON
    omit_arguments: bool = False
    meta: JSONObject | None = None  # the call's _meta object, or none sent
    refused: Finding | None = None
    new_session: bool = False
    notes: tuple[Finding, ...] = ()
    applied: tuple[str, ...] = ()

    def changed(self, behaviour: str, **changes: Any) -> CallPlan:
        """This plan with ``changes``, naming ``behaviour`` (``evolve``: ``replace``'s field
        walk was a tenth of planning a call, which every profile does for every call)."""
        return evolve(self, applied=self.applied + (behaviour,), **changes)


@dataclass(frozen=True)
class Mutation:
    """One difference between the intended and the wire arguments."""

    kind: str  # removed | stringified | retyped | nulled | changed | added
    pointer: str
    before: JSON = None
    after: JSON = None

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "pointer": self.pointer,
            "before": self.before,
            "after": self.after,
        }
