"""What to do instead: advice for each change, with the change's own names filled in.

The advice follows the three fixes of docs/design.md#three-fixes-the-reference-servers-show:

- rename additively (docs/design.md#rename-additively): rename additively (the old name kept as a deprecated alias,
  mapped at the boundary, the new name wins on conflict and conflicts are counted), describe
  the alias bluntly ("Do not use; pass account_id instead"), retire it only when the live,
  retry and replay signals are quiet; a parallel ``_v2`` tool only when the mapping between
  the two is not total;
- the raw-twin write path (docs/design.md#a-raw-twin-for-write-tools): a write tool whose schema evolves gets a twin with one
  JSON payload string, so a client holding a stale schema has nothing to strip;
- flatten the root (docs/design.md#flatten-the-root): flatten a root ``anyOf``/``oneOf``/``allOf`` and check the rule in the
  handler, where it fails with an error the model can read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.model import Change

FLATTEN = (
    "Flatten the root: make inputSchema a plain object (type: object, properties, required) with no root "
    "anyOf/oneOf/allOf/not or if/then/else, keep optional every property a combinator chose between, and check "
    "the rule in the handler, returning a tool error the model can read (docs/design.md#flatten-the-root)."
)


@dataclass(frozen=True)
class Context:
    """What advice needs beyond the change: raw twins, read-only tools, caching clients."""

    twins: Mapping[str, str] = field(default_factory=dict)  # rich tool -> its raw twin (new list)
    read_only: frozenset[str] = frozenset()
    caching: tuple[str, ...] = ()


def advice(change: Change, ctx: Context) -> tuple[str, ...]:
    """The pieces of advice for one change, most specific first (none for a harmless change)."""
    said = _SAID.get(change.kind)
    if said is not None:
        return (said.format(param=change.param, tool=change.tool, old=change.old),)
    fn = _BY_KIND.get(change.kind)
    return tuple(a for a in (fn(change, ctx) if fn else []) if a)


def _alias_text(old: str, new: str) -> str:
    return (
        f"Rename additively instead: keep {old} in the schema as a deprecated alias of {new} and map it to {new} "
        f"at the boundary, before validation, so one code path exists downstream; when a call sends both with "
        f"different values, {new} wins and the conflict is counted (a rising count means the description is not "
        f'steering). Make neither required on its own and enforce "one of the two" in the handler (a root anyOf '
        f"would hide the tool in clients that reject root combinators). Describe the alias bluntly: "
        f'"Deprecated alias for {new}. Do not use; pass {new} instead."'
    )


RETIRE = (
    "Retire an alias only when the frozen callers are quiet: no live conversation older than the deprecation, "
    "an empty dead-letter queue for the tool, and no stored transcript that still sends the old name "
    "(count them; `mcp-matrix replay` measures a recorded corpus)."
)


STRICT = (
    "A client that requires every property of the schema refuses, before sending, any frozen call that "
    "lacks a property the new schema adds, alias or not: no schema avoids it. The client tells the model in "
    "the same turn, and the model can retry with the new name; a queued retry does not go through the client."
)


def _refused_by_client(c: Change) -> str:
    """The clients that refuse this change's frozen call themselves (the effects' typed flag)."""
    names = [e.profile for e in c.clients if e.refused_by_client and e.shape == "old"]
    if not names:
        return ""
    who = ", ".join(dict.fromkeys(names))
    return f"The client's own check refuses a frozen call before sending it in {who}. " + STRICT


def _renamed(c: Change, ctx: Context) -> list[str]:
    return [_alias_text(c.param or "", _dotted(c, c.detail.get("to"))), STRICT, RETIRE]


def _alias_removed(c: Change, ctx: Context) -> list[str]:
    return [
        f"Keep {c.param} as a deprecated alias of {_dotted(c, c.detail.get('of'))} a while longer. "
        + RETIRE
    ]


def _removed(c: Change, ctx: Context) -> list[str]:
    out = [
        (
            f"Keep accepting {c.param} until frozen callers are quiet (ignore it, or map it at the boundary); "
            "if it moved under another name, keep it as a deprecated alias of that name."
        )
    ]
    if not c.detail.get("refused"):
        out.append(
            "The new schema does not set additionalProperties: false, so a call that still sends it may "
            "succeed without it (a silent loss): refuse unknown arguments so the failure is loud."
        )
    return out


def _added_optional(c: Change, ctx: Context) -> list[str]:
    twin = ctx.twins.get(c.tool)
    if twin:
        return [
            (
                f"Writes through the raw twin {twin} carry {c.param} inside their payload and are immune; steer "
                f"callers that need {c.param} to {twin}. Clients holding the old schema of {c.tool} lose "
                f"{c.param} until a new session: they strip it, or their model never sees it."
            )
        ]
    if c.tool in ctx.read_only:
        return [
            (
                f"Never assume {c.param} arrives: clients that cache the old schema strip it, or never show it to "
                "the model, until a new session. "
                "Where losing it matters, refuse a call without it with an error the model can read."
            )
        ]
    return [
        (
            f"Give {c.tool} a raw twin: a second tool with one field, a JSON payload string, whose handler forwards "
            "the whole payload and validates it server-side against the real schema, so a client holding a stale "
            "schema has nothing to strip (docs/design.md#a-raw-twin-for-write-tools). Point new writes at the twin."
        ),
        "Send notifications/tools/list_changed after a deploy; clients that refetch then see the new field.",
    ]


def _alias_added(c: Change, ctx: Context) -> list[str]:
    out = [
        (
            f"Keep mapping {c.param} to {_dotted(c, c.detail.get('of'))} at the boundary: the new name wins on "
            "conflict; count conflicts."
        )
    ]
    if c.detail.get("neither_required"):
        out.append(
            "Neither name is required in the schema: the handler must refuse a call with neither, with "
            "an error that names the one to pass."
        )
    out.append(_refused_by_client(c))
    out.append(RETIRE)
    return out


def _not_steering(c: Change, ctx: Context) -> list[str]:
    target = _dotted(c, c.detail.get("of")) if c.detail.get("of") else "<the new name>"
    return [
        (
            f"Make {c.param}'s description an instruction the model can act on this turn: \"Deprecated alias for "
            f'{target}. Do not use; pass {target} instead." A note about your roadmap ("will be removed in a '
            'future release") gives the model nothing to do, and the deprecated name keeps being called at close '
            "to its old rate."
        )
    ]


def _deprecated(c: Change, ctx: Context) -> list[str]:
    return [] if c.detail.get("steers") else _not_steering(c, ctx)


def _enum_removed(c: Change, ctx: Context) -> list[str]:
    return [
        (
            f"Keep accepting {_values(c.old)} for {c.param} and map them server-side; remove them from the schema "
            "only when frozen callers are quiet."
        )
    ]


def _enum_added(c: Change, ctx: Context) -> list[str]:
    if not any(e.stale for e in c.clients):
        return []
    return [
        (
            f"Clients validating against a cached schema refuse the new values of {c.param} until a new session; "
            "send notifications/tools/list_changed, and keep the old values working."
        )
    ]


def _tool_renamed(c: Change, ctx: Context) -> list[str]:
    to = c.detail.get("to")
    return [
        (
            f"Keep {c.tool} listed as a deprecated tool that forwards to {to} at the boundary (description: "
            f'"Deprecated; call {to} instead."), and retire it when frozen callers are quiet. Choosing a tool is '
            "harder to steer than filling a parameter: prefer keeping tool names stable."
        ),
        RETIRE,
    ]


def _parallel(c: Change, ctx: Context) -> list[str]:
    base = c.detail.get("parallel_to")
    if c.detail.get("total"):
        return [
            (
                f"The mapping from {base} to {c.tool} is total (a rename): prefer an additive alias inside {base} "
                "over a parallel tool. A second tool moves the choice from a parameter the model fills in to a "
                "tool it selects, which is harder to steer, and costs several times the tokens of one parameter "
                "for as long as both are listed."
            ),
        ] + [
            _alias_text(old, new)
            for old, new in (c.detail.get("mapping") or {}).items()
            if old != new
        ][:1]
    why = "; ".join(c.detail.get("not_mapped") or [])
    return [
        (
            f"A parallel tool fits here: the mapping is not total ({why}). Keep {base} unchanged for frozen "
            f"callers, make each description say which tool new calls use and why the other exists, and retire "
            f"{base} with the same frozen-caller signals as an alias."
        )
    ]


def _raw_twin(c: Change, ctx: Context) -> list[str]:
    return [
        (
            f"Steer writes to {c.tool}: its schema never changes, so a client holding a stale schema has nothing "
            "to strip. Its handler must forward the whole payload and validate it server-side (docs/design.md#a-raw-twin-for-write-tools)."
        )
    ]


def _annotation(c: Change, ctx: Context) -> list[str]:
    hint = c.detail.get("hint")
    if c.severity != "breaking" and hint == "idempotentHint":
        return [
            f"Retry queues repeat calls: give {c.tool} an idempotency key, or keep it idempotent."
        ]
    if hint == "readOnlyHint" and c.old is True:
        return [
            (
                f"If {c.tool} now writes, keep it read-only and add a separate write tool: clients and workers "
                "that run read-only tools without approval now stop at it."
            )
        ]
    if hint == "readOnlyHint" and c.new is True:
        return [f"Make sure {c.tool} never writes: clients may now run it without asking."]
    if hint == "destructiveHint" and c.new is True:
        return [
            (
                f"If only some calls destroy data, move that action to its own tool, so {c.tool} keeps running "
                "where destructive tools need approval."
            )
        ]
    if hint == "openWorldHint":
        return [f"Say in {c.tool}'s description what it now reaches outside the server."]
    return []


def _output(c: Change, ctx: Context) -> list[str]:
    if c.kind == "output-schema-added":
        return ["Return structuredContent matching outputSchema on every successful result."]
    if c.kind == "output-schema-removed":
        return [
            "Keep the outputSchema and structuredContent while code reads them; add, never take away."
        ]
    return [
        (
            f"Only add fields to a structured result: keep {c.detail.get('field', 'the field')} with its type "
            "(deprecate it in its description), since code reading structuredContent breaks otherwise."
        )
    ]


def _dotted(c: Change, name: JSON) -> str:
    """``name`` at the same depth as the change's parameter (``fields.plan`` -> ``fields.<name>``)."""
    if not name:
        return ""
    param = c.param or ""
    return (param.rsplit(".", 1)[0] + "." + str(name)) if "." in param else str(name)


