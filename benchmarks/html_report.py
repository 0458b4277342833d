"""HTML report benchmark input: a results file of N synthetic tools through N client profiles.

    python benchmarks/html_report.py --tools 5000 --clients 20 --write-results r5000.jsonl
    mcp-matrix report r5000.jsonl -f html -o r5000.html          # what is measured (README)

The results are what ``mcp-matrix run`` writes for discovery (run-started, the snapshot, one
discovery cell per tool and profile, run-finished), made offline from the synthetic tools of
``benchmarks/synthetic.py`` so a 100,000-cell file takes seconds rather than a live run.
The profiles are the first N runnable ones by name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import snapshot_doc, tool_list

from mcp_matrix.behaviours import registry
from mcp_matrix.discovery import discover_all, discovery_events
from mcp_matrix.events import SnapshotTaken
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.results import ResultsWriter
from mcp_matrix.snapshot import Snapshot


def results_events(tools: int, clients: int) -> list[dict]:
    """The events of a discovery-only run: ``tools`` synthetic tools x the first ``clients`` profiles."""
    registry.load_all()
    snap = Snapshot(snapshot_doc(tool_list(tools)))
    profiles = sorted(
        (p for p in load_profiles().values() if not p.abstract), key=lambda p: p.name
    )[:clients]
    events = discovery_events(snap, discover_all(snap, profiles), profiles)
    return [events[0], SnapshotTaken(snapshot=snap.doc).to_json(), *events[1:]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--write-results", metavar="FILE", required=True)
    args = ap.parse_args()
    with open(args.write_results, "w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle)
        for event in results_events(args.tools, args.clients):
            writer(event)


if __name__ == "__main__":
    main()
