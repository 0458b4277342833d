"""A tool list measured as every profile holds it: discovery, then one representative call per
tool through the one call pipeline (``mcp_matrix.run.deliver``) to an offline ``SchemaServer``.

The server validates against the schema it lists, and also runs the checks of the server-side
checklist (the rule a flattened combinator or a described keyword moved into the handler), so
a corrected list is judged with the handler it needs. The call is the same intent before and
after: a valid instance of the original schema, every optional property given once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_matrix.behaviours.validation import Violation
from mcp_matrix.core import verdicts
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.materiality import MATERIAL
from mcp_matrix.core.verdicts import BY_NAME, DISCOVERY_VERDICTS, FINE, V, is_finding, rank
from mcp_matrix.evolution.effects import alias_rule
from mcp_matrix.evolution.examples import example, sample, validation_errors
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.call_servers import Intended, SchemaServer, listed_violations
from mcp_matrix.run.deliver import deliver
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.run.held import Held, hold
from mcp_matrix.targets.snapshot import Snapshot

# A discovery cell that is a finding (the tool lost or its schema degraded), and the call
# verdicts that leave nothing to fix (a loud refusal is the safe outcome): columns of the table.
LOST = tuple(v for v in DISCOVERY_VERDICTS if is_finding(v))
FINE_CALLS = frozenset(v for v in (*FINE, V.LOUD.name) if BY_NAME[v].phase != "discovery")


@dataclass(frozen=True)
class Loss:
    """One material finding of a cell: what a fix has to remove."""

    code: str
    pointer: str
    message: str
    culprit: str = ""  # the tool whose own finding took this one's list down


@dataclass(frozen=True)
class CellState:
    """One (client, tool) cell: its discovery verdict and losses, and its call's verdict."""

    profile: str
    tool: str  # the tool's name in the list measured
    verdict: str
    losses: tuple[Loss, ...]
    call: str = ""
    call_reason: str = ""

    @property
    def lost(self) -> bool:
        return self.verdict in LOST

    @property
    def call_lost(self) -> bool:
        return bool(self.call) and self.call not in FINE_CALLS


@dataclass(frozen=True)
class Measured:
    """Every cell of a tool list, keyed by (client, tool)."""

    cells: Mapping[tuple[str, str], CellState]

    def worse_than(self, before: Measured, names: Mapping[str, str]) -> list[str]:
        """Cells of this list worse than the same cell ``before`` (``names``: new tool name -> old),
        each as ``client tool: verdict -> verdict``: a fix that makes one is refused."""
        out = []
        for (profile, tool), now in self.cells.items():
            then = before.cells.get((profile, names.get(tool, tool)))
            if then is None:
                continue
            new = {_what(x) for x in now.losses}
            old = {_what(x) for x in then.losses}
            # A better verdict may show losses the worse one hid (a dropped list hid each tool's
            # own findings): only a cell no better than before is judged by its losses.
            better = rank(now.verdict) > rank(then.verdict)
            if rank(now.verdict) < rank(then.verdict) or (new - old and not better):
                out.append(f"{profile} {tool}: {then.verdict} -> {now.verdict}")
            elif now.call_lost and then.call and rank(now.call) < rank(then.call):
                out.append(f"{profile} {tool}: call {then.call} -> {now.call}")
        return out


def _what(loss: Loss) -> tuple[str, str]:
    """What a loss is, wherever it moved: a keyword a client strips or changes is its own loss
    (its code and keyword); any other finding is one per code (an array's narrowed type that
    moves from the array to its new ``items`` is the same loss)."""
    if loss.code.endswith("-by-client"):
        return loss.code, loss.pointer.rsplit("/", 1)[-1]
    return loss.code, ""


def intent(schema: Any) -> JSON:
    """A call a model means to make: valid for ``schema``, each optional property given once when
    the result stays valid (so a client that drops one shows it)."""
    value = example(schema)
    if not isinstance(value, dict) or not isinstance(schema, Mapping):
        return value
    for name, sub in (schema.get("properties") or {}).items():
        if name in value:
            continue
        got = sample(sub)
        if got is None:
            continue
        trial = {**value, name: got}
        if not validation_errors(schema, trial):
            value = trial
    return value


def measure(
    doc: Mapping[str, Any],
    tools: Sequence[object],
    profiles: Sequence[Profile],
    server: str | None,
    checks: Mapping[str, Sequence[JSON]] | None = None,
    intents: Mapping[str, JSON] | None = None,
) -> Measured:
    """Discovery and calls for ``tools`` (in the snapshot ``doc``'s place) in every profile.

    ``checks``: per tool name, JSON Schemas the handler also enforces; ``intents``: per tool
    name, the arguments of its call (none: no call is measured)."""
    pages = [e.get("page", 0) for e in doc.get("tools", [])]
    entries = [{"page": pages[i] if i < len(pages) else 0, "tool": t} for i, t in enumerate(tools)]
    snap = Snapshot({**doc, "tools": entries})
    views = discover_all(snap, profiles, server=server)
    raw: dict[str, JSON] = {
        t["name"]: t for t in tools if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    }
    by_name = {p.name: p for p in profiles}
    cells: dict[tuple[str, str], CellState] = {}
    for view in views:
        profile = by_name[view.profile]
        held = hold(profile, view, None, raw)  # no baseline: not a stale cache
        for tv in view.tools:
            losses = tuple(
                Loss(f.code, f.pointer, f.message, f.culprit)
                for f in tv.findings
                if f.materiality in MATERIAL or tv.verdict in verdicts.LOST
            )
            call, reason = "", ""
            if intents is not None and tv.tool in intents and tv.tool in raw:
                call, reason = _call(profile, held, tv.tool, intents[tv.tool], raw, checks or {})
            cells[(view.profile, tv.tool)] = CellState(
                view.profile, tv.tool, tv.verdict, losses, call, reason
            )
    return Measured(cells)


def _call(
    profile: Profile,
    held: Held,
    tool: str,
    arguments: JSON,
    raw: Mapping[str, JSON],
    checks: Mapping[str, Sequence[JSON]],
) -> tuple[str, str]:
    own = tuple(checks.get(tool, ()))

    def handler(schema: JSON, args: JSON) -> Violation | None:
        for check in own:
            found = listed_violations({"inputSchema": check}, args)
            if found:
                return found[0]
        return None

    server = SchemaServer({tool: raw[tool]}, rules=(alias_rule, handler))
    done = deliver(profile, held, Intended(tool, arguments), server)
    return done.verdict.verdict, done.verdict.reason
