"""SARIF 2.1.0 writer, shaped for GitHub code scanning (docs/reports.md, docs/ci.md).

- **One SARIF run per file**, whatever was merged: GitHub rejects a file with more than 20 runs
  and, since 2025, several runs of one tool and category. Each mcp-matrix run is an invocation.
- **One result per (tool, case, rule, verdict)**, naming every client it applies to: a
  5,000-tool server through 20 clients stays far below GitHub's 25,000 results per run; if it
  does not, the most severe are kept and a notification says how many were left out.
- **Locations in a file the workflow writes**: the run's snapshot, written next to the SARIF
  file (``matrix.sarif`` -> ``matrix.snapshot.json``) by ``write_sarif_file``, with the line
  of each tool's ``name`` as ``region.startLine``; the JSON pointer into it is the logical
  location and ``properties.jsonPointer``. Several distinct snapshots (merged servers) are
  ``matrix.snapshot.json``, ``matrix.snapshot-2.json``, ...
- Rules are client behaviours (``ruleId`` = the behaviour, or the verdict when no behaviour is
  involved); a release-failing verdict is ``level: error``, anything else ``warning``.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from matrix.advice import BY_BEHAVIOUR, BY_VERDICT
from matrix.events import Event, RunStarted, SnapshotTaken, typed_events
from matrix.report.grid import RELEASE_FAILING
from matrix.report.json_report import build_report, describe_target, primary_finding
from matrix.verdicts import MEANING

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
ARTIFACT = "mcp-matrix.snapshot.json"  # the snapshot's name when the SARIF goes to a stream
MAX_RESULTS = 25_000  # GitHub's hard limit per run
MAX_RELATED = 20


class Snapshots:
    """The distinct snapshots of a results stream, each as the file text the SARIF points into
    (exactly what ``mcp-matrix snapshot -o`` writes) and the line of each tool in it."""

    def __init__(self, events: Iterable[Event], first_uri: str = ARTIFACT) -> None:
        self.texts: list[str] = []
        self.lines: list[list[int]] = []
        self.uris: list[str] = []
        self.by_run: dict[Any, int] = {}
        keys: list[str] = []
        run_id = None
        for e in events:
            if isinstance(e, RunStarted):
                run_id = e.run_id
            elif isinstance(e, SnapshotTaken):
                # Shards of one server took the same tools at different times: one file serves them all.
                same = json.dumps(
                    [e.snapshot.get("serverInfo"), e.snapshot.get("tools")],
                    sort_keys=True,
                    default=str,
                )
                if same not in keys:
                    keys.append(same)
                    text, lines = snapshot_text(e.snapshot)
                    self.texts.append(text)
                    self.lines.append(lines)
                    self.uris.append(_nth_uri(first_uri, len(self.texts)))
                self.by_run[run_id] = keys.index(same)

    def write(self, directory: Path) -> None:
        for uri, text in zip(self.uris, self.texts):
            path = directory / Path(uri).name
            path.write_text(text, encoding="utf-8", errors="backslashreplace", newline="\n")


def _nth_uri(first: str, n: int) -> str:
    if n == 1:
        return first
    stem, dot, suffix = first.rpartition(".")
    return f"{stem}-{n}.{suffix}" if dot else f"{first}-{n}"


def snapshot_text(doc: Mapping[str, Any]) -> tuple[str, list[int]]:
    """``json.dumps(doc, indent=2)`` plus a newline, and for each ``tools[i]`` the 1-based line
    of its tool's ``"name"`` (of the entry itself when the tool has none)."""
    tools = doc.get("tools") if isinstance(doc.get("tools"), list) else []
    if not tools:
        return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n", []
    token = f"__mcp_matrix_tools_{uuid.uuid4().hex}__"
    head = json.dumps({**doc, "tools": token}, indent=2, ensure_ascii=False, default=str)
    before, after = head.split(json.dumps(token), 1)
    line = before.count("\n") + 2  # the line after '"tools": ['
    items, lines = [], []
    for entry in tools:
        item = json.dumps(entry, indent=2, ensure_ascii=False, default=str).replace("\n", "\n    ")
        offset = next(
            (i for i, text in enumerate(item.split("\n")) if text.startswith('        "name":')), 0
        )
        lines.append(line + offset)
        items.append("    " + item)
        line += item.count("\n") + 1
    return before + "[\n" + ",\n".join(items) + "\n  ]" + after + "\n", lines


