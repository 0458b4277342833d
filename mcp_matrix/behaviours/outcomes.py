"""Small shared pieces for discovery behaviours: policies, findings, loss diffs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_matrix.behaviours.refs import inline
from mcp_matrix.behaviours.rewrite import Outcome, losses, mentions
from mcp_matrix.behaviours.walk import ALL, dangling_refs
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallPlan, Finding, ListState, ToolState, evolve
from mcp_matrix.core.tools import COMBINATORS as SCHEMA_COMBINATORS
from mcp_matrix.core.tools import unescape
from mcp_matrix.core.verdicts import V

if TYPE_CHECKING:
    from mcp_matrix.behaviours.walk import Result

# What a client does with a tool it cannot take.
TOOL_POLICIES = ("drop-tool", "session-broken", "server-dropped")
WHERE = ("root", "all", "copilot")
COMBINATORS = list(SCHEMA_COMBINATORS)  # a list: the default of a behaviour parameter (JSON)


def param(kind: str | list | tuple, description: str, default: JSON = None, **more: JSON) -> dict:
    """A param's JSON Schema: type (or enum), default and description."""
    schema: dict = {"enum": list(kind)} if isinstance(kind, (list, tuple)) else {"type": kind}
    schema["description"] = description
    if default is not None:
        schema["default"] = default
    schema.update(more)
    return schema


WHERE_PARAM = param(
    WHERE, "Where: the root schema only, every subschema, or Copilot's walk (no $defs).", "all"
)
KEYWORDS_PARAM = {"type": "array", "items": {"type": "string"}}


def incomplete(result: Result, name: str) -> tuple[Finding, ...]:
    """A note when a walk stopped at the node limit (mcp_matrix.behaviours.walk.MAX_NODES)."""
    if result.complete:
        return ()
    from mcp_matrix.behaviours.walk import MAX_NODES

    return (
        note(
            "walk-limit",
            f"schema has more than {MAX_NODES} subschemas (after inlining); {name} was "
            "applied to the first ones only",
        ),
    )


def pointer(ptr: str) -> str:
    return "/inputSchema" + ptr


def refuse(policy: str, code: str, message: str, ptr: str = "") -> Outcome:
    """The Outcome for a schema the client cannot take, per ``policy``."""
    finding = Finding(code=code, message=message, pointer=pointer(ptr), lost=True)
    if policy == "drop-tool":
        return Outcome(drop=finding)
    if policy == V.SERVER_DROPPED.name:
        return Outcome(fail=("server-dropped", replace(finding, blast_radius="server")))
    return Outcome(fail=("session-broken", replace(finding, blast_radius="session")))


def consequence(policy: str) -> str:
    return {
        "drop-tool": "the client leaves this tool out",
        "session-broken": "every request of the session fails",
        "server-dropped": "the client loses every tool of this server",
    }.get(policy, "")


def run_failed(message: str) -> Finding:
    """A library that raises on the list it got: no tool of the server reaches the model
    (``list-rejected``, blast radius the server; the profile's ``list-failure-raises`` entry
    widens it to the run)."""
    return Finding(code="list-rejected", message=message, lost=True, blast_radius="server")


def refuse_call(plan: CallPlan, name: str, why: str) -> CallPlan:
    """The call refused by the client's own check ``name`` before it is sent, for ``why``."""
    return plan.changed(
        name,
        refused=Finding(
            code="client-refused",
            message=f"the client refuses the call before sending it: {why}",
            pointer="/arguments",
            blast_radius="call",
        ),
    )


def refuse_tool(
    state: ListState, i: int, policy: str, code: str, message: str, ptr: str = ""
) -> ListState:
    """List-level refusal of tool ``i`` under ``policy`` (drop-tool, session-broken or
    server-dropped): the new state. Callers decide first whether the tool is refused at all."""
    tool = state.tools[i]
    finding = Finding(code=code, message=message, pointer=ptr, lost=True)
    if policy == "drop-tool":
        tools = list(state.tools)
        tools[i] = tool.hide(finding)
        return replace(state, tools=tuple(tools))
    if policy in (V.SESSION_BROKEN.name, V.SERVER_DROPPED.name):
        radius = "session" if policy == V.SESSION_BROKEN.name else "server"
        return state.fail(policy, replace(finding, blast_radius=radius), culprit=tool.index)
    raise ValueError(f"not a refusal policy: {policy!r}")


def _at(root: JSON, tokens: list[str]) -> JSON:
    node = root
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _types(node: JSON) -> set:
    """Every type a node admits, whether said as a type list, anyOf arms or ``nullable``."""
    if not isinstance(node, dict):
        return set()
    out = set(typenames(node.get("type")))
    arms = given if isinstance(given := node.get("anyOf"), list) else []
    for arm in arms:
        if isinstance(arm, dict) and "anyOf" not in arm:
            out |= _types(arm)
    if node.get("nullable") is True:
        out.add("null")
    return out


