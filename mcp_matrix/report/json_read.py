"""The JSON report read back (``mcp_matrix.report.json_report`` writes it): a document of any
readable version (1, 2 or 3) in the version-1 shape, every cell in full, as the typed model's
``to_json()`` gives it (``build_report``); a malformed table is an input error naming the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from mcp_matrix.core.content_table import resolve
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.infiles import document_version
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.verdicts import MEANING, SYMBOL, is_finding, rank
from mcp_matrix.report.discovery_doc import read_kinds, whole_schema
from mcp_matrix.report.document import FORMAT
from mcp_matrix.report.json_report import (
    CALL_KEYS,
    COLUMNS,
    DETAIL_COLUMNS,
    FINDING_COLUMNS,
    KIND_COLUMNS,
    READABLE,
)
from mcp_matrix.report.places import call_pointer, under_tool
from mcp_matrix.report.reasons import discovery_reason, primary_finding

V2_COLUMNS = (*COLUMNS[:6], "pointer", *COLUMNS[6:])  # version 2: the pointer, in texts


def read_report(doc: object, where: str = "report") -> dict:
    """A report document of any readable version in the version-1 shape: ``cells`` with every
    key in full, ``grid.rows`` as ``{"tool", "cells": [verdict or null]}``."""
    doc, version = document_version(doc, FORMAT, READABLE, "report", where)
    if version == 1:
        return dict(doc)
    try:
        return _expand(doc, where)
    except (KeyError, TypeError, IndexError) as exc:
        raise InputError(
            f"malformed version-{version} report (missing or wrong {exc})", where=where
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), where=where) from None


def _expand(doc: Mapping[str, Any], where: str) -> dict:
    texts, evidence = _entries(doc["texts"]), _entries(doc["evidence"])
    properties = _entries(doc["properties"])
    schemas = [whole_schema(s, properties, f"{where}: properties") for s in doc["schemas"]]
    if doc["version"] == 2:
        findings = [
            {**f, "evidence": [resolve(evidence, x, f"{where}: evidence") for x in f["evidence"]]}
            for f in _entries(doc["findings"])
        ]
        columns: tuple[str, ...] = V2_COLUMNS
    else:
        findings = _v3_findings(doc, evidence, where)
        columns = COLUMNS
    legend = {x["verdict"]: x for x in doc["legend"]}
    verdicts = [x["verdict"] for x in doc["legend"]]
    runs, profiles, tools = doc["runs"], doc["grid"]["profiles"], doc["tools"]

    def ev_pair(pair: Sequence) -> dict:
        e = resolve(evidence, pair[1], f"{where}: evidence")
        return {
            "behaviour": _s(pair[0]),
            "level": _s(e.get("level")),
            "source": _s(e.get("source")),
            "note": _s(e.get("note")),
        }

    details = []
    for d in _entries(doc["details"]):
        if isinstance(d, list):  # version 3: a discovery detail is a row
            if len(d) != len(DETAIL_COLUMNS):
                raise ValueError(f"{where}: a detail is not a row of {list(DETAIL_COLUMNS)}")
            d = {"kind": "discovery", **dict(zip(DETAIL_COLUMNS, d))}
        verdict = d["verdict"]
        shown = legend.get(verdict, {})
        call = d["kind"] == "call"
        found = [resolve(findings, f, f"{where}: findings") for f in d["findings"]]
        if call:
            reason = resolve(texts, d["reason"], f"{where}: texts")
            behaviours = d["behaviours"]
            cited = _dedupe_evidence(ev_pair(p) for p in d["evidence"])
            mutations = d.get("mutations") or ()
            place = mutations[0]["pointer"] if mutations else None  # the pointer follows
        else:  # a discovery cell's reason, behaviours and evidence are its findings'
            said = [_FindingEntrySaid(f["message"], f.get("lost")) for f in found]
            reason = discovery_reason(verdict, said)
            behaviours = list(dict.fromkeys(f["behaviour"] for f in found if f["behaviour"]))
            cited = _dedupe_evidence(
                {**e, "behaviour": f["behaviour"]} for f in found for e in f["evidence"]
            )
            primary = primary_finding(said, verdict)
            place = None if primary is None else found[[id(x) for x in said].index(id(primary))]
        details.append(
            {
                "kind": d["kind"],
                "head": {  # the keys between a cell's tool and its release_failing
                    "case": d.get("case") if call else None,
                    "verdict": verdict,
                    "symbol": shown.get("symbol", SYMBOL.get(verdict, "?")),
                    "meaning": shown.get("meaning", MEANING.get(verdict, "")),
                    "severity": rank(verdict),
                    "finding": is_finding(verdict),
                },
                "tail": {
                    "reason": reason,
                    "blast_radius": d["blast_radius"],
                    "behaviours": behaviours,
                    "evidence": cited,
                    "weakest_evidence": d["weakest_evidence"],
                },
                "advice": None
                if d["advice"] is None
                else resolve(texts, d["advice"], f"{where}: texts"),
                "findings": found,
                "call": {
                    k: d.get(k, _CALL_DEFAULTS[k]) if call else _CALL_DEFAULTS[k] for k in CALL_KEYS
                },
                "place": place,  # version 3: the cell's pointer, from its index
            }
        )
    cells = []
    for row in _entries(doc["cells"]):
        if not isinstance(row, list) or len(row) != len(columns):
            raise ValueError(f"{where}: a cell is not a row of {list(columns)}")
        c = dict(zip(columns, row))
        index = c["index"]
        d = resolve(details, c["detail"], f"{where}: details")
        cell = {
            "kind": d["kind"],
            "run": resolve(runs, c["run"], f"{where}: runs")["run_id"],
            "profile": resolve(profiles, c["profile"], f"{where}: profiles"),
            "tool": resolve(tools, c["tool"], f"{where}: tools"),
        }
        cell.update(d["head"])
        cell["release_failing"] = bool(c["release_failing"])
        cell.update(d["tail"])
        if "pointer" in c:  # version 2
            at = c["pointer"]
            cell["pointer"] = None if at is None else resolve(texts, at, f"{where}: texts")
        else:
            cell["pointer"] = _pointer(d, index)
        cell["advice"] = d["advice"]
        cell["findings"] = [
            f
            if f["snapshot_pointer"] is not None
            else {**f, "snapshot_pointer": under_tool(index, _s(f["pointer"]))}
            for f in d["findings"]
        ]
        name, schema = c["model_name"], c["schema"]
        cell["model_name"] = None if name is None else resolve(texts, name, f"{where}: texts")
        cell["model_schema"] = (
            None if schema is None else resolve(schemas, schema, f"{where}: schemas")
        )
        cell.update(d["call"])
        cells.append(cell)
    out = {k: doc[k] for k in _KEPT if k in doc}
    out["version"] = 1
    out["grid"] = {
        "profiles": list(profiles),
        "rows": [
            {
                "tool": t,
                "cells": [
                    None if v is None else resolve(verdicts, v, f"{where}: legend") for v in row
                ],
            }
            for t, row in zip(tools, doc["grid"]["rows"])
        ],
    }
    out["cells"] = cells
    return out


def _pointer(detail: Mapping[str, Any], index: int | None) -> str | None:
    """A version-3 cell's pointer into the snapshot, as the writer's model made it: a call's at
    the property its first mutation touched; a discovery cell's at its deciding finding (the
    culprit tool's place, or under its own tool), else at its tool."""
    place = detail["place"]
    if detail["kind"] == "call":
        return call_pointer(index, place)
    if place is None:
        return under_tool(index, "")
    return place["snapshot_pointer"] or under_tool(index, _s(place["pointer"]))


