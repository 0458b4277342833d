"""Discovery benchmark: a 5,000-tool snapshot through every bundled profile.

Reports tools x profiles per second and the ratio to a baseline measured in the same run:
parsing the snapshot JSON plus one draft-07 metaschema validation per tool (the least any
client that checks schemas does). Target (issue 3): all bundled profiles over 5,000 tools in
under 2 s on the 2-core reference machine.

    python benchmarks/discovery.py [--tools 5000] [--repeat 3] [--profile [N]]
    python benchmarks/discovery.py --smoke       # tiny sizes: the suite runs this so it cannot rot
    python benchmarks/discovery.py --tools 5000 --write-snapshot s5000.json
    python benchmarks/discovery.py --core s5000.json     # end-to-end baseline (see README)
    python benchmarks/discovery.py --cli [--pairs 2]      # the commands as users run them

``--cli`` (issue 25) runs ``mcp-matrix discover s.json`` (the terminal, A) beside
``mcp-matrix discover s.json --json`` (B) as whole processes, in turn, through every bundled
profile and through the first 36 by name (the count the goal was set at): the CPU ratio pair by
pair (target A <= B) and the size of the document (target < 20 MB), against the snapshot file
it was made from.

Runs alternate (baseline, discovery, baseline, ...) and the best of each is kept, as wall
time and as CPU time of this process: on a shared, loaded machine compare the ratios (the
CPU ratio is the steadier one). ``--profile`` adds one cold discovery under cProfile and
prints its top N functions by own time and by cumulative time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jsonschema
from synthetic import snapshot_doc, tool_list
from whole import MB, MIB, measure, median_ratio, result

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.rewrite import clear_memo
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.snapshot import Snapshot


def baseline(text: str) -> tuple[float, float]:
    """(wall, cpu) seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    doc = json.loads(text)
    validator = jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)
    for entry in doc["tools"]:
        validator.is_valid(entry["tool"]["inputSchema"])
    return time.perf_counter() - started, time.process_time() - cpu


def discovery(text: str, profiles) -> tuple[float, float]:
    """(wall, cpu) seconds."""
    clear_memo()  # cold: every run pays for its rewrites
    started, cpu = time.perf_counter(), time.process_time()
    snap = Snapshot(json.loads(text))
    views = discover_all(snap, profiles)
    assert len(views) == len(profiles) and all(len(v.tools) == len(snap.tools) for v in views)
    return time.perf_counter() - started, time.process_time() - cpu