def _same_arms_but_null(old: JSON, new: JSON) -> bool:
    """``anyOf`` arms kept (keys may be added) once the null arm is said as ``nullable``."""
    if not (isinstance(old, list) and isinstance(new, list)):
        return False
    kept = [a for a in old if not (isinstance(a, dict) and a.get("type") == "null")]
    if len(kept) == len(old) or len(kept) != len(new):
        return False
    try:
        return all(
            isinstance(a, dict)
            and isinstance(b, dict)
            and all(k in b and b[k] == v for k, v in a.items())
            for a, b in zip(kept, new)
        )
    except RecursionError:
        return False


def _said_as_types(arms: list, now: dict) -> bool:
    """``anyOf: [{type: string}, {type: null}]`` restated as ``type: string, nullable: true``:
    every arm only a type, and the node now admits exactly those types."""
    kinds = [
        arm.get("type") if isinstance(arm, dict) and set(arm) == {"type"} else None for arm in arms
    ]
    return all(isinstance(k, str) for k in kinds) and set(kinds) == _types(now)


def lossless(ptr: str, kind: str, before: JSON, after: JSON, dangling: object) -> bool:
    """Whether a diff entry is a rewrite that keeps the information (not a loss).

    A ``$ref`` replaced by its target, ``$defs`` removed once nothing refers into them, a
    one-variant combinator unwrapped, a type list said as ``anyOf`` arms or ``nullable`` (and
    type-only ``anyOf`` arms said as a type and ``nullable``),
    or a keyword moved into an ``anyOf`` arm (Roo's array variant).
    """
    tokens = [unescape(t) for t in ptr.split("/")[1:]]
    if not tokens:
        return False
    key = tokens[-1]
    was, now = _at(before, tokens[:-1]), _at(after, tokens[:-1])
    if not isinstance(was, dict):
        return False
    if key in ("$defs", "definitions") and len(tokens) == 1:
        return not (dangling() if callable(dangling) else dangling)
    if not isinstance(now, dict):
        return False
    if key == "$ref" and kind == "removed":
        return bool(now) and "$ref" not in now
    if key in ("oneOf", "anyOf", "allOf") and kind == "removed":
        arms = was.get(key)
        return isinstance(arms, list) and (
            len(arms) == 1 or (key != "allOf" and _said_as_types(arms, now))
        )
    if key == "anyOf" and kind == "changed":
        return _same_arms_but_null(was.get("anyOf"), now.get("anyOf"))
    if key == "type":
        old = set(typenames(was.get("type")))
        return bool(old) and old <= _types(now)
    if kind == "removed" and isinstance(now.get("anyOf"), list):
        return any(
            isinstance(arm, dict) and key in arm and arm[key] is was.get(key)
            for arm in now["anyOf"]
        )
    return False


def diff_findings(
    before: JSON, after: Any, behaviour: str, skip_root: bool = False, through_refs: bool = False
) -> tuple:
    """Loss findings for behaviours that report losses themselves (``report_losses=False``).

    Unlike the generic diff, rewrites that keep the information (``lossless``) are not
    losses: inlined references, unwrapped one-variant combinators, type lists restated.
    ``through_refs``: compare with the server's schema with its local references inlined,
    so a keyword a client drops inside a ``$defs`` entry is reported where it is used.
    """
    if through_refs and mentions(before, "$ref"):  # without a $ref, inlining changes nothing
        done = inline(before, "any-pointer", ALL)
        if done.complete:
            before = done.schema
    out = []
    found: list[bool] = []

    def dangling() -> bool:  # asked only about a removed root $defs: computed once, if ever
        if not found:
            found.append(_refers(after) and bool(dangling_refs(after, limit=1)))
        return found[0]

    for ptr, kind in losses(before, after):
        if skip_root and ptr in ("", "/"):
            continue
        if lossless(ptr, kind, before, after, dangling):
            continue
        out.append(
            evolve(
                _LOST,
                code=f"{kind}-by-client",
                message=f"{ptr or '/'} {kind} by {behaviour}",
                pointer=pointer("" if ptr == "/" else ptr),
            )
        )
    return tuple(out)


_LOST = Finding(code="", message="", lost=True)  # copied, not constructed: thousands per run


def _refers(schema: JSON) -> bool:
    """Whether any object in ``schema`` may have a ``$ref`` key (False is exact), read off
    its JSON text without keeping it: a rewrite's output is not fingerprinted otherwise."""
    try:
        return '"$ref":' in json.dumps(schema, separators=(",", ":"))
    except (ValueError, RecursionError, TypeError):
        return True


def note(
    code: str, message: str, ptr: str = "", lost: bool = False, materiality: str = ""
) -> Finding:
    return Finding(
        code=code, message=message, pointer=pointer(ptr), lost=lost, materiality=materiality
    )


def label(tool: ToolState) -> str:
    return tool.server_name or f"#{tool.index}"


def typenames(value: JSON) -> list[str]:
    """``type`` as a list of names (a string, a list, or nothing)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for t in value if isinstance(t, str)]
    return []