def _values(values: JSON) -> str:
    return (
        ", ".join(json.dumps(v) for v in values) if isinstance(values, list) else json.dumps(values)
    )


_KEEP_TYPE = (
    "Keep accepting {param} as {old} and convert it at the boundary, or add a new parameter "
    "for the new type and keep {param} as a deprecated alias."
)

# Advice that is one sentence with the change's names filled in ({param}, {tool}, {old}).
_SAID: dict[str, str] = {
    "root-combinator-added": FLATTEN,
    "param-added-required": (
        "Make {param} optional with a server-side default (frozen calls never carry it), or "
        "refuse its absence with a tool error that says what to pass."
    ),
    "type-changed": _KEEP_TYPE,
    "type-narrowed": _KEEP_TYPE,
    "required-added": (
        "Keep {param} optional in the schema with a server-side default: frozen calls leave it out."
    ),
    "constraint-tightened": (
        "Keep accepting the values of {param} that were valid before (map or clamp them at "
        "the boundary) and apply the stricter rule to new calls with an error the model can "
        "read."
    ),
    "default-changed": (
        "Keep the old default of {param}: frozen calls that leave it out would silently get "
        "another behaviour. Put the new behaviour behind a value callers choose."
    ),
    "additional-properties-tightened": (
        "Map or drop known old keys (deprecated aliases, the old half of a hybrid call) at "
        "the boundary, before validation, so only truly unknown keys are refused."
    ),
    "additional-properties-loosened": (
        "Keep additionalProperties: false: with it open, a call with a retired or misspelled "
        "argument succeeds without it (a silent loss) instead of failing loudly."
    ),
    "tool-removed": (
        "Keep {tool} listed until frozen callers are quiet. If something replaces it, "
        "forward {tool} to the replacement at the boundary and describe it as an "
        'instruction: "Deprecated; call <new tool> instead."'
    ),
    "schema-changed": (
        "Check that calls valid against the old schema still validate against the new one; "
        "where they do not, map them at the boundary."
    ),
    "discovery-changed": (
        "Run `mcp-matrix discover` on the new snapshot for each client's full reason and the fix."
    ),
}


_BY_KIND: dict[str, Callable[[Change, Context], list[str]]] = {
    "param-renamed": _renamed,
    "alias-removed": _alias_removed,
    "param-removed": _removed,
    "param-added-optional": _added_optional,
    "alias-added": _alias_added,
    "alias-not-steering": _not_steering,
    "param-deprecated": _deprecated,
    "enum-values-removed": _enum_removed,
    "enum-values-added": _enum_added,
    "tool-renamed": _tool_renamed,
    "tool-parallel": _parallel,
    "raw-twin-added": _raw_twin,
    "annotation-changed": _annotation,
    "output-schema-added": _output,
    "output-schema-removed": _output,
    "output-field-removed": _output,
    "output-field-retyped": _output,
}

__all__ = ["FLATTEN", "RETIRE", "Context", "advice"]
