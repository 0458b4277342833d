"""Replay benchmarks: ``mcp-matrix replay`` against a fastjsonschema loop, throughput, peak memory.

1. The pair (issue 25; the default): a synthetic server of 1,000 tools (``synthetic.py``) and
   10,000 recorded calls of them (seeded; about one in ten invalid), replayed offline through
   every profile as users run it, ``mcp-matrix replay CALLS --population retry --snapshot S
   --json --fail-on none --quiet`` (A), against a fastjsonschema loop over the same calls (B:
   start, read the snapshot, compile each called tool's schema, ``json.loads`` and validate
   each line). Whole processes, A and B in turn, the CPU ratio pair by pair. Target: A <= 5x B.
2. ``--throughput``: recorded calls per second per profile through prepare, client-side
   validation and classification (``prepare_and_classify``, no server), against json.loads +
   one compiled fastjsonschema validation in the same run (issue 7: 20,000 calls/s a profile);
   and the peak memory of ``mcp-matrix replay`` over 100,000 calls (target: under 200 MB).

    python benchmarks/replay.py [--tools 1000] [--calls 10000] [--pairs 2]
    python benchmarks/replay.py --smoke          # tiny sizes: the suite runs this so it cannot rot
    python benchmarks/replay.py --throughput [--calls 20000] [--big 100000]
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
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import fastjsonschema

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import snapshot_doc, tool_list
from whole import Measured, measure, median_ratio, ratios, result

from mcp_matrix.evolution.replay import prepare_and_classify
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot, take_snapshot, write_snapshot


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


# B: a fastjsonschema loop over the same calls (a schema that does not compile is not checked).
LOOP = """
import json, sys
import fastjsonschema
doc = json.load(open(sys.argv[2], encoding="utf-8"))
schemas = {e["tool"]["name"]: e["tool"]["inputSchema"] for e in doc["tools"]}
compiled, counts = {}, {"valid": 0, "invalid": 0, "unknown": 0}
for line in open(sys.argv[1], encoding="utf-8"):
    call = json.loads(line)
    if call["tool"] not in schemas:
        counts["unknown"] += 1
        continue
    check = compiled.get(call["tool"])
    if check is None:
        try:
            check = fastjsonschema.compile(schemas[call["tool"]], use_default=False)
        except fastjsonschema.JsonSchemaDefinitionException:
            check = lambda _: None
        compiled[call["tool"]] = check
    try:
        check(call["arguments"])
        counts["valid"] += 1
    except fastjsonschema.JsonSchemaValueException:
        counts["invalid"] += 1
print(counts)
"""


def _value(rng: random.Random, schema: object) -> object:
    """A plausible value for ``schema`` (the synthetic tools' shapes)."""
    if not isinstance(schema, dict):
        return "x"
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if kind == "string":
        return rng.choice(["alpha", "beta", "2026-09-01T12:00:00Z"])
    if kind == "integer":
        return rng.randint(1, 100)
    if kind == "number":
        return rng.choice([1.5, 2.25])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [rng.choice(["a", "b"]) for _ in range(rng.randint(0, 3))]
    if kind == "object":
        props = list(schema.get("properties", {}).items())[:2]
        return {k: _value(rng, v) for k, v in props}
    return {"id": "i1"}


def synthetic_calls(tools: list[dict], n: int, seed: int = 5) -> list[str]:
    """``n`` recorded calls of ``tools``: the required properties and about half of the others,
    one call in twenty with its first property retyped (a model's mistake)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        tool = rng.choice(tools)
        schema = tool["inputSchema"]
        props = schema["properties"]
        args = {
            k: _value(rng, v)
            for k, v in props.items()
            if k in schema["required"] or rng.random() < 0.5
        }
        if rng.random() < 0.05:
            args[next(iter(props))] = 12345
        out.append(json.dumps({"id": f"r-{i}", "tool": tool["name"], "arguments": args}))
    return out


def the_pair(n_tools: int, n_calls: int, pairs: int, clients: list[str]) -> None:
    """A (``mcp-matrix replay``, every profile or ``clients``) against B (the loop), in turn."""
    print(
        f"replay: {n_calls} calls over {n_tools} tools, "
        f"{'profiles ' + ', '.join(clients) if clients else 'every profile'}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        tools = tool_list(n_tools)
        calls, snap = where / "retry.jsonl", where / "s.json"
        calls.write_text("\n".join(synthetic_calls(tools, n_calls)) + "\n", encoding="utf-8")
        snap.write_text(json.dumps(snapshot_doc(tools)), encoding="utf-8")
        a = [sys.executable, "-m", "mcp_matrix", "replay", str(calls), "--population", "retry"]
        a += ["--snapshot", str(snap), "--json", "--fail-on", "none", "--quiet"]
        a += [x for c in clients for x in ("--client", c)]
        b = [sys.executable, "-c", LOOP, str(calls), str(snap)]
        done: list[tuple[Measured, Measured]] = []
        for _ in range(pairs):
            done.append((measure(a, where / "a.json"), measure(b)))
    cpu_a = statistics.median(x.cpu for x, _ in done)
    cpu_b = statistics.median(y.cpu for _, y in done)
    met = statistics.median(ratios(done)) <= 5
    print(f"  A mcp-matrix replay --snapshot: cpu {cpu_a:.2f} s, peak {done[-1][0].peak >> 20} MiB")
    print(f"  B fastjsonschema loop: cpu {cpu_b:.2f} s")
    print(f"  A/B cpu: {median_ratio(done)}, {len(done)} pair(s)")
    print(f"  target A/B cpu <= 5x: {'yes' if met else 'NO'}")
    result(
        "replay",
        f"`mcp-matrix replay` of {n_calls:,} calls over {n_tools:,} tools, "
        f"{'every profile' if not clients else f'{len(clients)} profiles'}, offline",
        "a fastjsonschema loop over the same calls",
        f"{cpu_a:.2f} s cpu",
        f"{cpu_b:.2f} s cpu",
        median_ratio(done),
        "<= 5x",
        met,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", type=int, default=1000)
    ap.add_argument(
        "--calls", type=int, default=None, help="10,000 (the pair); 20,000 (--throughput)"
    )
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--client", action="append", default=[], help="only these (default: all)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one pair")
    ap.add_argument("--throughput", action="store_true", help="per-profile rate and peak memory")
    ap.add_argument("--big", type=int, default=100000)
    ap.add_argument("--write-files", metavar="DIR", help="write DIR/retry.jsonl and DIR/v1.json")
    ap.add_argument("--core", metavar="DIR", help="the pure core of the replay of DIR's files")
    args = ap.parse_args()
    if args.core:
        core(Path(args.core))
        return
    if args.smoke:
        the_pair(30, 200, 1, args.client)
        return
    if not args.throughput and not args.write_files:
        the_pair(args.tools, args.calls or 10000, args.pairs, args.client)
        return
    args.calls = args.calls or 20000
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
