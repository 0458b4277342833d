"""Cache and call behaviours: which schema a client holds, and what it puts on the wire.

Cache behaviours choose the tool list a client calls with (``fn(live, baseline, **p) ->
(view, finding | None)``): a client that caches its list at session start and ignores
``list_changed`` keeps the baseline (pre-deploy) view. Call behaviours turn intended
arguments into wire arguments (``fn(plan, ctx, **p) -> CallPlan``); a client's own
validation may refuse to send at all. Evidence is cited per behaviour and per profile entry.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.behaviours.validation import FORMATS, Validation, format_violations, validate
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext, CallPlan, ClientView, Finding, evolve

TYPE_NAMES = ("array", "object", "boolean", "number", "integer", "string")


# -- cache ---------------------------------------------------------------------------------


@behaviour(
    "cache-tools",
    "cache",
    params={
        "list_changed": {
            "enum": ["ignore", "refetch"],
            "default": "ignore",
            "description": "ignore: keep the list read at session start; refetch: re-list on notifications/tools/list_changed",
        },
    },
)
def cache_tools(live: ClientView, baseline: ClientView | None, list_changed: str = "ignore"):
    """The tool list is read once at session start and kept (Claude Code, Continue, claude.ai: docs/clients/anthropic.md#claude-code, docs/clients/continue.md#continue).

    With a baseline (the list before a deploy), a client that ignores ``list_changed`` keeps
    calling with the baseline's schemas; one that refetches sees the live list (this assumes
    the server announces the change, which mcp-matrix cannot know from a snapshot).
    """
    if baseline is None or list_changed == "refetch":
        return live, None
    return baseline, Finding(
        code="stale-cache",
        message="the client keeps the tool list it read at session start (list_changed ignored)",
        blast_radius="tool",
    )


# -- call ----------------------------------------------------------------------------------


@behaviour(
    "client-validate",
    "call",
    params={
        "dialect": {
            "enum": ["draft-07", "2020-12", "auto"],
            "default": "draft-07",
            "description": "auto: 2020-12 only when $schema is exactly the 2020-12 URI, else draft-07 (Gemini CLI's Ajv)",
        },
        "against": {
            "enum": ["held", "server"],
            "default": "held",
            "description": "held: the schema the model sees; server: the inputSchema the server sent (Gemini CLI 0.61, observed)",
        },
        "formats": {
            "type": "array",
            "items": {"enum": list(FORMATS)},
            "default": [],
            "description": "formats the client checks too (Ajv with ajv-formats); JSON Schema alone ignores format",
        },
        "extra_properties": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "root properties the client adds to the schema it validates against (Gemini CLI: wait_for_previous)",
        },
    },
)
def client_validate(
    plan: CallPlan,
    ctx: CallContext,
    dialect: str = "draft-07",
    against: str = "held",
    formats: Sequence[str] = (),
    extra_properties: Sequence[str] = (),
) -> CallPlan:
    """The client validates arguments against its own (held, rewritten) schema and refuses to send invalid ones.

    Gemini CLI: ``SchemaValidator.validate`` with Ajv before ``tools/call``; a schema that
    does not compile skips validation (docs/clients/google.md#gemini-cli).
    """
    schema = ctx.held_schema
    if against == "server" and isinstance(ctx.held_tool, dict) and "inputSchema" in ctx.held_tool:
        schema = ctx.held_tool["inputSchema"]
    if (
        extra_properties
        and isinstance(schema, dict)
        and _names_one(plan.arguments, extra_properties)
    ):
        schema = _widened(schema, tuple(extra_properties))
    checked, errors = _checked(schema, plan.arguments, dialect, tuple(formats))
    if checked.unchecked:  # a pattern too costly to run: neither passed nor refused, and said so
        plan = replace(
            plan,
            notes=plan.notes
            + tuple(
                Finding(
                    code="pattern-too-costly",
                    message=text,
                    pointer="/arguments",
                    blast_radius="call",
                )
                for text in checked.unchecked
            ),
        )
    if checked.long_enums:  # an enum over the cap (docs/security.md): not checked, and said so
        plan = replace(
            plan,
            notes=plan.notes
            + tuple(
                Finding(
                    code="enum-over-cap", message=text, pointer="/arguments", blast_radius="call"
                )
                for text in checked.long_enums
            ),
        )
    if not errors:
        return plan
    return plan.changed(
        "client-validate",
        refused=Finding(
            code="client-refused",
            message="the client's own validation refused the call before sending: "
            + "; ".join(errors[:3]),
            pointer=errors and "/arguments" or "",
            blast_radius="call",
        ),
    )


_LAST: list[tuple | None] = [None]  # (schema, arguments, dialect, formats, checked, errors)


def _checked(
    schema: JSON, arguments: JSON, dialect: str, formats: tuple[str, ...]
) -> tuple[Validation, list[str]]:
    """``validate`` and ``format_violations`` of ``arguments``, the last one kept: profiles that
    validate alike (Gemini CLI and Qwen Code, against the server's schema) check the very same
    arguments and schema objects in a row when replay plans a call for each profile. Both are
    pure functions of the four; the slot is read and replaced whole (threads never mix two)."""
    last = _LAST[0]
    if (
        last is not None
        and last[1] is arguments
        and last[0] is schema
        and last[2] == dialect
        and last[3] == formats
    ):
        return last[4], last[5]
    checked = validate(schema, arguments, dialect)
    errors = [e.text for e in checked.errors] + format_violations(schema, arguments, formats)
    _LAST[0] = (schema, arguments, dialect, formats, checked, errors)
    return checked, errors


def _names_one(arguments: JSON, extra: Sequence[str]) -> bool:
    """Whether ``arguments`` hold one of the ``extra`` root properties. Without one, the widened
    schema reads them exactly as the held one does (an added property's schema applies only to
    its own key, and ``additionalProperties`` sees the same unlisted keys), errors and their words
    included; so the held schema, compiled once for the server's side too, checks them."""
    return isinstance(arguments, dict) and any(k in arguments for k in extra)


_WIDENED: dict[tuple[int, tuple[str, ...]], tuple[dict, dict]] = {}


def _widened(schema: dict, extra: tuple[str, ...]) -> dict:
    """``schema`` with the root properties ``extra`` added: one object per held schema, so
    validation finds it compiled (a new dict per call was a new text, fingerprint and entry
    in the fingerprint cache for every call of a replay)."""
    hit = _WIDENED.get((id(schema), extra))
    if hit is None or hit[0] is not schema:
        props = given if isinstance(given := schema.get("properties"), dict) else {}
        wide = {**schema, "properties": {**{k: {} for k in extra}, **props}}
        hit = _WIDENED[(id(schema), extra)] = (schema, wide)  # holding schema keeps its id
    return hit[1]


@behaviour("strip-unknown-arguments", "call")
def strip_unknown_arguments(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Arguments not in the held schema's ``properties`` are dropped before sending.

    The stale-cache failure a raw twin avoids (docs/design.md#a-raw-twin-for-write-tools): a field added after the
    client's session began is stripped; the call succeeds with less data.
    """
    props = ctx.held_schema.get("properties") if isinstance(ctx.held_schema, dict) else None
    if not isinstance(plan.arguments, dict) or not isinstance(props, dict):
        return plan
    kept = {k: v for k, v in plan.arguments.items() if k in props}
    if len(kept) == len(plan.arguments):
        return plan
    return plan.changed("strip-unknown-arguments", arguments=kept)


@behaviour(
    "stringify-arguments",
    "call",
    params={
        "types": {
            "type": "array",
            "items": {"enum": list(TYPE_NAMES)},
            "default": ["array", "object"],
            "description": "JSON types whose values are sent as JSON-encoded strings",
        },
        "depth": {
            "enum": ["top", "nested"],
            "default": "top",
            "description": "top: only top-level arguments; nested: also values inside objects and arrays",
        },
    },
)
def stringify_arguments(
    plan: CallPlan, ctx: CallContext, types: list | None = None, depth: str = "top"
) -> CallPlan:
    """Values of the given types are sent as JSON strings (``"[1,2]"`` for ``[1,2]``).

    Claude Code / Claude Desktop: arrays and objects sometimes arrive JSON-encoded
    (claude-code#5504, #22394, #59227), booleans too (#1678 via nteract#1680).
    """
    wanted = set(types or ["array", "object"])
    if not isinstance(plan.arguments, dict):
        return plan
    nested = depth == "nested"
    new = {k: _stringify(v, wanted, nested) for k, v in plan.arguments.items()}
    if all(new[k] is v for k, v in plan.arguments.items()):
        return plan  # nothing of those types: the same plan, no copy
    return plan.changed("stringify-arguments", arguments=new)


def _json_type(v: JSON) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _stringify(v: Any, wanted: set, nested: bool) -> JSON:
    """``v`` with wanted types JSON-encoded; the very same object when nothing changed."""
    t = _json_type(v)
    if nested and t == "object":
        inner = {k: _stringify(x, wanted, nested) for k, x in v.items()}
        if all(inner[k] is x for k, x in v.items()):
            inner = v
        return json.dumps(inner) if t in wanted else inner
    if nested and t == "array":
        items = [_stringify(x, wanted, nested) for x in v]
        if all(a is b for a, b in zip(items, v)):
            items = v
        return json.dumps(items) if t in wanted else items
    if t in wanted or (t == "integer" and "number" in wanted):
        return json.dumps(v)
    return v


@behaviour("drop-nulls", "call")
def drop_nulls(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Top-level arguments whose value is null are not sent (assumed; see profile evidence)."""
    if not isinstance(plan.arguments, dict) or None not in plan.arguments.values():
        return plan
    return plan.changed(
        "drop-nulls", arguments={k: v for k, v in plan.arguments.items() if v is not None}
    )


@behaviour(
    "default-arguments",
    "call",
    params={
        "when": {
            "enum": ["missing", "not-object"],
            "default": "missing",
            "description": "missing: only when there are no arguments; not-object: also replace non-objects",
        }
    },
)
def default_arguments(plan: CallPlan, ctx: CallContext, when: str = "missing") -> CallPlan:
    """``arguments`` defaults to ``{}`` (Cline ``toolArguments ?? {}``, docs/clients/cline.md#cline)."""
    missing = plan.omit_arguments or plan.arguments is None
    if missing or (when == "not-object" and not isinstance(plan.arguments, dict)):
        return plan.changed("default-arguments", arguments={}, omit_arguments=False)
    return plan


@behaviour(
    "add-meta",
    "call",
    params={
        "progress_token": {
            "type": "boolean",
            "default": True,
            "description": "add _meta.progressToken (a UUID)",
        }
    },
)
def add_meta(plan: CallPlan, ctx: CallContext, progress_token: bool = True) -> CallPlan:
    """Every call carries ``_meta`` with a progress token (Gemini CLI, docs/clients/google.md#gemini-cli)."""
    meta = dict(plan.meta or {})
    if progress_token:
        meta["progressToken"] = str(uuid.uuid4())
    return plan.changed("add-meta", meta=meta)


@behaviour("new-session-per-call", "call")
def new_session_per_call(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """Each call opens its own session: initialize + tools/call (LangChain MCP adapters, docs/clients/langchain.md#langchain-mcp-adapters)."""
    return evolve(plan, new_session=True, applied=plan.applied + ("new-session-per-call",))


@behaviour("send-as-written", "call")
def send_as_written(plan: CallPlan, ctx: CallContext) -> CallPlan:
    """The arguments go out as the model wrote them: nothing changes, but the call names this
    rule, so its cell carries the profile's evidence for it. A profile whose calls were never
    observed says so with it (Amp, whose model runs in its own service: docs/clients/amp.md#amp),
    and a call cell resting on ``assumed`` evidence is marked in every report's grid."""
    return evolve(plan, applied=plan.applied + ("send-as-written",))