def _v3_findings(doc: Mapping[str, Any], evidence: list, where: str) -> list[dict]:
    """Version-3 findings (rows naming their kind) as version-2 entries, evidence in full."""
    kinds = read_kinds(_entries(doc["kinds"]), KIND_COLUMNS, evidence, where)
    findings = []
    for row in _entries(doc["findings"]):
        if not isinstance(row, list) or len(row) != len(FINDING_COLUMNS):
            raise ValueError(f"{where}: a finding is not a row of {list(FINDING_COLUMNS)}")
        kind_ref, message, pointer, snapshot_pointer = row
        kind = resolve(kinds, kind_ref, f"{where}: kinds")
        findings.append(
            {
                "code": kind["code"],
                "message": message,
                "pointer": pointer,
                "snapshot_pointer": snapshot_pointer,
                "lost": kind["lost"],
                "blast_radius": kind["blast_radius"],
                "behaviour": kind["behaviour"],
                "evidence": kind["evidence"],
            }
        )
    return findings


_CALL_DEFAULTS: dict[str, JSON] = {
    "origin": None,
    "expect": None,
    "mutations": [],
    "answer": None,
    "stale": False,
    "sometimes": [],
    "frequency": None,
    "variants": [],
}
_KEPT = (
    "format",
    "version",
    "generated_by",
    "mcp_matrix",
    "server",
    "complete",
    "runs",
    "profiles",
    "tools",
    "release_failing",
    "legend",
    "grid",
    "cells",
    "skipped",
    "profile_errors",
    "counts",
)


def _entries(table: object) -> list:
    if not isinstance(table, list):
        raise TypeError("a table is not a list")
    return table


class _FindingEntrySaid(NamedTuple):
    """A finding entry's message and loss, as ``discovery_reason`` reads a finding."""

    message: str
    lost: bool | None


def _dedupe_evidence(items: Iterable[Mapping[str, Any]]) -> list[dict]:
    out: dict[tuple, dict] = {}
    for ev in items:
        item = {
            "behaviour": _s(ev.get("behaviour")),
            "level": _s(ev.get("level")),
            "source": _s(ev.get("source")),
            "note": _s(ev.get("note")),
        }
        out.setdefault(tuple(item.values()), item)
    return list(out.values())


def _s(value: object) -> str:
    return "" if value is None else str(value)


__all__ = ["read_report"]
