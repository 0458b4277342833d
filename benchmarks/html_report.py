"""HTML report benchmark: ``report -f html`` of N synthetic tools through C client profiles.

    python benchmarks/html_report.py [--tools 5000] [--clients 20] [--pairs 2]
    python benchmarks/html_report.py --smoke       # tiny sizes: the suite runs this so it cannot rot
    python benchmarks/html_report.py --tools 5000 --clients 20 --write-results r5000.jsonl

A: ``mcp-matrix report r.jsonl -f html -o r.html``; B, in the same run: reading every line of
the same results file and writing it back (``json.loads``, ``json.dumps``). Whole processes,
in turn, the CPU ratio pair by pair; the page's size against its target (< 20 MB).

The results are what ``mcp-matrix run`` writes for discovery (run-started, the snapshot, one
discovery cell per tool and profile, run-finished), made offline from the synthetic tools of
``benchmarks/synthetic.py`` so a 100,000-cell file takes seconds rather than a live run.
The profiles are the first N runnable ones by name.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import snapshot_doc, tool_list
from whole import MB, MIB, READ_WRITE_BACK, Measured, measure, median_ratio, result

from mcp_matrix.behaviours import registry
from mcp_matrix.core.events import SnapshotTaken
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.discovery import discover_all, discovery_events
from mcp_matrix.run.results import ResultsWriter
from mcp_matrix.targets.snapshot import Snapshot


def results_events(tools: int, clients: int) -> list[dict]:
    """The events of a discovery-only run: ``tools`` synthetic tools x the first ``clients`` profiles."""
    registry.load_all()
    snap = Snapshot(snapshot_doc(tool_list(tools)))
    profiles = sorted(
        (p for p in load_profiles().values() if not p.abstract), key=lambda p: p.name
    )[:clients]
    events = discovery_events(snap, discover_all(snap, profiles), profiles)
    return [events[0], SnapshotTaken(snapshot=snap.doc).to_json(), *events[1:]]


def write_results(path: Path | str, tools: int, clients: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle)
        for event in results_events(tools, clients):
            writer(event)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", type=int, default=5000)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one pair")
    ap.add_argument("--write-results", metavar="FILE", help="write the results file and stop")
    args = ap.parse_args()
    if args.write_results:
        write_results(args.write_results, args.tools, args.clients)
        return
    if args.smoke:
        args.tools, args.clients, args.pairs = 30, 3, 1
    print(
        f"report -f html: {args.tools} tools x {args.clients} profiles; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        results, page, raw = where / "r.jsonl", where / "r.html", where / "raw.json"
        # in a child: a process started from a parent that held the events would report the
        # parent's peak RSS as its own (Linux carries the high-water mark across fork and exec)
        subprocess.run(
            [sys.executable, __file__, "--tools", str(args.tools), "--clients", str(args.clients)]
            + ["--write-results", str(results)],
            check=True,
        )
        a = [sys.executable, "-m", "mcp_matrix", "report", str(results), "-f", "html"]
        a += ["-o", str(page)]
        b = [sys.executable, "-c", READ_WRITE_BACK, str(results), str(raw)]
        pairs: list[tuple[Measured, Measured]] = [
            (measure(a), measure(b)) for _ in range(args.pairs)
        ]
        size = page.stat().st_size
    cpu_a = statistics.median(x.cpu for x, _ in pairs)
    cpu_b = statistics.median(y.cpu for _, y in pairs)
    print(
        f"  A report -f html: cpu {cpu_a:.2f} s, peak {pairs[-1][0].peak / MIB:.0f} MiB, {size / MB:.1f} MB"
    )
    print(f"  B read + json.dumps: cpu {cpu_b:.2f} s")
    print(
        f"  A/B cpu: {median_ratio(pairs)}, {len(pairs)} pair(s); target < 20 MB: {'yes' if size < 20 * MB else 'NO'}"
    )
    result(
        "html_report",
        f"`mcp-matrix report r.jsonl -f html -o r.html`, {args.tools:,} tools x {args.clients} profiles",
        "reading every line of the results file and writing it back (C encoder)",
        f"{size / MB:.1f} MB, {cpu_a:.1f} s cpu",
        f"{cpu_b:.1f} s cpu",
        median_ratio(pairs),
        "< 20 MB",
        size < 20 * MB,
    )


if __name__ == "__main__":
    main()
