"""The ``discover --json`` document (``format: mcp-matrix.discovery``; docs/reports.md).

Version 3 stores every distinct model-facing name, schema, property schema, finding and
evidence once, in the tables ``names``, ``schemas``, ``properties``, ``findings`` and
``evidence`` at the end of the document; each cell is a row
``[index, verdict, model_name, schema, findings]`` (``columns``) naming its entries by number;
the tool's name is ``tools[index]``. A schema whose ``properties`` is an object names each
property's schema by its number in ``properties``: the profiles' rewrites of one tool differ in
a few places, and each variant repeated the rest (version 2, which stored whole schemas only,
was 37 MB for 5,000 tools through 37 profiles, 22 MB of it schemas). It is written as it is made
(one cell a line). ``read_discovery`` gives the version-1 shape (every cell in full) for any
version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import IO, Any

from mcp_matrix.core.content_table import ContentTable, resolve
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.evidence import Evidence, weakest
from mcp_matrix.core.model import ClientView, Finding

FORMAT = "mcp-matrix.discovery"
VERSION = 3
READABLE = (1, 2, 3)
COLUMNS = ("index", "verdict", "model_name", "schema", "findings")  # a version-2/3 cell, in order


_dump = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=str
).encode  # one encoder, 100,000s of cells


class SchemaTable:
    """Model-facing schemas stored once, each with its property schemas by number in
    ``properties`` (where its ``properties`` is an object): a tool's variants share them."""

    def __init__(self) -> None:
        self.schemas, self.properties = ContentTable(), ContentTable()
        self._refs: dict[int, int] = {}  # by the schema's identity (copy-on-write shares them)
        self._held: list[Any] = []  # keeps those objects alive, so their ids stay unique

    def ref(self, schema: Any) -> int:
        known = self._refs.get(id(schema))
        if known is None:
            written = schema
            if isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping):
                refs = self.properties.ref
                written = {
                    k: {p: refs(v) for p, v in value.items()} if k == "properties" else value
                    for k, value in schema.items()
                }
            known = self._refs[id(schema)] = self.schemas.ref(written)
            self._held.append(schema)
        return known


def write_discovery(
    stream: IO[str],
    views: Iterable[ClientView],
    tool_names: list[str],
    server: Any,
    snapshot_error: Any,
) -> None:
    """Write the version-3 document; ``tool_names`` are the snapshot's tools in order."""
    schemas, findings, evidence = ContentTable(), ContentTable(), ContentTable()
    shapes, names = SchemaTable(), ContentTable()
    schemas, properties = shapes.schemas, shapes.properties
    name_refs: dict[str, int] = {}
    finding_refs: dict[
        Finding, int
    ] = {}  # findings and evidence are frozen values: equal is the same
    evidence_refs: dict[Evidence, int] = {}

    def finding_ref(f: Finding) -> int:
        known = finding_refs.get(f)
        if known is None:
            refs = [
                evidence_refs.get(e)
                if e in evidence_refs
                else evidence_refs.setdefault(e, evidence.ref(e.to_json()))
                for e in f.evidence
            ]
            known = finding_refs[f] = findings.ref({**f.to_json(), "evidence": refs})
        return known

    def name_ref(name: str) -> int:
        known = name_refs.get(name)
        if known is None:
            known = name_refs[name] = names.ref(name)
        return known

    w = stream.write
    w("{\n")
    w(f'"format": {_dump(FORMAT)},\n"version": {VERSION},\n')
    w(f'"server": {_dump(server)},\n"snapshot_error": {_dump(snapshot_error)},\n')
    w(f'"tools": {_dump(tool_names)},\n"columns": {_dump(list(COLUMNS))},\n"profiles": [')
    for p, view in enumerate(views):
        w(",\n" if p else "\n")
        w(f'{{"profile": {_dump(view.profile)}, "outcome": {_dump(view.outcome)}, "cells": [')
        for i, t in enumerate(view.tools):
            schema = "null" if t.model_schema is None else str(shapes.ref(t.model_schema))
            name = "null" if t.model_name is None else str(name_ref(t.model_name))
            refs = ",".join([str(finding_ref(f)) for f in t.findings])
            # the verdict is a name from mcp_matrix.core.verdicts (plain ASCII); everything else is encoded
            w(f'{"," if i else ""}\n[{t.index},"{t.verdict}",{name},{schema},[{refs}]]')
        w("\n]}")
    w("\n],\n")
    tables = (
        ("names", names),
        ("schemas", schemas),
        ("properties", properties),
        ("findings", findings),
        ("evidence", evidence),
    )
    for name, table in tables:
        w(f'"{name}": [')
        for i, text in enumerate(table.texts):
            w(("," if i else "") + "\n" + text)
        w("\n]" + (",\n" if name != "evidence" else "\n"))
    w("}\n")


