"""The one ``$ref`` resolver of every validator: in-document and bundled metaschemas only.

A tool schema comes from an untrusted server. A ``$ref`` to ``http://...`` or ``file:///...``
must never make mcp-matrix open a connection or read a file (a server author's CI would leak
its files, or hang on a listener that never answers). ``REGISTRY`` knows the JSON Schema
metaschemas bundled with ``jsonschema-specifications`` and refuses to retrieve anything else,
so an external reference is simply unresolvable. ``external_refs`` lists those references so
discovery can report them (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import NoReturn

import referencing
import referencing.exceptions
from jsonschema_specifications import REGISTRY as METASCHEMAS

from mcp_matrix.behaviours.rewrite import mentions
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding

EXTERNAL_REFS_SHOWN = 20


def _refuse(uri: str) -> referencing.Resource:
    """Retrieval callback: nothing outside the document is ever fetched or read."""
    raise referencing.exceptions.NoSuchResource(uri)  # its one field, ref


# mypy does not see the fields of referencing's attrs classes (declared through a .pyi trick)
REGISTRY: referencing.Registry = referencing.Registry(retrieve=_refuse).combine(  # type: ignore[call-arg]
    METASCHEMAS
)


def refusing_handlers() -> dict[str, Callable[[str], NoReturn]]:
    """fastjsonschema's URI handlers: every scheme a ``$ref`` could name raises instead of fetching.

    Only a second line of defence: validation.py never hands fastjsonschema a schema with a
    reference outside the document (fastjsonschema calls ``urlopen`` for a scheme it has no
    handler for)."""

    def refuse(uri: str) -> NoReturn:
        raise ValueError(f"mcp-matrix does not fetch {uri!r}")

    schemes = ("", "http", "https", "file", "ftp", "data", "urn", "jar", "tag")
    return {scheme: refuse for scheme in schemes}


def is_local(ref: JSON) -> bool:
    """A reference into the document itself (``#``, ``#/...``, ``#anchor``)."""
    return isinstance(ref, str) and ref.startswith("#")


def external_refs(schema: JSON, limit: int = EXTERNAL_REFS_SHOWN) -> list[tuple[str, str]]:
    """``(pointer, ref)`` of every ``$ref`` that leaves the document (first ``limit``)."""
    out: list[tuple[str, str]] = []
    for pointer, ref in _refs(schema, ""):
        # A non-string $ref refers to nothing (an invalid schema, reported elsewhere).
        if isinstance(ref, str) and not is_local(ref):
            out.append((pointer or "/", ref))
            if len(out) >= limit:
                break
    return out


def _refs(value: JSON, pointer: str) -> Iterator[tuple[str, JSON]]:
    """Every ``$ref`` value in ``value``, with its pointer; iterative (schemas nest deeply)."""
    stack = [(value, pointer)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node:
                yield at + "/$ref", node["$ref"]
            for key, child in node.items():
                if isinstance(child, (dict, list)):
                    stack.append((child, f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}"))
        elif isinstance(node, list):
            for i, child in enumerate(node):
                if isinstance(child, (dict, list)):
                    stack.append((child, f"{at}/{i}"))


def external_ref_findings(tool: JSON) -> tuple[Finding, ...]:
    """One finding per schema of ``tool`` that refers outside itself (never fetched, never read).

    Not a loss (``lost`` is False): what a real client does with such a reference is the
    profiles' business; this says only that mcp-matrix left it unresolved, and where."""
    if not isinstance(tool, dict):
        return ()
    out = []
    for key in ("inputSchema", "outputSchema"):
        if not mentions(tool.get(key), "$ref"):
            continue  # the usual case, read off the memoised canonical text
        refs = external_refs(tool.get(key))
        if refs:
            shown = ", ".join(f"{ref[:200]!r} at {pointer}" for pointer, ref in refs[:3])
            more = f" and {len(refs) - 3} more" if len(refs) > 3 else ""
            out.append(
                Finding(
                    code="external-ref",
                    message=f"{key} refers outside the document ({shown}{more}); mcp-matrix never "
                    "fetches or reads such a reference, so it stays unresolved here",
                    pointer=f"/{key}{refs[0][0]}",
                    lost=False,
                )
            )
    return tuple(out)
