"""The ``discover --json`` document (``format: mcp-matrix.discovery``; docs/reports.md).

Version 2 stores every distinct model-facing schema, finding and evidence once, in the
tables ``schemas``, ``findings`` and ``evidence`` at the end of the document; each cell is a
row ``[index, verdict, model_name, schema, findings]`` (``columns``) naming its entries by number; the tool's name is ``tools[index]``. It is written as it is
made (one cell a line), so a 5,000-tool server through 20 profiles is a few MB, not 160.
``read_discovery`` gives the version-1 shape (every cell in full) for either version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import IO, Any

from matrix.content_table import ContentTable, resolve
from matrix.errors import InputError
from matrix.evidence import Evidence, weakest
from matrix.model import ClientView, Finding

FORMAT = "mcp-matrix.discovery"
VERSION = 2
READABLE = (1, 2)
COLUMNS = ("index", "verdict", "model_name", "schema", "findings")  # a version-2 cell, in order


_string = json.encoder.encode_basestring  # type: ignore[attr-defined]  # JSON string literal, no ASCII escaping
_dump = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), default=str
).encode  # one encoder, 100,000s of cells


def write_discovery(
    stream: IO[str],
    views: Iterable[ClientView],
    tool_names: list[str],
    server: Any,
    snapshot_error: Any,
) -> None:
    """Write the version-2 document; ``tool_names`` are the snapshot's tools in order."""
    schemas, findings, evidence = ContentTable(), ContentTable(), ContentTable()
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

    w = stream.write
    w("{\n")
    w(f'"format": {_dump(FORMAT)},\n"version": {VERSION},\n')
    w(f'"server": {_dump(server)},\n"snapshot_error": {_dump(snapshot_error)},\n')
    w(f'"tools": {_dump(tool_names)},\n"columns": {_dump(list(COLUMNS))},\n"profiles": [')
    for p, view in enumerate(views):
        w(",\n" if p else "\n")
        w(f'{{"profile": {_dump(view.profile)}, "outcome": {_dump(view.outcome)}, "cells": [')
        for i, t in enumerate(view.tools):
            schema = "null" if t.model_schema is None else str(schemas.ref(t.model_schema))
            name = "null" if t.model_name is None else _string(t.model_name)
            refs = ",".join([str(finding_ref(f)) for f in t.findings])
            # the verdict is a name from matrix.verdicts (plain ASCII); everything else is encoded
            w(f'{"," if i else ""}\n[{t.index},"{t.verdict}",{name},{schema},[{refs}]]')
        w("\n]}")
    w("\n],\n")
    for name, table in (("schemas", schemas), ("findings", findings), ("evidence", evidence)):
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
                        "model_name": c["model_name"],
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
            f"malformed version-2 discovery document (missing or wrong {exc})", where=where
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


__all__ = ["FORMAT", "READABLE", "VERSION", "read_discovery", "write_discovery"]