def profile(text: str, profiles, top: int) -> None:
    import cProfile
    import pstats

    clear_memo()
    profiler = cProfile.Profile()
    profiler.enable()
    discover_all(Snapshot(json.loads(text)), profiles)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def cli_pairs(tools: int, pairs: int, counts: list[int | None]) -> None:
    """The terminal against --json as whole processes (``--cli``): RESULT lines per count."""
    every = sorted(p.name for p in load_profiles().values() if not p.abstract)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        snapshot = where / "s.json"
        snapshot.write_text(json.dumps(snapshot_doc(tool_list(tools))), encoding="utf-8")
        for count in counts:
            names = every[:count] if count else every
            clients = [a for n in names for a in ("--client", n)]
            argv = [sys.executable, "-m", "mcp_matrix", "discover", str(snapshot), *clients]
            runs = [
                (measure(argv, where / "t.txt"), measure([*argv, "--json"], where / "d.json"))
                for _ in range(pairs)
            ]
            ratio = statistics.median(a.cpu / b.cpu for a, b in runs)
            size = runs[-1][1].out
            what = f"{tools:,} tools x {len(names)} profiles" + ("" if count else " (all)")
            print(
                f"{what}: terminal {statistics.median(a.cpu for a, _ in runs):.2f} s cpu, "
                f"{runs[-1][0].peak / MIB:.0f} MiB; --json "
                f"{statistics.median(b.cpu for _, b in runs):.2f} s cpu, "
                f"{runs[-1][1].peak / MIB:.0f} MiB, {size / MB:.1f} MB; "
                f"A/B cpu {median_ratio(runs)}; load {os.getloadavg()[0]:.1f}"
            )
            result(
                "discover terminal",
                f"`mcp-matrix discover s.json` (the terminal), {what}",
                "`mcp-matrix discover s.json --json`",
                f"{statistics.median(a.cpu for a, _ in runs):.1f} s cpu",
                f"{statistics.median(b.cpu for _, b in runs):.1f} s cpu",
                median_ratio(runs),
                "<= 1x",
                ratio <= 1,
            )
            result(
                "discover json",
                f"`mcp-matrix discover s.json --json`, {what}: the document's size",
                "the snapshot file it was made from",
                f"{size / MB:.1f} MB",
                f"{snapshot.stat().st_size / MB:.1f} MB",
                f"{size / snapshot.stat().st_size:.2f}x",
                "< 20 MB",
                size < 20 * MB,
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, default=5000)
    ap.add_argument(
        "--distinct", type=int, default=None, help="distinct schemas (default: all distinct)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    ap.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=40,
        default=0,
        metavar="N",
        help="also profile one cold discovery: top N functions (default 40)",
    )
    ap.add_argument(
        "--write-snapshot", metavar="FILE", help="write the synthetic snapshot to FILE and exit"
    )
    ap.add_argument(
        "--core",
        metavar="SNAPSHOT",
        help="run the pure core once on SNAPSHOT and exit: the baseline "
        "of an end-to-end measurement of `mcp-matrix discover SNAPSHOT --json` (process start, imports, "
        "profile loading, parsing and discovery; no output)",
    )
    ap.add_argument(
        "--cli",
        action="store_true",
        help="the terminal against --json, whole processes, at every bundled profile and at 36",
    )
    ap.add_argument("--pairs", type=int, default=2, help="with --cli: pairs a count")
    args = ap.parse_args()
    if args.smoke:
        args.tools, args.repeat, args.pairs = 50, 1, 1
    if args.write_snapshot:
        Path(args.write_snapshot).write_text(
            json.dumps(snapshot_doc(tool_list(args.tools, distinct=args.distinct)))
        )
        return
    registry.load_all()
    if args.cli:
        cli_pairs(args.tools, args.pairs, [None, 3] if args.smoke else [None, 36])
        return
    profiles = [p for p in load_profiles().values() if not p.abstract]
    if args.core:
        discovery(Path(args.core).read_text(encoding="utf-8"), profiles)
        return
    text = json.dumps(snapshot_doc(tool_list(args.tools, distinct=args.distinct)))
    runs = [(baseline(text), discovery(text, profiles)) for _ in range(args.repeat)]
    base = min(b[0] for b, _ in runs)
    disc = min(d[0] for _, d in runs)
    base_cpu = min(b[1] for b, _ in runs)
    disc_cpu = min(d[1] for _, d in runs)
    cells = args.tools * len(profiles)
    print(f"tools: {args.tools}  profiles: {len(profiles)}  cells: {cells}")
    print(
        f"baseline (parse + 1 metaschema validation per tool): {base:.3f} s  (cpu {base_cpu:.3f} s)"
    )
    print(
        f"discovery through all profiles (cold memo):          {disc:.3f} s  (cpu {disc_cpu:.3f} s, {cells / disc:,.0f} cells/s)"
    )
    print(
        f"ratio discovery / baseline: {disc / base:.2f}x (cpu {disc_cpu / base_cpu:.2f}x)   target: under 2 s -> {'met' if disc < 2 else 'MISSED'}"
    )
    result(
        "discovery",
        f"discovery of {args.tools:,} distinct tools x {len(profiles)} profiles, in-process, cold memo",
        "parse + one draft-07 metaschema validation per tool",
        f"{disc_cpu:.2f} s cpu",
        f"{base_cpu:.2f} s cpu",
        f"{disc_cpu / base_cpu:.2f}x (best of {args.repeat})",
        "< 2 s",
        disc < 2,
    )
    if args.profile:
        profile(text, profiles, args.profile)


if __name__ == "__main__":
    main()
