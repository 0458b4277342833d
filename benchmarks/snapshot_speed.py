"""``mcp-matrix snapshot`` of a large stdio server against the official Python SDK client.

A synthetic server of N tools (``benchmarks/synthetic.py``) served over stdio by the bundled probe
server (``python -m matrix_servers.probe --tools FILE --page-size P``), so tools/list has N / P
pages. Each command runs as a whole process, as users run it; A runs beside its B in turn (pairs)
and the ratios are taken pair by pair: CPU is the steady figure on a loaded machine.

    python benchmarks/snapshot_speed.py [--tools 5000] [--page-size 100] [--pairs 3]
    python benchmarks/snapshot_speed.py --smoke     # tiny sizes: the suite runs this so it cannot rot
    python benchmarks/snapshot_speed.py --table     # A with --verbose (the table, as -o was before)

- A: ``mcp-matrix snapshot --stdio SERVER -o out.json``
- B: the `mcp` SDK's client (``ClientSession`` over ``stdio_client``): initialize, then
  tools/list page by page to the end; the whole process timed the same way.

CPU is the process's and its reaped children's (the servers it started: one for B; for A the
main session and its era probes, docs/snapshot.md). Target (issue 25): A <= 1.5x B.

Then ``mcp-matrix --help`` (the overview) beside ``mcp-matrix --version`` (the least the console
script does), five of each in turn: target (issue 25) ``--help`` under 0.15 s of CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import tool_list
from whole import result

# B: the official Python SDK's client, as a script would use it.
SDK_CLIENT = """
import shlex, sys, anyio
from mcp import ClientSession, StdioServerParameters
from mcp.types import PaginatedRequestParams
from mcp.client.stdio import stdio_client

async def main(command):
    argv = shlex.split(command)
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools, cursor, pages = 0, None, 0
        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools, pages, cursor = tools + len(page.tools), pages + 1, page.next_cursor
            if not cursor:
                break
    print(f"{tools} tools on {pages} pages")

anyio.run(main, sys.argv[1])
"""


@dataclass(frozen=True)
class Measured:
    cpu: float  # seconds, user + system, with the children the process reaped
    wall: float  # seconds


def measure(argv: list[str]) -> Measured:
    """One whole process: its CPU (and its reaped children's) and wall."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{' '.join(argv[:4])} ... failed ({status}): {tail}")
    return Measured(usage.ru_utime + usage.ru_stime, wall)


def run_pair(a: list[str], b: list[str]) -> tuple[Measured, Measured]:
    return measure(a), measure(b)


def help_pairs(pairs: int) -> None:
    """``mcp-matrix --help`` against ``mcp-matrix --version``: the median CPU of each, a RESULT."""
    cli = [sys.executable, "-m", "mcp_matrix"]
    runs = [run_pair([*cli, "--help"], [*cli, "--version"]) for _ in range(pairs)]
    a = statistics.median(x.cpu for x, _ in runs)
    b = statistics.median(y.cpu for _, y in runs)
    print(f"--help {a:.3f} s cpu, --version {b:.3f} s cpu ({len(runs)} pairs)")
    result(
        "help",
        "`mcp-matrix --help`",
        "`mcp-matrix --version`",
        f"{a:.3f} s cpu",
        f"{b:.3f} s cpu",
        f"{a / b:.2f}x",
        "< 0.15 s",
        a < 0.15,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tools", type=int, default=5000)
    ap.add_argument("--page-size", type=int, default=100)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="50 tools, 1 pair: it runs, no figure")
    ap.add_argument(
        "--table",
        action="store_true",
        help="A with --verbose: the table of every tool on stderr, as -o printed it before",
    )
    args = ap.parse_args(argv)
    if args.smoke:
        args.tools, args.page_size, args.pairs = 50, 10, 1
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        tools = where / "tools.json"
        tools.write_text(json.dumps(tool_list(args.tools)), encoding="utf-8")
        server = shlex.join(
            [sys.executable, "-m", "matrix_servers.probe", "--tools", str(tools)]
            + ["--page-size", str(args.page_size)]
        )
        out = where / "out.json"
        a = [sys.executable, "-m", "mcp_matrix", "snapshot", "--stdio", server, "-o", str(out)]
        a += ["--verbose"] if args.table else []
        b = [sys.executable, "-c", SDK_CLIENT, server]
        pairs = []
        for _ in range(args.pairs):
            out.unlink(missing_ok=True)
            pairs.append(run_pair(a, b))
        written = json.loads(out.read_text(encoding="utf-8"))
    if len(written["tools"]) != args.tools:
        raise SystemExit(f"the snapshot has {len(written['tools'])} tools, not {args.tools}")
    cpu = [x.cpu / y.cpu for x, y in pairs]
    wall = [x.wall / y.wall for x, y in pairs]
    print(
        f"snapshot of {args.tools} tools on {-(-args.tools // args.page_size)} pages, "
        f"{len(pairs)} pair(s), load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"A mcp-matrix snapshot{' --verbose' if args.table else ''}: {statistics.median(x.cpu for x, _ in pairs):.2f} s cpu, "
        f"{statistics.median(x.wall for x, _ in pairs):.2f} s wall"
    )
    print(
        f"B SDK client: {statistics.median(y.cpu for _, y in pairs):.2f} s cpu, "
        f"{statistics.median(y.wall for _, y in pairs):.2f} s wall"
    )
    print(
        f"A/B cpu: {statistics.median(cpu):.2f}x ({min(cpu):.2f}-{max(cpu):.2f}), "
        f"A/B wall: {statistics.median(wall):.2f}x ({min(wall):.2f}-{max(wall):.2f}); "
        f"target A/B cpu <= 1.5x: {'yes' if statistics.median(cpu) <= 1.5 else 'no'}"
    )
    result(
        "snapshot_speed",
        f"`mcp-matrix snapshot --stdio SERVER -o out.json{' --verbose' if args.table else ''}` "
        f"of {args.tools:,} tools",
        "the `mcp` SDK's client (initialize, tools/list to the last page)",
        f"{statistics.median(x.cpu for x, _ in pairs):.2f} s cpu",
        f"{statistics.median(y.cpu for _, y in pairs):.2f} s cpu",
        f"{statistics.median(cpu):.2f}x ({min(cpu):.2f}-{max(cpu):.2f})",
        "<= 1.5x",
        statistics.median(cpu) <= 1.5,
    )
    help_pairs(1 if args.smoke else 5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
