"""What the benchmarks share: a whole process measured from outside, and the line they end with.

``measure`` runs one command as users run it and reads the kernel's own accounting of it
(``wait4``: user + system CPU, peak RSS). ``result`` prints the ``RESULT {...}`` line each
benchmark ends with: ``benchmarks/run_all.py`` builds benchmarks/README.md's table from those
lines alone, so the table says what the benchmarks printed and nothing else.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MB = 1_000_000
MIB = 1024 * 1024

# A baseline for reading a results file: every line read and the list written back as JSON
# (``json.loads`` per line, one ``json.dumps``: the C encoder). argv: the file, where to write.
READ_WRITE_BACK = (
    "import json, sys\n"
    "events = [json.loads(line) for line in open(sys.argv[1], encoding='utf-8')]\n"
    "open(sys.argv[2], 'w', encoding='utf-8').write(json.dumps(events, ensure_ascii=False))\n"
)


@dataclass(frozen=True)
class Measured:
    cpu: float  # seconds, user + system
    peak: int  # bytes, max RSS
    out: int  # bytes written
    wall: float = 0.0  # seconds


def measure(argv: list[str], out: Path | None = None) -> Measured:
    """One whole process: its CPU, peak RSS, wall and output size (stdout to ``out`` if given).

    Exit 0 and 1 (findings) are results; any other code stops the benchmark with the tail of
    the command's stderr."""
    stdout = open(out, "w", encoding="utf-8") if out is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if out is not None:
            stdout.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])} ... failed ({proc.returncode}): {err[-2000:]}")
    size = out.stat().st_size if out is not None else 0
    return Measured(usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, size, wall)


def ratios(pairs: list[tuple[Measured, Measured]]) -> list[float]:
    """A/B CPU pair by pair: the steady figure on a shared machine."""
    return [a.cpu / b.cpu for a, b in pairs]


def result(
    benchmark: str, what: str, baseline: str, a: str, b: str, ratio: str, target: str, met: bool
) -> None:
    """The benchmark's row of the README table, as one ``RESULT`` JSON line on stdout."""
    load = os.getloadavg()[0]
    row = {
        "benchmark": benchmark,
        "what": what,
        "baseline": baseline,
        "a": a,
        "b": b,
        "ratio": ratio,
        "target": target,
        "met": met,
        "load": round(load, 1),
    }
    print("RESULT " + json.dumps(row, ensure_ascii=False), flush=True)


def median_ratio(pairs: list[tuple[Measured, Measured]]) -> str:
    """``1.23x (1.10-1.31)``: the median of the pairs' CPU ratios and their range."""
    r = ratios(pairs)
    return f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"
