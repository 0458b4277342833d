"""The ``discover --json`` document (``format: mcp-matrix.discovery``; docs/reports.md).

Version 4 stores every distinct value once and names it by number. A profile's ``cells`` is one
number a tool, in the snapshot's order, into ``cells`` at the end: each distinct row
``[verdict, model_name, schema, findings]`` (``columns``) once, though many profiles treat a tool
alike. A row names its entries in ``names``, ``schemas`` and ``findings`` (a finding is a row of
``finding_columns``, its evidence numbers into ``evidence``). A schema's sub-schemas are entries of
``schemas`` too (``mcp_matrix.core.schema_nodes``, shared with the results stream), so the variants of one tool
the profiles' rewrites make share every part they did not change (version 3 shared only the
property schemas of the top level: 28.4 MB for 5,000 tools through 48 profiles; version 4 is about
18). It is written as it is made (a profile a line, the tables after). ``read_discovery`` gives the
version-1 shape (every cell in full) for any version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import IO, Any

from mcp_matrix.core.content_table import ContentTable, resolve
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.evidence import Evidence, weakest
from mcp_matrix.core.infiles import document_version
from mcp_matrix.core.model import ClientView, Finding
from mcp_matrix.core.schema_nodes import SchemaNodes, SchemaReader

FORMAT = "mcp-matrix.discovery"
VERSION = 4
READABLE = (1, 2, 3, 4)
COLUMNS = ("index", "verdict", "model_name", "schema", "findings")  # a version-2/3 cell, in order
ROW = ("verdict", "model_name", "schema", "findings")  # a version-4 row of ``cells``
FINDING_COLUMNS = ("kind", "message", "pointer")  # a version-4 finding
# What findings share (most differ only in their message and pointer): a row of ``kinds``.
KIND_COLUMNS = ("code", "lost", "materiality", "blast_radius", "behaviour", "evidence", "culprit")
_dump = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=str
).encode  # one encoder, 100,000s of cells


class SchemaTable:
    """Model-facing schemas stored once, each with its property schemas by number in
    ``properties`` (where its ``properties`` is an object): a tool's variants share them.
    The version-3 form (the JSON report, version 2, stores its schemas so)."""

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
    """Write the version-4 document; ``tool_names`` are the snapshot's tools in order, and each
    view lists every tool in that order (``ToolView.index`` is its position)."""
    names, nodes = ContentTable(), SchemaNodes()
    rows: dict[tuple[str, int | None, int | None, tuple[int, ...]], int] = {}
    findings, kinds, evidence = ContentTable(), ContentTable(), ContentTable()
    name_refs: dict[str, int] = {}
    finding_refs: dict[Finding, int] = {}  # findings and evidence are frozen: equal is the same
    evidence_refs: dict[Evidence, int] = {}
    by_findings: dict[int, tuple[int, ...]] = {}  # a view's findings tuple, by identity
    held: list[Any] = []

    def finding_ref(f: Finding) -> int:
        known = finding_refs.get(f)
        if known is None:
            refs = []
            for e in f.evidence:
                n = evidence_refs.get(e)
                if n is None:
                    n = evidence_refs[e] = evidence.ref(e.to_json())
                refs.append(n)
            kind = [f.code, f.lost, f.materiality, f.blast_radius, f.behaviour, refs, f.culprit]
            known = finding_refs[f] = findings.ref([kinds.ref(kind), f.message, f.pointer])
        return known

    w = stream.write
    w("{\n")
    w(f'"format": {_dump(FORMAT)},\n"version": {VERSION},\n')
    w(f'"server": {_dump(server)},\n"snapshot_error": {_dump(snapshot_error)},\n')
    w(f'"tools": {_dump(tool_names)},\n"columns": {_dump(list(ROW))},\n')
    w(f'"finding_columns": {_dump(list(FINDING_COLUMNS))},\n')
    w(f'"kind_columns": {_dump(list(KIND_COLUMNS))},\n"profiles": [')
    for p, view in enumerate(views):
        cells = []
        for i, t in enumerate(view.tools):
            if t.index != i:
                raise ValueError(f"{view.profile}: tool {t.tool!r} is not at its index {t.index}")
            name = None
            if t.model_name is not None:
                name = name_refs.get(t.model_name)
                if name is None:
                    name = name_refs[t.model_name] = names.ref(t.model_name)
            fs = by_findings.get(id(t.findings))
            if fs is None:
                fs = by_findings[id(t.findings)] = tuple(map(finding_ref, t.findings))
                held.append(t.findings)
            schema = None if t.model_schema is None else nodes.ref(t.model_schema)
            key = (t.verdict, name, schema, fs)
            row = rows.get(key)
            cells.append(rows.setdefault(key, len(rows)) if row is None else row)
        w(",\n" if p else "\n")
        w(f'{{"profile": {_dump(view.profile)}, "outcome": {_dump(view.outcome)}, ')
        w(f'"cells": {_dump(cells)}}}')
    w("\n],\n")
    # the verdict is a name from mcp_matrix.core.verdicts (plain ASCII); everything else encoded
    texts = (f'["{v}",{_dump(n)},{_dump(s)},{_dump(list(fs))}]' for v, n, s, fs in rows)
    tables: tuple[tuple[str, Iterable[str]], ...] = (
        ("cells", texts),
        ("names", names.texts),
        ("schemas", nodes.table.texts),
        ("findings", findings.texts),
        ("kinds", kinds.texts),
        ("evidence", evidence.texts),
    )
    for i, (label, table) in enumerate(tables):
        w(f'"{label}": [')
        for j, text in enumerate(table):
            w(("," if j else "") + "\n" + text)
        w("\n]" + (",\n" if i < len(tables) - 1 else "\n"))
    w("}\n")


def read_discovery(doc: Any, where: str = "discovery document") -> dict:
    """A discovery document of any readable version, in the version-1 shape: each profile's
    ``tools`` with ``tool``, ``index``, ``verdict``, ``model_name``, ``model_schema``,
    ``findings`` (with their evidence) and ``weakest_evidence`` in full."""
    doc, version = document_version(doc, FORMAT, READABLE, "discovery", where)
    if version == 1:
        return dict(doc)
    try:
        profiles = _read_v4(doc, where) if version == 4 else _read_v2(doc, version, where)
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


def _cell(tool: str, index: int, verdict: Any, name: Any, schema: Any, findings: list) -> dict:
    """A cell in the version-1 shape."""
    return {
        "tool": tool,
        "index": index,
        "verdict": verdict,
        "model_name": name,
        "model_schema": schema,
        "findings": findings,
        "weakest_evidence": weakest(e["level"] for f in findings for e in f["evidence"]),
    }


def _read_v4(doc: Mapping, where: str) -> list[dict]:
    tools, names, evidence = doc["tools"], doc["names"], doc["evidence"]
    schemas = SchemaReader(doc["schemas"], f"{where}: schemas")
    kinds = read_kinds(doc["kinds"], KIND_COLUMNS, evidence, where)
    findings = []
    for row in doc["findings"]:
        if not isinstance(row, list) or len(row) != len(FINDING_COLUMNS):
            raise ValueError(f"{where}: a finding is not a row of {list(FINDING_COLUMNS)}")
        kind = resolve(kinds, row[0], f"{where}: kinds")
        f = {
            "code": kind["code"],
            "message": row[1],
            "pointer": row[2],
            "lost": kind["lost"],
            "materiality": kind["materiality"],
            "blast_radius": kind["blast_radius"],
            "behaviour": kind["behaviour"],
            "evidence": kind["evidence"],
        }
        if kind["culprit"]:  # as core.model.Finding.to_json writes it
            f["culprit"] = kind["culprit"]
        findings.append(f)
    rows = []
    for row in doc["cells"]:
        if not isinstance(row, list) or len(row) != len(ROW):
            raise ValueError(f"{where}: a cell is not a row of {list(ROW)}")
        verdict, name, schema, refs = row
        rows.append(
            (
                verdict,
                None if name is None else resolve(names, name, f"{where}: names"),
                None if schema is None else schemas.whole(schema),
                [resolve(findings, f, f"{where}: findings") for f in refs],
            )
        )
    profiles = []
    for p in doc["profiles"]:
        cells = p["cells"]
        if not isinstance(cells, list) or len(cells) != len(tools):
            raise ValueError(f"{where}: {p.get('profile')!r} has not one cell per tool")
        out = [
            _cell(tools[i], i, *resolve(rows, n, f"{where}: cells")) for i, n in enumerate(cells)
        ]
        profiles.append({"profile": p["profile"], "outcome": p["outcome"], "tools": out})
    return profiles


def read_kinds(rows: Any, columns: tuple[str, ...], evidence: list, where: str) -> list[dict]:
    """A ``kinds`` table (what findings share, rows of ``columns``) with its evidence in full
    (this document's version 4, the JSON report's version 3)."""
    kinds = []
    for row in rows:
        if not isinstance(row, list) or len(row) != len(columns):
            raise ValueError(f"{where}: a kind is not a row of {list(columns)}")
        kind = dict(zip(columns, row))
        kind["evidence"] = [resolve(evidence, e, f"{where}: evidence") for e in kind["evidence"]]
        kinds.append(kind)
    return kinds


def _read_v2(doc: Mapping, version: int, where: str) -> list[dict]:
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
            tools.append(
                _cell(
                    resolve(names, c["index"], f"{where}: tools"),
                    c["index"],
                    c["verdict"],
                    c["model_name"]
                    if model_names is None or c["model_name"] is None
                    else resolve(model_names, c["model_name"], f"{where}: names"),
                    None
                    if c["schema"] is None
                    else resolve(schemas, c["schema"], f"{where}: schemas"),
                    [resolve(findings, f, f"{where}: findings") for f in c["findings"]],
                )
            )
        profiles.append({"profile": p["profile"], "outcome": p["outcome"], "tools": tools})
    return profiles


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
    "SchemaNodes",
    "SchemaTable",
    "read_discovery",
    "read_kinds",
    "whole_schema",
    "write_discovery",
]
