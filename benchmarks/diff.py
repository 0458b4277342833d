"""Diff benchmark: ``mcp-matrix diff`` of two synthetic snapshots, end to end as users run it.

A server of N tools evolves into its next release: one tool in ten gains a required
property, one in ten retypes a property, one in twenty is removed, one in twenty is added
(seeded, deterministic). The command is timed as a whole process at two sizes, and the ratio
of the time per tool at the large size to the time per tool at the small size is printed: a
linear diff stays near 1x; a quadratic one grows with the size ratio (5x for 1,000 -> 5,000).

A second row diffs N tools against the same N each under a new name (``v2_`` before it,
descriptions as they were), beside the diff of the N tools against themselves. Rename matching
compared every removed with every added tool (a difflib ratio per pair, 160,000 at 400): 400
renamed tools took 11.8 and 13.5 s against 2.4 and 2.6 s kept (4.95x, 5.3x, growing with N);
now 3.5 and 6.3 s against 2.3 and 2.8 s (1.5x, 2.3x; load 2.9-3.7): what is left is each
rename's own classification for every client, linear in the renames.

    python benchmarks/diff.py [--small 1000] [--large 5000] [--renamed 400] [--client NAME ...]
        [--repeat 3]
    python benchmarks/diff.py --smoke        # tiny sizes: the suite runs this so it cannot rot
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import snapshot_doc, tool_list
from whole import result


def evolve(tools: list[dict], seed: int = 11) -> list[dict]:
    """The next release of ``tools``: added requirements, retyped keys, removals, additions."""
    rng = random.Random(seed)
    out = []
    for t in tools:
        roll = rng.random()
        if roll < 0.05:
            continue  # removed
        t = copy.deepcopy(t)
        schema = t["inputSchema"]
        props = schema.setdefault("properties", {})
        if roll < 0.15:
            props["tenant"] = {"type": "string", "description": "The tenant."}
            schema["required"] = [*schema.get("required", []), "tenant"]
        elif roll < 0.25 and props:
            key = next(iter(props))
            props[key] = {"type": "integer", "description": "Now a number."}
        out.append(t)
    extra = tool_list(max(1, len(tools) // 20), seed=seed + 1)
    out.extend({**t, "name": f"new_{t['name']}"} for t in extra)
    return out


def write_pair(n: int, where: Path) -> tuple[Path, Path]:
    old = tool_list(n)
    new = evolve(old)
    a, b = where / f"old-{n}.json", where / f"new-{n}.json"
    a.write_text(json.dumps(snapshot_doc(old)), encoding="utf-8")
    b.write_text(json.dumps(snapshot_doc(new)), encoding="utf-8")
    return a, b


def write_renamed(n: int, where: Path) -> tuple[Path, Path]:
    """``n`` tools, and the same ``n`` tools each under a new name."""
    old = tool_list(n, seed=5)
    new = [{**t, "name": f"v2_{t['name']}"} for t in old]
    a, b = where / f"renamed-old-{n}.json", where / f"renamed-new-{n}.json"
    a.write_text(json.dumps(snapshot_doc(old)), encoding="utf-8")
    b.write_text(json.dumps(snapshot_doc(new)), encoding="utf-8")
    return a, b


def timed(old: Path, new: Path, clients: list[str]) -> float:
    """Wall seconds of one ``mcp-matrix diff`` (exit 0 or 1: a breaking change is expected)."""
    argv = [sys.executable, "-m", "mcp_matrix", "diff", str(old), str(new), "-f", "json"]
    for c in clients:
        argv += ["--client", c]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"diff failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=1000)
    ap.add_argument("--large", type=int, default=5000)
    ap.add_argument("--renamed", type=int, default=400, help="tools renamed at once")
    ap.add_argument("--client", action="append", default=[], help="only these (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    args = ap.parse_args(argv)
    if args.smoke:
        args.small, args.large, args.repeat, args.renamed = 20, 60, 1, 30
    clients = args.client
    with tempfile.TemporaryDirectory() as tmp:
        small = write_pair(args.small, Path(tmp))
        large = write_pair(args.large, Path(tmp))
        best_small = min(timed(*small, clients) for _ in range(args.repeat))
        best_large = min(timed(*large, clients) for _ in range(args.repeat))
        old, new = write_renamed(args.renamed, Path(tmp))
        kept, renamed = [], []
        for _ in range(args.repeat):  # alternated: the machine's load falls on both
            kept.append(timed(old, old, clients))
            renamed.append(timed(old, new, clients))
    per_small, per_large = best_small / args.small, best_large / args.large
    print(
        f"diff, {', '.join(clients) or 'every profile'}: {args.small} tools {best_small:.2f} s, "
        f"{args.large} tools {best_large:.2f} s"
    )
    print(
        f"time per tool, large / small: {per_large / per_small:.2f}x "
        f"(linear ~1x; quadratic ~{args.large / args.small:.0f}x)"
    )
    growth = per_large / per_small
    result(
        "diff",
        f"`mcp-matrix diff -f json` of {args.large:,} tools, time per tool "
        f"({', '.join(clients) or 'every profile'})",
        f"the same at {args.small:,} tools",
        f"{best_large:.2f} s wall",
        f"{best_small:.2f} s wall",
        f"{growth:.2f}x per tool (quadratic ~{args.large / args.small:.0f}x)",
        "linear (<= 2x per tool)",
        growth <= 2,
    )
    n, cost = args.renamed, min(renamed) / min(kept)
    print(f"diff of {n} tools renamed {min(renamed):.2f} s, kept {min(kept):.2f} s: {cost:.2f}x")
    result(
        "diff renames",
        f"`mcp-matrix diff -f json` of {n:,} tools against the same tools renamed "
        f"({', '.join(clients) or 'every profile'})",
        f"the {n:,} tools against themselves",
        f"{min(renamed):.2f} s wall",
        f"{min(kept):.2f} s wall",
        f"{cost:.2f}x",
        "<= 3x (quadratic: 5x at 400, growing with N)",
        cost <= 3,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
