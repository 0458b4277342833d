"""The recorded-call corpora and their replay against each server version.

Four JSON Lines files in ``corpora/``, one call per line::

    {"id": "r-0001", "tool": "update_account", "arguments": {...},
     "timestamp": "2026-09-14T08:02:11Z", "result": {...}}

``result`` (optional) is the recorded ``CallToolResult`` in wire form (``content``,
``structuredContent`` when present, ``isError``) as the server it was recorded against
answered. ``transcript.jsonl`` records also carry ``transcript`` and ``turn``.

Replay protocol (what the expected outcomes in ``corpora/expected.json`` and
``corpora/README.md`` assume): the calls of one file are sent in file order to a
freshly seeded server of the version under test; ``transcript.jsonl`` is replayed one
transcript at a time, each against its own freshly seeded server. A call *succeeds*
when its result has ``isError: false``. A replayed call *diverges* from its recording
when one is an error and the other not, or both succeed with different
``structuredContent`` (two errors count as the same outcome whatever their wording).

``python -m matrix_servers.billing.recorded --record`` re-records the results and
rewrites ``expected.json``; ``--check`` exits 1 when either is out of date; with neither
it prints the Markdown tables used in the README.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types

from .backend import BillingBackend
from .schemas import VERSIONS, Version, tool_definitions
from .server import (
    ALIAS_CONFLICTS,
    ALIAS_USES,
    CUST_PREFIX_REJECTIONS,
    CUSTOMER_FALLBACKS,
    call_tool,
)

CORPORA_DIR = Path(__file__).resolve().parent / "corpora"
EXPECTED_PATH = CORPORA_DIR / "expected.json"

# corpus -> the version its recorded results come from (None: no results recorded).
CORPORA: dict[str, Version] = {
    "live": "1",
    "retry": "1",
    "transcript": "1",
    "hybrid": "2",
}
# Dead-letter jobs were queued, never answered: they carry no recorded result.
UNANSWERED: frozenset[str] = frozenset({"retry"})
METRIC_KEYS = (ALIAS_USES, ALIAS_CONFLICTS, CUST_PREFIX_REJECTIONS, CUSTOMER_FALLBACKS)

Record = dict[str, Any]
# (tool name, arguments) -> wire result
Caller = Callable[[str, dict[str, Any]], dict[str, Any]]


def corpus_path(name: str) -> Path:
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}; expected one of {tuple(CORPORA)}")
    return CORPORA_DIR / f"{name}.jsonl"


def load(name: str) -> list[Record]:
    """The records of one corpus, in file order."""
    with corpus_path(name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def wire_result(result: types.CallToolResult) -> dict[str, Any]:
    """A ``CallToolResult`` as recorded: content, structuredContent (if any), isError."""
    dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    wire: dict[str, Any] = {"content": dumped["content"]}
    if "structuredContent" in dumped:
        wire["structuredContent"] = dumped["structuredContent"]
    wire["isError"] = bool(dumped.get("isError", False))
    return wire


def groups(name: str, records: Sequence[Record]) -> list[list[Record]]:
    """The runs of the replay protocol: one per transcript, else the whole file."""
    if name != "transcript":
        return [list(records)]
    by_transcript: dict[str, list[Record]] = {}
    for record in records:
        by_transcript.setdefault(record["transcript"], []).append(record)
    return list(by_transcript.values())


def same_outcome(recorded: dict[str, Any], replayed: dict[str, Any]) -> bool:
    if recorded.get("isError", False) or replayed.get("isError", False):
        return bool(recorded.get("isError", False)) == bool(replayed.get("isError", False))
    return recorded.get("structuredContent") == replayed.get("structuredContent")


@dataclass
class Replay:
    """One corpus replayed against one version."""

    corpus: str
    version: str
    results: list[dict[str, Any]]  # wire results, in file order
    metrics: dict[str, int]  # the migration counters, summed over the runs

    def summary(self, records: Sequence[Record]) -> dict[str, Any]:
        ok = sum(1 for r in self.results if not r["isError"])
        summary: dict[str, Any] = {"ok": ok, "error": len(self.results) - ok}
        recorded = [r.get("result") for r in records]
        if all(r is not None for r in recorded):
            diverged = [
                record
                for record, result in zip(records, self.results)
                if not same_outcome(record["result"], result)
            ]
            summary["diverged"] = len(diverged)
            if self.corpus == "transcript":
                first: dict[str, int | None] = {r["transcript"]: None for r in records}
                for record in diverged:
                    if first[record["transcript"]] is None:
                        first[record["transcript"]] = record["turn"]
                summary["first_divergence"] = first
            else:
                summary["first_divergence"] = diverged[0]["id"] if diverged else None
        summary["metrics"] = dict(self.metrics)
        return summary


def replay_runs(
    name: str, records: Sequence[Record], runs: Iterable[tuple[Caller, Callable[[], dict]]]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Replay with one (caller, read-metrics) pair per run of :func:`groups`."""
    results: list[dict[str, Any]] = []
    metrics = dict.fromkeys(METRIC_KEYS, 0)
    for group, (call, read_metrics) in zip(groups(name, records), runs, strict=True):
        for record in group:
            results.append(call(record["tool"], record["arguments"]))
        after = read_metrics()
        for key in METRIC_KEYS:
            metrics[key] += after[key]
    return results, metrics


