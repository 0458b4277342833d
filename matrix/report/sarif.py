"""SARIF 2.1.0 writer: one result per finding (a cell that is not intact or visible).

One SARIF run per mcp-matrix run (a merged results file gives several). Rules are client
behaviours (``ruleId`` = the behaviour's name, or the verdict when no behaviour is involved).
A release-failing verdict is ``level: error``, anything else ``warning``. Each result points
at the run's snapshot: ``artifactLocation.uri`` is ``snapshot.json`` and the JSON pointer
(e.g. ``/tools/3/tool/inputSchema/anyOf``) is the logical location's ``fullyQualifiedName``
and ``properties.jsonPointer``. The snapshot is the run's ``snapshot`` event, or the file
``mcp-matrix snapshot -o snapshot.json`` writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import IO, Any

from matrix.advice import BY_BEHAVIOUR, BY_VERDICT
from matrix.report.grid import RELEASE_FAILING
from matrix.report.json_report import build_report, describe_target, primary_finding
from matrix.verdicts import MEANING

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
ARTIFACT = "snapshot.json"


def write_sarif(
    events: list[dict], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    stream.write(
        json.dumps(render_sarif(build_report(events, failing)), indent=2, ensure_ascii=False) + "\n"
    )


def render_sarif(doc: Mapping[str, Any]) -> dict:
    runs = doc["runs"] or [{"run_id": None}]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [_run(doc, r) for r in runs],
    }


def _run(doc: Mapping[str, Any], run: Mapping[str, Any]) -> dict:
    mine = [c for c in doc["cells"] if c["run"] == run.get("run_id") and c["finding"]]
    rules: dict[str, dict] = {}
    results = []
    for c in mine:
        rule_id = _rule_id(c)
        if rule_id not in rules:
            rules[rule_id] = _rule(rule_id, c, len(rules))
        results.append(_result(c, rule_id, rules[rule_id]["_index"]))
    server = run.get("server") or {}
    out: dict = {
        "tool": {
            "driver": {
                "name": "mcp-matrix",
                "version": str(run.get("mcp_matrix") or doc["generated_by"]["version"]),
                "rules": [{k: v for k, v in r.items() if k != "_index"} for r in rules.values()],
            }
        },
        "artifacts": [
            {
                "location": {"uri": ARTIFACT},
                "description": {
                    "text": "the run's snapshot: the initialize result and every tools/list page"
                },
            }
        ],
        "invocations": [_invocation(run)],
        "results": results,
        "properties": {
            "runId": run.get("run_id"),
            "server": dict(server),
            "target": describe_target(run.get("target")),
            "profiles": [p["name"] for p in doc["profiles"]],
            "releaseFailing": list(doc["release_failing"]),
        },
    }
    if run.get("run_id"):
        out["automationDetails"] = {"id": f"mcp-matrix/{run['run_id']}"}
    return out


def _invocation(run: Mapping[str, Any]) -> dict:
    inv: dict = {
        "executionSuccessful": bool(run.get("finished"))
        and bool(run.get("measured", True))
        and not run.get("interrupted")
    }
    if run.get("started_at"):
        inv["startTimeUtc"] = run["started_at"]
    if run.get("finished_at"):
        inv["endTimeUtc"] = run["finished_at"]
    notes = []
    if not run.get("finished"):
        notes.append("the run did not finish (no run-finished event): results are partial")
    if run.get("interrupted"):
        notes.append("the run was interrupted")
    if isinstance(run.get("error"), Mapping):
        notes.append(f"could not measure: {run['error'].get('message') or ''}")
    if notes:
        inv["toolExecutionNotifications"] = [
            {"message": {"text": n}, "level": "warning"} for n in notes
        ]
    return inv


def _rule_id(c: Mapping[str, Any]) -> str:
    if c["kind"] == "discovery":
        deciding = primary_finding(c)
        if deciding and deciding.get("behaviour"):
            return deciding["behaviour"]
    return c["behaviours"][0] if c["behaviours"] else c["verdict"]


def _rule(rule_id: str, c: Mapping[str, Any], index: int) -> dict:
    is_verdict = rule_id == c["verdict"] and rule_id not in BY_BEHAVIOUR
    if is_verdict:
        short = f"verdict {rule_id}: {MEANING.get(rule_id, '')}"
        help_text = BY_VERDICT.get(rule_id, "")
    else:
        short = f"client behaviour '{rule_id}'"
        help_text = BY_BEHAVIOUR.get(rule_id, "")
    rule: dict = {
        "_index": index,
        "id": rule_id,
        "name": "".join(part.capitalize() for part in rule_id.replace("_", "-").split("-"))
        or rule_id,
        "shortDescription": {"text": short},
        "properties": {"tags": ["mcp", "verdict" if is_verdict else "behaviour"]},
    }
    if help_text:
        rule["help"] = {"text": help_text}
    return rule


def _result(c: Mapping[str, Any], rule_id: str, rule_index: int) -> dict:
    label = c["tool"] + (f"::{c['case']}" if c.get("case") else "")
    text = f"{c['profile']}: {label} is {c['verdict']} ({c['meaning']})"
    if c["reason"]:
        text += f": {c['reason']}"
    if c["advice"]:
        text += f" Fix: {c['advice']}"
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": ARTIFACT, "index": 0}}}
    if c["pointer"]:
        location["logicalLocations"] = [
            {"name": c["tool"], "fullyQualifiedName": c["pointer"], "kind": "object"}
        ]
        location["properties"] = {"jsonPointer": c["pointer"]}
    result: dict = {
        "ruleId": rule_id,
        "ruleIndex": rule_index,
        "level": "error" if c["release_failing"] else "warning",
        "kind": "fail",
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {"mcpMatrixCell/v1": _fingerprint(c, rule_id)},
        "properties": {
            "profile": c["profile"],
            "tool": c["tool"],
            "case": c.get("case"),
            "verdict": c["verdict"],
            "blastRadius": c["blast_radius"],
            "behaviours": c["behaviours"],
            "weakestEvidence": c["weakest_evidence"],
            "evidence": c["evidence"],
            "jsonPointer": c["pointer"],
            "advice": c["advice"],
            "mutations": c["mutations"],
        },
    }
    related = [
        f
        for f in c["findings"]
        if f.get("snapshot_pointer") and f["snapshot_pointer"] != c["pointer"]
    ]
    if related:
        result["relatedLocations"] = [
            {
                "id": i + 1,
                "physicalLocation": {"artifactLocation": {"uri": ARTIFACT, "index": 0}},
                "logicalLocations": [
                    {"fullyQualifiedName": f["snapshot_pointer"], "kind": "object"}
                ],
                "message": {"text": f"{f['code']}: {f['message']}"},
            }
            for i, f in enumerate(related[:20])
        ]
    return result


def _fingerprint(c: Mapping[str, Any], rule_id: str) -> str:
    key = json.dumps(
        [c["profile"], c["tool"], c.get("case"), c["kind"], rule_id], ensure_ascii=False
    )
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


__all__ = ["ARTIFACT", "SCHEMA_URI", "render_sarif", "write_sarif"]
