"""Runtime identity resolution for the memory tools (docs/design.md#flatten-the-root).

Pure functions, no I/O: the server calls :func:`resolve_identity` before it
touches the backend, so a rejected call can never read or write anything.

Rules, for ``memory_reflect`` (canonical ``agent_id``, deprecated alias ``agent``):

* at least one explicit identity field is required; nothing is derived from the
  environment or the working directory;
* every identity field that is *present* must be a string with at least one
  non-whitespace character; ``null``, other types, ``""`` and whitespace-only
  strings are rejected even when the other field is valid (no fallback);
* when both are valid, ``agent_id`` wins, even if the values differ;
* valid values are returned unchanged (no stripping, no case folding).

The other identity tools accept only ``agent_id`` and apply the same
well-formedness rule to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CANONICAL = "agent_id"
ALIAS = "agent"


@dataclass(frozen=True)
class Resolved:
    """A usable identity: ``agent_id`` is the namespace, ``field`` the argument it came from."""

    agent_id: str
    field: str


@dataclass(frozen=True)
class Rejected:
    """No usable identity; ``message`` tells the model what to pass instead."""

    message: str


IdentityResult = Resolved | Rejected


def _describe(value: Any) -> str:
    """A short, JSON-flavoured description of a bad value for the error text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        if value == "":
            return 'an empty string ""'
        return f"the whitespace-only string {json.dumps(value)}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a value of type {type(value).__name__}"


def is_valid_identity(value: Any) -> bool:
    """True for a string with at least one non-whitespace character."""
    return isinstance(value, str) and value.strip() != ""


def resolve_identity(
    tool: str, arguments: Mapping[str, Any], *, accept_alias: bool
) -> IdentityResult:
    """Resolve the identity of one tool call, or explain why it cannot be resolved.

    ``accept_alias`` enables the deprecated ``agent`` spelling (``memory_reflect``).
    Presence means the key is in ``arguments``, whatever its value.
    """
    fields = [CANONICAL, ALIAS] if accept_alias else [CANONICAL]
    present = [name for name in fields if name in arguments]
    if not present:
        hint = (
            " The deprecated alias agent is still accepted, but pass agent_id."
            if accept_alias
            else ""
        )
        return Rejected(
            f"{tool} needs an identity: pass agent_id as a non-empty string, for example "
            f'"agent_id": "my-agent". Nothing was read or written.{hint}'
        )

    problems = []
    for name in present:
        value = arguments[name]
        if not is_valid_identity(value):
            label = "agent (deprecated alias for agent_id)" if name == ALIAS else name
            problems.append(
                f"{label} must be a string with at least one non-whitespace character, "
                f"but got {_describe(value)}"
            )
    if problems:
        advice = 'Pass agent_id as a non-empty string, for example "agent_id": "my-agent"' + (
            ", and omit agent." if accept_alias else "."
        )
        no_fallback = (
            " A malformed identity field is never replaced by the other one."
            if len(present) > 1
            else ""
        )
        return Rejected(
            f"{tool} rejected the identity: {'; '.join(problems)}. {advice}{no_fallback} "
            "Nothing was read or written."
        )

    chosen = CANONICAL if CANONICAL in present else ALIAS
    return Resolved(agent_id=arguments[chosen], field=chosen)
