"""What `mcp-matrix run` through every profile costs against one profile, in one run of this script.

For each target, the two commands run in turn as whole processes (A all profiles, B one profile,
A B A B ...); each one's CPU is what the operating system accounts to it and the processes it
waited for (the servers included), as `/usr/bin/time` reports it (``resource.getrusage
(RUSAGE_CHILDREN)`` before and after). The ratio A/B is taken pair by pair and the median printed,
so a loaded machine moves both sides. A's `--verbose` lines say what its calls cost the server
against the least and, for a `--stdio` server, how its processes were started: forked from a warm
template of the command, or cold and why (docs/wire.md).

    python benchmarks/run_cost.py                      # the default run, mcp-server-time (PyPI) and
                                                       # server-filesystem (npm), 3 pairs each
    python benchmarks/run_cost.py --target time --repeat 5
    python benchmarks/run_cost.py --smoke              # two profiles vs one, one pair (the suite runs it)
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# the repository's tests/ (the npm install the suite shares), after the installed packages: the
# benchmark measures the installed mcp-matrix, never the checkout's by accident
sys.path.append(str(Path(__file__).resolve().parent.parent))

from whole import result

from tests.npm_servers import NpmMissing, reference_server

TARGETS = {
    # the README's first command: the bundled memory server and its cases (they write)
    "default": [],
    # a third-party stdio server from PyPI (the test extra `mcp-server-time`), read-only tools
    "time": ["--stdio", "mcp-server-time --local-timezone UTC"],
    # a third-party stdio server from npm (Node: never forked, every session a cold process),
    # over a folder of its own; its writes are not called (no cases), its reads are
    "filesystem": ["--stdio", "node {entry} {root}"],
}
NPM_SERVER, NPM_VERSION = "server-filesystem", "2026.8.31"
NPM_PACKAGE = f"@modelcontextprotocol/{NPM_SERVER}@{NPM_VERSION}"
WHAT = {"default": "the default run", "filesystem": f"{NPM_PACKAGE} from npm, over stdio"}
ONE = "claude-code"
SMOKE_ALL = ("claude-code", "codex-raw")
WORK = re.compile(r"server sessions for the calls: [^\n]*")
STARTS = re.compile(r"server processes: [^\n]*")  # a --stdio server's: forked warm, or why cold


@dataclass(frozen=True)
class Measured:
    cpu: float
    wall: float
    work: str


def measure(argv: list[str]) -> Measured:
    """One whole `mcp-matrix run`: its CPU and its servers', its wall, its --verbose counts line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # 1: findings (the default run's gate fails by design)
        sys.exit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = [m.group(0) for m in (WORK.search(done.stdout), STARTS.search(done.stdout)) if m]
    return Measured(cpu, wall, "\n  all: ".join(found))


def npm_server() -> Path:
    """The npm server's entry point, installed once into a cache shared by runs (locked)."""
    try:
        return reference_server(NPM_SERVER, NPM_VERSION)
    except NpmMissing as exc:
        sys.exit(f"{exc} (the filesystem target)")


def target_argv(target: str, root: Path) -> list[str]:
    """The target's options: the npm server's entry point and folder filled in."""
    argv = TARGETS[target]
    if target != "filesystem":
        return argv
    (root / "notes.txt").write_text("a file for the server to read\n", encoding="utf-8")
    return [argv[0], argv[1].format(entry=npm_server(), root=root)]


def command(target: str, clients: tuple[str, ...], root: Path) -> list[str]:
    argv = [sys.executable, "-m", "mcp_matrix", "run", *target_argv(target, root)]
    argv += ["--quiet", "--verbose"]
    return argv + [a for c in clients for a in ("--client", c)]


def compare(target: str, every: tuple[str, ...], repeat: int) -> None:
    """A (``every``: () for all profiles) and B (one profile) in turn; the ratio pair by pair."""
    pairs = []
    with tempfile.TemporaryDirectory(prefix="run-cost-") as root:
        for _ in range(repeat):
            a = measure(command(target, every, Path(root)))
            b = measure(command(target, (ONE,), Path(root)))
            pairs.append((a, b))
    cpu = statistics.median(a.cpu / b.cpu for a, b in pairs)
    wall = statistics.median(a.wall / b.wall for a, b in pairs)
    a_cpu = statistics.median(a.cpu for a, _ in pairs)
    b_cpu = statistics.median(b.cpu for _, b in pairs)
    who = f"{len(every)} profiles" if every else "all profiles"
    print(f"{target}: {who} {a_cpu:.1f} s cpu vs {ONE} {b_cpu:.1f} s cpu ({repeat} pair(s))")
    print(f"  all / one: cpu {cpu:.2f}x, wall {wall:.2f}x (goal <= 2x)")
    print(f"  all: {pairs[-1][0].work or 'no counts line'}")
    cpus = [a.cpu / b.cpu for a, b in pairs]
    result(
        f"run_cost {target}",
        f"`mcp-matrix run` ({WHAT[target] if target in WHAT else TARGETS[target][-1]}), {who}",
        f"the same with `--client {ONE}`",
        f"{a_cpu:.1f} s cpu",
        f"{b_cpu:.1f} s cpu",
        f"{cpu:.2f}x ({min(cpus):.2f}-{max(cpus):.2f})",
        "<= 2x",
        cpu <= 2,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--target", choices=(*TARGETS, "all", "both"), default="all", help="both: the same as all"
    )
    parser.add_argument("--repeat", type=int, default=3, help="pairs per target")
    parser.add_argument("--smoke", action="store_true", help="two profiles vs one, one pair")
    args = parser.parse_args()
    targets = list(TARGETS) if args.target in ("all", "both") else [args.target]
    for target in targets:
        compare(target, SMOKE_ALL if args.smoke else (), 1 if args.smoke else args.repeat)


if __name__ == "__main__":
    main()