def read_discovery(doc: Any, where: str = "discovery document") -> dict:
    """A discovery document of any readable version, in the version-1 shape: each profile's
    ``tools`` with ``tool``, ``index``, ``verdict``, ``model_name``, ``model_schema``,
    ``findings`` (with their evidence) and ``weakest_evidence`` in full."""
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        raise InputError(f"not an {FORMAT} document", where=where)
    version = doc.get("version")
    if version not in READABLE:
        raise InputError(
            f"discovery version {version!r} is not supported; expected one of {list(READABLE)}",
            where=where,
        )
    if version == 1:
        return dict(doc)
    try:
        names, schemas, evidence = doc["tools"], doc["schemas"], doc["evidence"]
        if version == 3:
            schemas = [whole_schema(s, doc["properties"], where) for s in schemas]
        model_names = doc["names"] if version == 3 else None
        findings = [
            {**f, "evidence": [resolve(evidence, e, f"{where}: evidence") for e in f["evidence"]]}
            for f in doc["findings"]
        ]
        profiles = []
        for p in doc["profiles"]:
            tools = []
            for row in p["cells"]:
                if not isinstance(row, list) or len(row) != len(COLUMNS):
                    raise ValueError(
                        f"{where}: a cell of {p.get('profile')!r} is not a row of {list(COLUMNS)}"
                    )
                c = dict(zip(COLUMNS, row))
                cell_findings = [resolve(findings, f, f"{where}: findings") for f in c["findings"]]
                tools.append(
                    {
                        "tool": resolve(names, c["index"], f"{where}: tools"),
                        "index": c["index"],
                        "verdict": c["verdict"],
                        "model_name": c["model_name"]
                        if model_names is None or c["model_name"] is None
                        else resolve(model_names, c["model_name"], f"{where}: names"),
                        "model_schema": None
                        if c["schema"] is None
                        else resolve(schemas, c["schema"], f"{where}: schemas"),
                        "findings": cell_findings,
                        "weakest_evidence": weakest(
                            e["level"] for f in cell_findings for e in f["evidence"]
                        ),
                    }
                )
            profiles.append({"profile": p["profile"], "outcome": p["outcome"], "tools": tools})
    except (KeyError, TypeError) as exc:
        raise InputError(
            f"malformed version-{version} discovery document (missing or wrong {exc})",
            where=where,
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), where=where) from None
    return {
        "format": FORMAT,
        "version": 1,
        "server": doc.get("server"),
        "snapshot_error": doc.get("snapshot_error"),
        "profiles": profiles,
    }


def whole_schema(schema: Any, properties: list, where: str) -> Any:
    """A version-3 schema entry with its property schemas put back (by number in ``properties``)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return schema
    return {
        k: {p: resolve(properties, n, f"{where}: properties") for p, n in v.items()}
        if k == "properties"
        else v
        for k, v in schema.items()
    }


__all__ = [
    "FORMAT",
    "READABLE",
    "VERSION",
    "SchemaTable",
    "read_discovery",
    "whole_schema",
    "write_discovery",
]
