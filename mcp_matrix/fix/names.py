"""Tool names a client refuses, cut or rewrites: a stable name that fits, the old one kept as an alias.

A renamed tool keeps answering under its old name (a server item) until frozen callers are
quiet, with the rename guidance of ``mcp_matrix.evolution.guidance``.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.evolution.guidance import Context, advice
from mcp_matrix.evolution.model import Change
from mcp_matrix.fix.model import Edit, Rename, ServerItem

NAME_LENGTHS = (48, 40, 32, 24, 16)  # tried longest first: the name keeps as much as it can


def banned(message: str) -> str:
    """The characters a name finding says the client does not allow (``... allow ('-', '.')``)."""
    found = re.search(r"does not allow \(([^)]*)\)", message)
    return "".join(re.findall(r"'(.)'", found.group(1))) if found else ""


def stable_name(name: str, limit: int, also: str = "") -> str:
    """``name`` in [A-Za-z0-9_-] less the characters ``also``, starting with a letter, at most
    ``limit`` characters: a longer one keeps its start and ends in ``_`` and the first 8 hex of
    its SHA-1 (the same name always gives the same result)."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", name) or "tool"
    for ch in also:
        clean = clean.replace(ch, "_")
    if not clean[0].isalpha():
        clean = "t_" + clean
    if len(clean) <= limit and clean == name:
        return clean
    if len(clean) > limit:
        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
        clean = clean[: limit - 9].rstrip("_-") + "_" + digest
    return clean


def renames(tool: Mapping[str, JSON], tools: list[JSON], message: str) -> list[Edit]:
    """The tool renamed by ``stable_name``, longest name first; never onto a name in use."""
    name = str(tool.get("name", ""))
    taken = {t.get("name") for t in tools if isinstance(t, Mapping)} - {name}
    out: list[Edit] = []
    seen = set()
    also = banned(message)
    for limit in (max(len(name), 1),) + NAME_LENGTHS:
        new = stable_name(name, limit, also)
        if new == name or new in seen or new in taken:
            continue
        seen.add(new)
        after = copy.deepcopy(dict(tool))
        after["name"] = new
        guidance = advice(
            Change(kind="tool-renamed", tool=name, message="", detail={"to": new}), Context()
        )
        out.append(
            Edit(
                "rename",
                name,
                after,
                f"tool renamed {name!r} -> {new!r} ({len(new)} characters, [A-Za-z0-9_-]): {message}",
                items=(
                    ServerItem(
                        new,
                        f"keep answering tools/call for {name!r} as an alias of {new!r} (mapped at "
                        "the boundary, not listed), until frozen callers are quiet",
                        f"the tool name {name!r}",
                    ),
                ),
                renames=(Rename(name, new, (), guidance),),
                cost=f"frozen callers (live conversations, queued retries, stored transcripts) "
                f"that call {name!r} fail unless the server keeps the alias",
            )
        )
    return out


__all__ = ["NAME_LENGTHS", "banned", "renames", "stable_name"]
