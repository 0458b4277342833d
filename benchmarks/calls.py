"""Call benchmarks on the memory reference server over Streamable HTTP (one server, same run).

1. Overhead per call: the matrix's per-case path (plan through the profile, send, classify)
   against a minimal raw JSON-RPC loop (httpx POST + parse) on the same session kind.
   Target: <= 1.25x.
2. Parallel: every bundled profile in parallel (``--jobs``) against one profile alone, the
   whole ``run_matrix`` (snapshot, discovery, reference calls, calls). Target: <= 2x on 2 cores.

    python benchmarks/calls.py [--calls 300] [--jobs 8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from matrix.cases import (
    Case,
    load_cases,
)
from matrix.classify import Expectation
from matrix.commands.run import bundled_cases
from matrix.discovery import discover_all
from matrix.profiles.loader import load_profiles
from matrix.results import ResultsWriter
from matrix.run import RunConfig, _ProfileRunner, run_matrix
from matrix.snapshot import Snapshot, take_snapshot
from matrix.targets import Target

ARGS = {"agent_id": "bench", "query": "x", "limit": 5}


def raw_loop(url: str, n: int) -> float:
    """The floor: initialize once, then n tools/call POSTs, parsing each SSE/JSON answer."""
    with httpx.Client(timeout=30) as client:
        h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        r = client.post(
            url,
            headers=h,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
        )
        h["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        h["MCP-Protocol-Version"] = "2025-11-25"
        client.post(url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.perf_counter()
        for i in range(1, n + 1):
            r = client.post(
                url,
                headers=h,
                json={
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": "memory_recall", "arguments": ARGS},
                },
            )
            body = r.text
            data = (
                next(
                    line[5:]
                    for line in body.splitlines()
                    if line.startswith("data:") and line[5:].strip()
                )
                if r.headers.get("content-type", "").startswith("text/event-stream")
                else body
            )
            assert json.loads(data)["id"] == i
        return (time.perf_counter() - started) / n


def matrix_loop(target: Target, profile, view, n: int) -> float:
    runner = _ProfileRunner(RunConfig(target=target, profiles=[profile]), profile, stop=None)
    case = Case("memory_recall", "bench", ARGS, Expectation("success"))
    tools = view[1]
    try:
        runner.run_case(case, view[0], tools, tools, None, None)  # opens the session
        started = time.perf_counter()
        for _ in range(n):
            event = runner.run_case(case, view[0], tools, tools, None, None)
            assert event["verdict"] == "intact", event
        return (time.perf_counter() - started) / n
    finally:
        runner.close()


def whole_run(target: Target, profiles, cases, jobs: int) -> float:
    started = time.perf_counter()
    run_matrix(
        RunConfig(target=target, profiles=profiles, cases=cases, jobs=jobs), ResultsWriter(None)
    )
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    server = Target.bundled("memory", transport="http").open()  # one server for everything
    try:
        target = Target.http(server.url)
        profiles = [p for p in load_profiles().values() if not p.abstract]
        one = next(p for p in profiles if p.name == "continue")
        snap = Snapshot(take_snapshot(target))
        view = discover_all(snap, [one])[0]
        tools = {t["name"]: t for _, t in snap.tools}
        raw = statistics.median(raw_loop(server.url, args.calls) for _ in range(args.repeat))
        mat = statistics.median(
            matrix_loop(target, one, (view, tools), args.calls) for _ in range(args.repeat)
        )
        print(
            f"per call: raw JSON-RPC loop {raw * 1000:.2f} ms, matrix (plan + send + classify) {mat * 1000:.2f} ms"
        )
        print(
            f"overhead ratio: {mat / raw:.2f}x   target <= 1.25x -> {'met' if mat / raw <= 1.25 else 'MISSED'}"
        )
        cases = load_cases(bundled_cases("memory"))
        alone = statistics.median(whole_run(target, [one], cases, 1) for _ in range(args.repeat))
        together = statistics.median(
            whole_run(target, profiles, cases, args.jobs) for _ in range(args.repeat)
        )
        ratio = together / alone
        print(
            f"whole run: 1 profile {alone:.2f} s, all {len(profiles)} profiles with --jobs {args.jobs} {together:.2f} s"
        )
        print(f"parallel ratio: {ratio:.2f}x   target <= 2x -> {'met' if ratio <= 2 else 'MISSED'}")
    finally:
        server.close()


if __name__ == "__main__":
    main()
