"""Run one command and write the peak memory of the largest process it waited for (the command
and every descendant it reaped) to a file, as MB; the command's exit code is this one's.

    python peak_rss.py OUT_FILE COMMAND [ARG ...]

A process of its own, so ``RUSAGE_CHILDREN`` counts this command's processes only, never an
earlier test's child of the test runner.
"""

import resource
import subprocess
import sys
from pathlib import Path


def main() -> int:
    out, command = sys.argv[1], sys.argv[2:]
    code = subprocess.call(command)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    Path(out).write_text(f"{peak_kb / 1024:.1f}\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
