"""How much a discovery finding matters to the model, derived in one place from what was lost:
the finding's code and the JSON Schema keyword its pointer ends at.

- ``none``: nothing the model or a validator uses was lost: annotations such as ``$schema``,
  ``$id``, ``$comment``, ``title``, ``examples``, and ``$ref``/``$defs`` bookkeeping (a
  reference the client inlined; a reference left dangling is its own finding).
- ``stricter``: the client forced a stricter schema (``additionalProperties: false`` added,
  optional properties made required): its own finding, not a loss.
- ``guidance``: the model lost guidance: a description, a default, ``deprecated``.
- ``constraint``: the model lost or had changed a constraint: type, enum, const, required,
  bounds, pattern, format, items, additionalProperties, a property, a combinator.

``degraded`` means a constraint or guidance was lost (docs/design.md#verdicts); ``none`` and ``stricter``
findings stay in the details of a ``visible`` cell. Findings that are not about a schema
keyword keep their behaviour's ``lost`` flag (lost is ``constraint``, e.g. a dangling
``$ref``; not lost is ``none``) unless their code is listed in ``BY_CODE`` (a renamed tool,
a shortened description: ``guidance``), or were given one by their behaviour (a tool name
whose words all survive a rename: ``none``, see ``renamed``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from mcp_matrix.core.model import Finding, evolve
from mcp_matrix.core.tools import unescape

LEVELS = ("none", "stricter", "guidance", "constraint")
# A cell is degraded when one of its findings is at least this material.
MATERIAL = frozenset({"guidance", "constraint"})

NO_EFFECT_KEYWORDS = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "$comment",
        "title",
        "examples",
        "example",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "readOnly",
        "writeOnly",
        "$ref",
        "$defs",
        "definitions",
        "$dynamicRef",
        "$recursiveRef",
        "$recursiveAnchor",
        "markdownDescription",
        "deprecationMessage",
    }
)
GUIDANCE_KEYWORDS = frozenset(
    {"description", "default", "deprecated", "contentMediaType", "contentEncoding"}
)
CONSTRAINT_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "required",
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "nullable",
        "contentSchema",
    }
)
# Keywords whose members are names (a property called "title" is a property, not the annotation).
_NAME_MAPS = frozenset(
    {
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependentRequired",
        "dependencies",
    }
)
# Schema findings, by code, whose materiality is the keyword's.
_KEYWORD_CODES = frozenset({"removed-by-client", "changed-by-client"})
# Other codes with a fixed materiality.
BY_CODE = {
    "additional-properties-forced": "stricter",
    "made-required": "stricter",
    "no-parameters": "none",
    "truncate-descriptions": "guidance",
    "description-truncated": "guidance",
    "name-shortened": "guidance",
    "name-sanitised": "guidance",
    "name-collision-renamed": "guidance",
}


@lru_cache(maxsize=4096)
def keyword_at(pointer: str) -> tuple[str, bool]:
    """The schema keyword a pointer into a tool ends at, and whether the pointer names a whole
    property (``/inputSchema/properties/title`` is the property ``title``, keyword ``properties``).
    An array member (``/enum/2``, ``/examples/0``) counts as its keyword."""
    tokens = [unescape(t) for t in pointer.split("/")[1:]] if pointer.startswith("/") else []
    if tokens and tokens[0] in ("inputSchema", "outputSchema"):
        tokens = tokens[1:]
    if not tokens:
        return "", False
    if len(tokens) >= 2 and tokens[-2] in _NAME_MAPS:
        return tokens[-2], True
    if tokens[-1].isdigit() and len(tokens) >= 2:
        return tokens[-2], False
    return tokens[-1], False


@lru_cache(maxsize=4096)
def materiality_of(code: str, pointer: str, lost: bool) -> str:
    """The materiality of one finding, out of context (see ``derive`` for the one case that
    needs its neighbours)."""
    if code in BY_CODE:
        return BY_CODE[code]
    if code in _KEYWORD_CODES:
        keyword, whole = keyword_at(pointer)
        if whole:
            return (
                "constraint"
                if keyword
                in (
                    "properties",
                    "patternProperties",
                    "dependentRequired",
                    "dependentSchemas",
                    "dependencies",
                )
                else "none"
            )
        if keyword in NO_EFFECT_KEYWORDS or keyword.startswith("x-"):
            return "none"
        if keyword in GUIDANCE_KEYWORDS:
            return "guidance"
        if keyword in CONSTRAINT_KEYWORDS or not keyword:
            return "constraint"
        return "none"  # not a JSON Schema keyword: no validator or model relies on it
    return "constraint" if lost else "none"


_WORDS = re.compile(r"[^\W_]+")


def renamed(before: str, after: str) -> str:
    """The materiality of a tool name the client changed for the model (calls mapped back to the
    server's name): keeping every word in order (only separators differ, ``get-env`` ->
    ``get_env``) costs the model nothing (``none``); dropping, adding or changing letters
    (``café`` -> ``caf_``, a hash appended, words run together) is ``guidance``."""
    return "none" if _WORDS.findall(before) == _WORDS.findall(after) else "guidance"


def derive(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """``findings`` with ``materiality`` set on each. A ``required`` list the client changed
    because it made optional properties required (``made-required`` at the same pointer) is
    that stricter schema, not a lost constraint."""
    if not findings or all(f.materiality for f in findings):
        return findings
    stricter_required = {f.pointer for f in findings if f.code == "made-required"}
    out = []
    for f in findings:
        if f.materiality:
            out.append(f)
            continue
        level = materiality_of(f.code, f.pointer, f.lost)
        if f.code == "changed-by-client" and f.pointer in stricter_required:
            level = "stricter"
        out.append(evolve(f, materiality=level))
    return tuple(out)


def is_material(finding: Finding) -> bool:
    """Whether the model lost a constraint or guidance (what makes a cell ``degraded``)."""
    level = finding.materiality or materiality_of(finding.code, finding.pointer, finding.lost)
    return level in MATERIAL


__all__ = [
    "LEVELS",
    "MATERIAL",
    "derive",
    "is_material",
    "keyword_at",
    "materiality_of",
    "renamed",
]
