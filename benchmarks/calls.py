"""Call overhead on the memory reference server over Streamable HTTP (one server, same run).

The matrix's per-call cost as users run it, measured through public surfaces only (the server
process and the ``mcp-matrix`` command), so the benchmark cannot rot with the internals:

- matrix: ``mcp-matrix run --http URL --client continue --cases C --no-auto-cases`` with N
  copies of one read-only call, minus the same run with one call, divided by N - 1: what each
  further call costs (plan through the profile, send, classify, write the results line).
- baseline: a raw JSON-RPC loop in this process (httpx POST + parse of the answer), per call.

Target: <= 1.25x.

    python benchmarks/calls.py [--calls 300] [--repeat 3]
    python benchmarks/calls.py --smoke      # tiny sizes: the suite runs this so it cannot rot
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from whole import result

ARGS = {"agent_id": "bench", "tags": ["x"], "limit": 5}
LISTENING = "MCP_MATRIX_LISTENING "  # the line a bundled HTTP server prints (servers/serving.py)


def start_server() -> tuple[subprocess.Popen, str]:
    """The bundled memory server over Streamable HTTP on a free port, and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "matrix_servers.memory", "--transport", "http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in proc.stdout:
        if LISTENING in line:
            return proc, line.split(LISTENING, 1)[1].strip()
    proc.kill()
    raise SystemExit("the memory server did not say where it listens")


def raw_loop(url: str, n: int) -> float:
    """The floor: initialize once, then n tools/call POSTs, parsing each SSE/JSON answer."""
    with httpx.Client(timeout=30) as client:
        h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        r = client.post(
            url, headers=h, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        )
        h["Mcp-Session-Id"] = r.headers["mcp-session-id"]
        h["MCP-Protocol-Version"] = "2025-11-25"
        client.post(url, headers=h, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.perf_counter()
        for i in range(1, n + 1):
            params = {"name": "memory_recall", "arguments": ARGS}
            r = client.post(
                url,
                headers=h,
                json={"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params},
            )
            body = r.text
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                body = next(
                    line[5:]
                    for line in body.splitlines()
                    if line.startswith("data:") and line[5:].strip()
                )
            assert json.loads(body)["id"] == i
        return (time.perf_counter() - started) / n


def cases_file(n: int, where: Path) -> Path:
    path = where / f"cases-{n}.yaml"
    lines = ["cases:", "  memory_recall:"]
    for i in range(n):
        lines += [f"    - name: call-{i}", f"      arguments: {json.dumps(ARGS)}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def matrix_run(url: str, cases: Path) -> float:
    """Wall seconds of one ``mcp-matrix run`` through one profile with these cases."""
    argv = [sys.executable, "-m", "mcp_matrix", "run", "--http", url, "--client", "continue"]
    argv += ["--cases", str(cases), "--no-auto-cases", "--quiet", "--fail-on", "none"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mcp-matrix run failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    args = ap.parse_args(argv)
    if args.smoke:
        args.calls, args.repeat = 6, 1
    server, url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            one, many = cases_file(1, Path(tmp)), cases_file(args.calls, Path(tmp))
            raw = statistics.median(raw_loop(url, args.calls) for _ in range(args.repeat))
            per_call = statistics.median(
                (matrix_run(url, many) - matrix_run(url, one)) / (args.calls - 1)
                for _ in range(args.repeat)
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    ratio = per_call / raw
    print(
        f"per call: raw JSON-RPC loop {raw * 1000:.2f} ms, mcp-matrix run {per_call * 1000:.2f} ms"
    )
    print(
        f"overhead ratio: {ratio:.2f}x   target <= 1.25x -> {'met' if ratio <= 1.25 else 'MISSED'}"
    )
    result(
        "calls",
        f"each further call of `mcp-matrix run --http` (memory server), {args.calls} calls",
        "a raw JSON-RPC loop (httpx POST + parse)",
        f"{per_call * 1000:.2f} ms a call",
        f"{raw * 1000:.2f} ms a call",
        f"{ratio:.2f}x (wall)",
        "<= 1.25x",
        ratio <= 1.25,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