def write_sarif(
    events: Iterable[Event], stream: IO[str], failing: Iterable[str] = RELEASE_FAILING
) -> None:
    """The SARIF log on a stream; its locations name ``mcp-matrix.snapshot.json`` (not written)."""
    events = typed_events(events)
    snapshots = Snapshots(events)
    log = render_sarif(build_report(events, failing), snapshots, written=False)
    stream.write(json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def write_sarif_file(
    events: Iterable[Event], path: Path, failing: Iterable[str] = RELEASE_FAILING
) -> None:
    """The SARIF log at ``path`` and the snapshot(s) its locations point into, beside it."""
    events = typed_events(events)
    relative = Path(os.path.relpath(path.parent.resolve(), Path.cwd()))
    first = (relative / f"{path.stem}.snapshot.json").as_posix()
    if first.startswith(
        "../"
    ):  # outside the working directory (the repository): name it absolutely
        first = (path.parent.resolve() / f"{path.stem}.snapshot.json").as_posix()
    snapshots = Snapshots(events, first_uri=first.removeprefix("./"))
    snapshots.write(path.parent)
    log = render_sarif(build_report(events, failing), snapshots, written=True)
    with path.open("w", encoding="utf-8", errors="backslashreplace", newline="\n") as handle:
        handle.write(json.dumps(log, indent=2, ensure_ascii=False) + "\n")


def render_sarif(
    doc: Mapping[str, Any], snapshots: Snapshots | None = None, written: bool = True
) -> dict:
    snapshots = snapshots or Snapshots(())
    runs = doc["runs"] or [{"run_id": None}]
    rules: dict[str, dict] = {}
    grouped: dict[tuple, dict] = {}
    for c in doc["cells"]:
        if not c["finding"]:
            continue
        rule_id = _rule_id(c)
        if rule_id not in rules:
            rules[rule_id] = _rule(rule_id, c, len(rules))
        artifact = snapshots.by_run.get(c["run"])
        key = (artifact, c["tool"], c.get("case"), c["kind"], rule_id, c["verdict"], c["pointer"])
        group = grouped.setdefault(
            key, {"cell": c, "profiles": [], "rule": rule_id, "artifact": artifact}
        )
        if c["profile"] not in group["profiles"]:
            group["profiles"].append(c["profile"])
    ordered = sorted(
        grouped.values(), key=lambda g: (not g["cell"]["release_failing"], -g["cell"]["severity"])
    )
    kept = ordered[:MAX_RESULTS]
    notes = []
    if len(kept) < len(ordered):
        notes.append(
            f"{len(ordered) - len(kept)} results left out: GitHub accepts at most {MAX_RESULTS} per run "
            "(the most severe are kept; the JSON and HTML reports have every cell)"
        )
    if not written and snapshots.texts:
        notes.append(
            f"the locations point into {ARTIFACT}, which is written only with `-o FILE` "
            "(then beside it, as FILE's stem + .snapshot.json)"
        )
    server = runs[0].get("server") or {}
    name = str(server.get("name") or "server") if isinstance(server, Mapping) else "server"
    run: dict = {
        "tool": {
            "driver": {
                "name": "mcp-matrix",
                "version": str(runs[0].get("mcp_matrix") or doc["generated_by"]["version"]),
                "informationUri": "https://modelcontextprotocol.io/",
                "rules": [{k: v for k, v in r.items() if k != "_index"} for r in rules.values()],
            }
        },
        "automationDetails": {"id": f"mcp-matrix/{_category(name)}/"},
        "artifacts": [
            {
                "location": {"uri": uri},
                "description": {
                    "text": "the run's snapshot: the initialize result and every tools/list page"
                },
            }
            for uri in snapshots.uris
        ],
        "invocations": [_invocation(r, notes if i == 0 else []) for i, r in enumerate(runs)],
        "results": [_result(g, rules[g["rule"]]["_index"], snapshots, name) for g in kept],
        "properties": {
            "runIds": [r.get("run_id") for r in runs],
            "servers": [dict(r.get("server") or {}) for r in runs],
            "targets": [describe_target(r.get("target")) for r in runs],
            "profiles": [p["name"] for p in doc["profiles"]],
            "releaseFailing": list(doc["release_failing"]),
        },
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def _category(name: str) -> str:
    """A server name fit for a code-scanning category (one per server in a repository)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name).strip("-")
    return safe[:60] or "server"


def _invocation(run: Mapping[str, Any], extra: list[str]) -> dict:
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
    notes += extra
    if notes:
        inv["toolExecutionNotifications"] = [
            {"message": {"text": n}, "level": "warning"} for n in notes
        ]
    inv["properties"] = {"runId": run.get("run_id"), "target": describe_target(run.get("target"))}
    return inv


def _rule_id(c: Mapping[str, Any]) -> str:
    if c["kind"] == "discovery":
        deciding = primary_finding(c["findings"], c["verdict"])
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


def _location(uri_index: int | None, snapshots: Snapshots, pointer: str | None, tool: str) -> dict:
    uri_index = 0 if uri_index is None and snapshots.uris else uri_index
    physical: dict = {"artifactLocation": {"uri": ARTIFACT}}
    if uri_index is not None and uri_index < len(snapshots.uris):
        physical = {"artifactLocation": {"uri": snapshots.uris[uri_index], "index": uri_index}}
        line = _tool_line(pointer, snapshots.lines[uri_index])
        if line:
            physical["region"] = {"startLine": line}
    location: dict = {"physicalLocation": physical}
    if pointer:
        location["logicalLocations"] = [
            {"name": tool, "fullyQualifiedName": pointer, "kind": "object"}
        ]
        location["properties"] = {"jsonPointer": pointer}
    return location


def _tool_line(pointer: str | None, lines: list[int]) -> int | None:
    parts = (pointer or "").split("/")
    if len(parts) > 2 and parts[1] == "tools" and parts[2].isdigit() and int(parts[2]) < len(lines):
        return lines[int(parts[2])]
    return None


def _result(group: Mapping[str, Any], rule_index: int, snapshots: Snapshots, server: str) -> dict:
    c, profiles = group["cell"], group["profiles"]
    label = c["tool"] + (f"::{c['case']}" if c.get("case") else "")
    clients = ", ".join(profiles)
    text = f"{label} is {c['verdict']} ({c['meaning']}) in {len(profiles)} client{'s' if len(profiles) > 1 else ''}: {clients}"
    if c["reason"]:
        text += f". {c['reason']}"
    if c["advice"]:
        text += f" Fix: {c['advice']}"
    result: dict = {
        "ruleId": group["rule"],
        "ruleIndex": rule_index,
        "level": "error" if c["release_failing"] else "warning",
        "kind": "fail",
        "message": {"text": text},
        "locations": [_location(group["artifact"], snapshots, c["pointer"], c["tool"])],
        "partialFingerprints": {"mcpMatrixCell/v2": _fingerprint(c, group["rule"], server)},
        "properties": {
            "profiles": list(profiles),
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
                **_location(group["artifact"], snapshots, f["snapshot_pointer"], c["tool"]),
                "message": {"text": f"{f['code']}: {f['message']}"},
            }
            for i, f in enumerate(related[:MAX_RELATED])
        ]
        for r in result["relatedLocations"]:
            r.pop("properties", None)
    return result


def _fingerprint(c: Mapping[str, Any], rule_id: str, server: str) -> str:
    """Stable across runs and client sets: the alert is the tool's, whichever clients it hits."""
    key = json.dumps([server, c["tool"], c.get("case"), c["kind"], rule_id], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


__all__ = [
    "ARTIFACT",
    "MAX_RESULTS",
    "SCHEMA_URI",
    "Snapshots",
    "render_sarif",
    "snapshot_text",
    "write_sarif",
    "write_sarif_file",
]