def _in_process_runs(version: Version, count: int) -> Iterable[tuple[Caller, Callable[[], dict]]]:
    tools = {t["name"]: t for t in tool_definitions(version)}
    for _ in range(count):
        backend = BillingBackend(":memory:")
        try:

            def call(tool: str, arguments: dict[str, Any], backend=backend) -> dict[str, Any]:
                return wire_result(call_tool(version, tools, backend, tool, arguments))

            def read_metrics(backend=backend) -> dict[str, int]:
                counters = backend.counters()
                return {key: counters.get(key, 0) for key in METRIC_KEYS}

            yield call, read_metrics
        finally:
            backend.close()


def replay_in_process(
    name: str, version: Version, records: Sequence[Record] | None = None
) -> Replay:
    """Replay a corpus against freshly seeded in-memory servers of ``version``."""
    records = load(name) if records is None else records
    runs = _in_process_runs(version, len(groups(name, records)))
    results, metrics = replay_runs(name, records, runs)
    return Replay(name, version, results, metrics)


def expected_outcomes() -> dict[str, Any]:
    """Every corpus against every version, as stored in ``expected.json``."""
    corpora: dict[str, Any] = {}
    for name, recorded_against in CORPORA.items():
        records = load(name)
        entry: dict[str, Any] = {
            "file": f"{name}.jsonl",
            "calls": len(records),
            "recorded_against": None if name in UNANSWERED else recorded_against,
            "versions": {},
        }
        if name == "transcript":
            entry["transcripts"] = len(groups(name, records))
        for version in VERSIONS:
            entry["versions"][version] = replay_in_process(name, version, records).summary(records)
        corpora[name] = entry
    return {
        "protocol": (
            "Each file in order against a freshly seeded server; transcript.jsonl one "
            "transcript at a time, each against its own freshly seeded server. ok: "
            "isError false. diverged: calls whose outcome differs from the recorded result "
            "(error vs success, or different structuredContent)."
        ),
        "corpora": corpora,
    }


def record_results(name: str) -> list[Record]:
    """The corpus with each ``result`` re-recorded against its recording version."""
    records = load(name)
    if name in UNANSWERED:
        return [{k: v for k, v in r.items() if k != "result"} for r in records]
    replay = replay_in_process(name, CORPORA[name], records)
    return [{**record, "result": result} for record, result in zip(records, replay.results)]


def dump_jsonl(records: Sequence[Record]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def dump_expected(expected: dict[str, Any]) -> str:
    return json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def markdown_tables(expected: dict[str, Any]) -> str:
    """The outcome table (and transcript divergence table) of the README."""
    lines = [
        "| file | calls | v1 ok/error | v2 ok/error | v3 ok/error | v2tool ok/error |",
        "|---|---|---|---|---|---|",
    ]
    for entry in expected["corpora"].values():
        cells = [f"{entry['versions'][v]['ok']}/{entry['versions'][v]['error']}" for v in VERSIONS]
        lines.append(f"| {entry['file']} | {entry['calls']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| file | counter | v1 | v2 | v3 | v2tool |",
        "|---|---|---|---|---|---|",
    ]
    for entry in expected["corpora"].values():
        for key in METRIC_KEYS:
            cells = [str(entry["versions"][v]["metrics"][key]) for v in VERSIONS]
            lines.append(f"| {entry['file']} | {key} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| diverged calls | v1 | v2 | v3 | v2tool |",
        "|---|---|---|---|---|",
    ]
    for entry in expected["corpora"].values():
        if "diverged" not in entry["versions"]["1"]:
            continue
        cells = [str(entry["versions"][v]["diverged"]) for v in VERSIONS]
        lines.append(f"| {entry['file']} | " + " | ".join(cells) + " |")
    transcript = expected["corpora"]["transcript"]
    lines += [
        "",
        "| first diverging turn | v1 | v2 | v3 | v2tool |",
        "|---|---|---|---|---|",
    ]
    for tid in transcript["versions"]["1"]["first_divergence"]:
        cells = []
        for v in VERSIONS:
            turn = transcript["versions"][v]["first_divergence"][tid]
            cells.append("-" if turn is None else str(turn))
        lines.append(f"| {tid} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m matrix_servers.billing.recorded")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--record", action="store_true", help="re-record results, rewrite files")
    mode.add_argument("--check", action="store_true", help="exit 1 if anything is stale")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for name in CORPORA:
        fresh = dump_jsonl(record_results(name))
        if corpus_path(name).read_text(encoding="utf-8") != fresh:
            stale.append(corpus_path(name).name)
            if args.record:
                corpus_path(name).write_text(fresh, encoding="utf-8")
    expected = expected_outcomes()
    text = dump_expected(expected)
    if not EXPECTED_PATH.exists() or EXPECTED_PATH.read_text(encoding="utf-8") != text:
        stale.append(EXPECTED_PATH.name)
        if args.record:
            EXPECTED_PATH.write_text(text, encoding="utf-8")
    if args.check:
        if stale:
            print(f"stale: {', '.join(stale)}", file=sys.stderr)
            return 1
        return 0
    if args.record:
        print(f"rewrote: {', '.join(stale) or 'nothing'}", file=sys.stderr)
    sys.stdout.write(markdown_tables(expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
