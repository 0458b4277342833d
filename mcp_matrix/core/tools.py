"""What the package knows about a listed tool and its schema, in one place: whether it may
write, the tools of a list by name, the schema combinators, JSON Pointer tokens.

Read-only is decided here once (docs/cases.md, "Safety"): a tool is read-only only when it says
``readOnlyHint: true`` and does not say ``destructiveHint: true``. The MCP specification gives
``destructiveHint`` a meaning only for a tool that is not read-only, so a tool that says both
contradicts itself, and the safe reading of a contradiction is that it may write: ``run`` never
calls it, ``replay --read-after`` refuses it, a retry of it is not safe unless it is idempotent,
and the advice treats it as a write.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from mcp_matrix.core.jsontypes import JSONObject

COMBINATORS = ("anyOf", "oneOf", "allOf")  # the schema keywords that list subschemas to combine
# What a root schema may hold instead of, or beside, a plain object: clients that want an object
# root hide, drop or rewrite a tool that has one.
ROOT_COMBINATORS = (*COMBINATORS, "not", "if", "then", "else")

_Tool = TypeVar("_Tool")


def hints(tool: object) -> JSONObject:
    """The tool's ``annotations`` (behaviour hints), or none when it lists no object there."""
    ann = tool.get("annotations") if isinstance(tool, Mapping) else None
    return ann if isinstance(ann, Mapping) else {}


def read_only(tool: object) -> bool:
    """The tool says it changes nothing: ``readOnlyHint: true`` and not ``destructiveHint: true``."""
    h = hints(tool)
    return h.get("readOnlyHint") is True and h.get("destructiveHint") is not True


def may_write(tool: object) -> bool:
    """Anything but ``read_only``: an unannotated tool, and one that says read-only and destructive."""
    return not read_only(tool)


def retry_safe(tool: object) -> bool:
    """Sending the same arguments again changes nothing more: read-only, or ``idempotentHint:
    true`` (which promises exactly that, even for a destructive tool)."""
    return read_only(tool) or hints(tool).get("idempotentHint") is True


def tools_by_name(tools: Iterable[_Tool | None]) -> dict[str, _Tool]:
    """The listed tools by name, in order, the first of a name kept (a server may list a name
    twice); entries that are not objects with a string name are left out (nothing can call them)."""
    out: dict[str, _Tool] = {}
    for tool in tools:
        if tool is None:
            continue
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str) and name not in out:
            out[name] = tool
    return out


def every_tool_by_name(tools: Iterable[_Tool | None]) -> dict[str, list[_Tool]]:
    """Like ``tools_by_name``, keeping every tool of a name (to tell a duplicated name)."""
    out: dict[str, list[_Tool]] = {}
    for tool in tools:
        if tool is None:
            continue
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str):
            out.setdefault(name, []).append(tool)
    return out


def escape(token: object) -> str:
    """One JSON Pointer reference token (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """The key a JSON Pointer reference token names (``~1`` before ``~0``, as RFC 6901 says)."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer(*tokens: object) -> str:
    """A JSON Pointer from its keys, each escaped: ``pointer("a/b", 0)`` is ``/a~1b/0``."""
    return "".join("/" + escape(t) for t in tokens)


__all__ = [
    "COMBINATORS",
    "ROOT_COMBINATORS",
    "escape",
    "every_tool_by_name",
    "hints",
    "may_write",
    "pointer",
    "read_only",
    "retry_safe",
    "tools_by_name",
    "unescape",
]
