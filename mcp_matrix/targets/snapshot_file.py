"""The snapshot file: the versioned JSON document written and read back (docs/snapshot.md).

``load_snapshot`` checks a file before anything reads it (UTF-8, JSON, the format and a
readable version, the tool list's shape, then every key a reader uses against
``snapshot.schema.json``): problems are ``InputError`` values naming the file and key. This and
``run/results.py`` are where JSON errors of input files become ours.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.infiles import parse_json, read_input
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schemas import checker
from mcp_matrix.targets.server_key import ServerKey, server_key

FORMAT = "mcp-matrix.snapshot"
VERSION = 2
READABLE_VERSIONS = (1, 2)


@dataclass(frozen=True)
class Snapshot:
    """A loaded snapshot document (read-only view over the JSON)."""

    doc: Mapping[str, Any]
    source: str = ""

    @property
    def tools(self) -> list[tuple[int, object]]:
        return [(entry["page"], entry["tool"]) for entry in self.doc.get("tools", [])]

    @property
    def server_name(self) -> str:
        return self.server_key.name

    @property
    def server_key(self) -> ServerKey:
        """The server's config key (``--name``, or the slug a user would type; see targets.server_key)."""
        return server_key(self.doc.get("target"), self.doc.get("serverInfo"))

    @property
    def server_info(self) -> Mapping[str, Any] | None:
        """The server's ``serverInfo`` when it is an object (a hostile server's string or
        number stays in the document, but no report reads it as an object)."""
        info = self.doc.get("serverInfo")
        return info if isinstance(info, dict) else None

    @property
    def error(self) -> Any:
        return self.doc.get("error")

    @property
    def eras(self) -> Mapping[str, Any] | None:
        """Which eras the server answers (None for a version 1 snapshot: not probed)."""
        eras = self.doc.get("eras")
        return eras if isinstance(eras, dict) else None


def write_snapshot(doc: Mapping[str, JSON], path: str | Path) -> None:
    # A lone surrogate (valid JSON, "\ud800") is written as its escape, never a crash.
    Path(path).write_text(
        json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
        errors="backslashreplace",
    )


def load_snapshot(path: str | Path) -> Snapshot:
    """Read and check a snapshot file; problems are InputErrors naming the file and key."""
    p = Path(path)
    text = read_input(p, "snapshot", "cannot read snapshot", "a snapshot JSON file")
    doc = parse_json(text, p)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f'not an mcp-matrix snapshot: expected "format": "{FORMAT}"', where=str(p))
    if doc.get("version") not in READABLE_VERSIONS:
        raise InputError(
            f"snapshot version {doc.get('version')!r} is not supported; expected one of "
            f"{', '.join(map(str, READABLE_VERSIONS))}",
            where=str(p),
        )
    tools = doc.get("tools")
    if not isinstance(tools, list):
        raise InputError("key 'tools' must be a list of {page, tool}", where=f"{p}: tools")
    for i, entry in enumerate(tools):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("page"), int)
            or "tool" not in entry
        ):
            raise InputError(
                "expected an object with an integer 'page' and a 'tool'", where=f"{p}: tools[{i}]"
            )
    # every key a reader uses, typed as snapshot.schema.json says (without its as-written v2 key list)
    problem = checker("snapshot", drop=("if", "then"))(doc)
    if problem is not None:
        raise InputError(problem.message, where=str(p))
    return Snapshot(doc, source=str(p))
