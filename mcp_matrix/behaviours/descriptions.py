"""Discovery behaviours that rewrite what the model reads in a tool's description.

Claude Code 2.1.332 (observed, clients/calibrations/claude-code/2.1.332.json) no longer drops a
tool with a root ``anyOf``/``oneOf``/``allOf``: it deletes the combinator, merges the variants'
properties into the root, adds ``additionalProperties: true``, and puts the constraint into a
sentence before the description ("Input constraint: Provide parameters for at least one of:
(id) or (name)."). The model sees the constraint only as prose, and nothing checks it.
"""

from __future__ import annotations

from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, ListState, evolve
from mcp_matrix.core.tools import COMBINATORS

_WORDS = {"anyOf": "at least one of", "oneOf": "exactly one of"}
ALLOF_SENTENCE = (
    "Input constraint: all listed parameters apply together (flattened from a JSON Schema allOf)."
)


def _group(variant: JSON) -> str:
    names = variant.get("required") if isinstance(variant, dict) else None
    if not isinstance(names, list) or not names:  # not observed: a variant without required
        props = variant.get("properties") if isinstance(variant, dict) else None
        names = list(props) if isinstance(props, dict) else []
    return "(" + ", ".join(str(n) for n in names) + ")"


def flatten_root(schema: dict, keywords: tuple[str, ...]) -> tuple[dict, list[str]]:
    """The schema without its root combinators, and the constraint sentences for the description."""
    out = {k: v for k, v in schema.items() if k not in keywords}
    props = dict(out.get("properties") or {}) if isinstance(out.get("properties"), dict) else {}
    required = list(out.get("required") or []) if isinstance(out.get("required"), list) else []
    sentences = []
    for kw in keywords:
        variants = schema.get(kw)
        if kw not in schema or not isinstance(variants, list):
            continue
        for v in variants:
            if isinstance(v, dict) and isinstance(v.get("properties"), dict):
                for name, sub in v["properties"].items():
                    props.setdefault(name, sub)
            if kw == "allOf" and isinstance(v, dict) and isinstance(v.get("required"), list):
                required += [r for r in v["required"] if r not in required]
        if kw == "allOf":
            sentences.append(ALLOF_SENTENCE)
        else:
            sentences.append(
                f"Input constraint: Provide parameters for {_WORDS[kw]}: "
                + " or ".join(_group(v) for v in variants)
                + "."
            )
    out["properties"] = props
    out["required"] = required
    out.setdefault("additionalProperties", True)
    return out, sentences


@behaviour(
    "describe-root-combinators",
    "discovery",
    params={
        "keywords": {
            "type": "array",
            "items": {"enum": list(COMBINATORS)},
            "default": list(COMBINATORS),
            "description": "the root combinators restated in the description",
        }
    },
)
def describe_root_combinators(
    state: ListState, keywords: tuple[str, ...] = COMBINATORS
) -> ListState:
    """A root anyOf/oneOf/allOf becomes one flat object plus an "Input constraint" sentence (Claude Code 2.1.332).

    Observed (clients/calibrations/claude-code/2.1.332.json); earlier versions dropped such
    tools (#95504, docs/clients/anthropic.md#claude-code), which the 2.1.278 record confirms.
    """
    kws = tuple(keywords)
    tools = []
    changed = False
    for t in state.tools:
        schema = t.schema
        if t.hidden or not isinstance(schema, dict) or not any(k in schema for k in kws):
            tools.append(t)
            continue
        flat, sentences = flatten_root(schema, kws)
        text = "\n".join(sentences)
        desc = t.description
        description = text + ("\n\n" + desc if isinstance(desc, str) and desc else "")
        found = [k for k in kws if k in schema]
        finding = Finding(
            "root-combinator-described",
            f"root {', '.join(found)} deleted and restated in the description ({text!r}): the model reads the "
            "constraint as prose and the client no longer checks it",
            "/inputSchema/" + found[0],
            lost=True,
        )
        tools.append(t.with_finding(finding, schema=flat, description=description))
        changed = True
    if not changed:
        return state
    return evolve(state, tools=tuple(tools))


@behaviour(
    "truncate-tool-description",
    "discovery",
    params={
        "max_length": {
            "type": "integer",
            "minimum": 1,
            "default": 2048,
            "description": "characters kept",
        },
        "suffix": {"type": "string", "default": "", "description": "appended after a cut"},
    },
)
def truncate_tool_description(
    state: ListState, max_length: int = 2048, suffix: str = ""
) -> ListState:
    """A tool description longer than ``max_length`` is cut and ``suffix`` appended (Claude Code 2.1.278: 2048, "… [truncated]").

    Observed (clients/calibrations/claude-code-278/2.1.278.json, docs/clients/anthropic.md#claude-code); 2.1.332 no longer cuts.
    """
    tools = []
    changed = False
    for t in state.tools:
        desc = t.description
        if t.hidden or not isinstance(desc, str) or len(desc) <= max_length:
            tools.append(t)
            continue
        finding = Finding(
            "description-truncated",
            f"the tool description ({len(desc)} characters) is cut to {max_length}: the model "
            "never reads the rest",
            "/description",
            lost=True,
        )
        tools.append(t.with_finding(finding, description=desc[:max_length] + suffix))
        changed = True
    return evolve(state, tools=tuple(tools)) if changed else state
