"""Offline replay benchmarks: throughput per profile and peak memory of a 100,000-call replay.

1. Throughput: recorded calls per second per profile through prepare, client-side validation
   and classification (``mcp_matrix.evolution.replay.prepare_and_classify``, no server), against a
   baseline loop in the same run (json.loads of the line + one compiled fastjsonschema
   validation against the tool's schema). Target (issue 7): 20,000 calls/s per profile.
2. Peak memory: ``mcp-matrix replay`` over a generated 100,000-call file, offline against a
   snapshot, in a subprocess; its maximum resident set size. Target: under 200 MB.

    python benchmarks/replay.py [--calls 20000] [--big 100000]
    python benchmarks/replay.py --big 100000 --write-files DIR   # DIR/retry.jsonl, DIR/v1.json
    python benchmarks/replay.py --core DIR      # end-to-end baseline of `mcp-matrix replay` (README)

``--core`` is the pure core of the offline replay of DIR/retry.jsonl through claude-code and
gemini-cli (process start, imports, profile loading, the snapshot, prepare and classify each
call; no output): the baseline of `mcp-matrix replay DIR/retry.jsonl --snapshot DIR/v1.json
--client claude-code --client gemini-cli --json --fail-on none` measured as a whole process.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fastjsonschema

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_matrix.discovery import discover_all
from mcp_matrix.evolution.replay import prepare_and_classify
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.snapshot import Snapshot, take_snapshot, write_snapshot
from mcp_matrix.targets import Target


def recorded_lines(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        args = {
            "customer_id": f"acct_{rng.randrange(10**4):04d}",
            "fields": {"plan": rng.choice(["pro", "team"])},
        }
        if rng.random() < 0.025:
            args["customer_id"] = "cust_A1"
        out.append(
            json.dumps(
                {
                    "id": f"r-{i}",
                    "tool": "update_account",
                    "arguments": args,
                    "timestamp": "2026-09-01T12:00:00Z",
                }
            )
        )
    return out


CORE_CLIENTS = ("claude-code", "gemini-cli")


def core(folder: Path) -> None:
    """What `mcp-matrix replay --snapshot` cannot do without: every call prepared and classified."""
    snap = Snapshot(json.loads((folder / "v1.json").read_text(encoding="utf-8")))
    loaded = load_profiles()
    profiles = [loaded[name] for name in CORE_CLIENTS]
    views = discover_all(snap, profiles)
    with (folder / "retry.jsonl").open(encoding="utf-8") as lines:
        calls = [json.loads(line) for line in lines if line.strip()]
    for profile, view in zip(profiles, views):
        for call in calls:
            prepare_and_classify(profile, view, call)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--big", type=int, default=100000)
    ap.add_argument("--write-files", metavar="DIR", help="write DIR/retry.jsonl and DIR/v1.json")
    ap.add_argument("--core", metavar="DIR", help="the pure core of the replay of DIR's files")
    args = ap.parse_args()
    if args.core:
        core(Path(args.core))
        return
    snap_doc = take_snapshot(Target.bundled("billing --version 1"))
    if snap_doc.get("error"):  # a loaded machine can miss the handshake's bound: say so, stop
        sys.exit(f"the billing server's snapshot failed: {snap_doc['error'].get('message')}")
    if args.write_files:
        folder = Path(args.write_files)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "retry.jsonl").write_text("\n".join(recorded_lines(args.big)) + "\n")
        write_snapshot(snap_doc, folder / "v1.json")
        return
    snap = Snapshot(snap_doc)
    tools = {t["name"]: t for _, t in snap.tools}
    lines = recorded_lines(args.calls)
    validate = fastjsonschema.compile(tools["update_account"]["inputSchema"], use_default=False)
    started = time.perf_counter()
    for line in lines:
        call = json.loads(line)
        try:
            validate(call["arguments"])
        except fastjsonschema.JsonSchemaValueException:
            pass
    base = args.calls / (time.perf_counter() - started)
    print(f"baseline (json.loads + compiled validation): {base:,.0f} calls/s")
    profiles = [p for p in load_profiles().values() if not p.abstract]
    views = discover_all(snap, profiles)
    worst = None
    for profile, view in zip(profiles, views):
        started = time.perf_counter()
        for line in lines:
            prepare_and_classify(profile, view, json.loads(line))
        rate = args.calls / (time.perf_counter() - started)
        worst = rate if worst is None else min(worst, rate)
        print(f"  {profile.name:22} {rate:>9,.0f} calls/s  ({rate / base:.2f}x baseline)")
    print(
        f"slowest profile: {worst:,.0f} calls/s   target 20,000 -> {'met' if worst >= 20000 else 'MISSED'}"
    )
    with tempfile.TemporaryDirectory() as d:
        calls = Path(d) / "retry.jsonl"
        calls.write_text("\n".join(recorded_lines(args.big)) + "\n")
        snap_path = Path(d) / "v1.json"
        write_snapshot(snap_doc, snap_path)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "mcp_matrix",
                "replay",
                str(calls),
                "--snapshot",
                str(snap_path),
                "--client",
                "claude-code",
                "--client",
                "gemini-cli",
                "--json",
                "--fail-on",
                "none",
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            cwd=d,
        )
        elapsed = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        assert r.returncode == 0, r.stderr[-2000:]
        print(
            f"100k-call offline replay (2 profiles): {elapsed:.1f} s, peak RSS {peak_mb:.0f} MB "
            f"(before: {before / 1024:.0f} MB)   target < 200 MB -> {'met' if peak_mb < 200 else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
