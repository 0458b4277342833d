"""mypy runs in the suite: its errors over mcp_matrix are the baseline file's, which may only shrink.

The baseline (tests/data/mypy-baseline.txt) lists each error as ``path: message  [code]``, one
line per occurrence, without line numbers, so an edit elsewhere in a file does not churn it. A new
error fails the test; so does a listed error that no longer occurs (delete its line). Settings are
pyproject.toml's ``[tool.mypy]`` (mypy's defaults, Python 3.10).
"""

from __future__ import annotations

import fcntl
import re
import subprocess
import sys
from collections import Counter
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.conftest import REPO

BASELINE = REPO / "tests" / "data" / "mypy-baseline.txt"
# mypy's incremental cache, kept between runs (a clean clone too) like the other tools' caches:
# mypy reuses an entry only for a file of the same content, mypy version and options, and checks
# the rest (cold: 9-11 cpu-s; warm: 0.9, and 1.9 from a clone elsewhere, with the same output;
# 2026-12-03).
MYPY_CACHE = Path.home() / ".cache" / "mcp-matrix" / "mypy"
_ERROR = re.compile(r"^(?P<path>[^:]+):\d+: error: (?P<message>.*)$")


def normalised(output: str) -> Counter[str]:
    """mypy's error lines as ``path: message``, line numbers dropped, counted per occurrence."""
    found: Counter[str] = Counter()
    for line in output.splitlines():
        m = _ERROR.match(line)
        if m:
            path = m["path"].replace("\\", "/")
            message = re.sub(r"\bline \d+\b", "line N", m["message"])
            found[f"{path}: {message}"] += 1
    return found


def baseline() -> Counter[str]:
    lines = BASELINE.read_text(encoding="utf-8").splitlines()
    return Counter(line for line in lines if line.strip() and not line.startswith("#"))


@pytest.fixture(scope="module")
def errors(shared_work) -> Counter[str]:
    """mypy's errors over mcp_matrix, run once a test run (xdist may send the two tests below
    to different workers): its output is kept in ``shared_work``, its cache in MYPY_CACHE (one
    run at a time writes it)."""
    assert find_spec("mypy"), (
        "mypy is a test dependency (pyproject.toml [test]); install the test extras"
    )

    def run(directory: Path) -> None:
        cache = MYPY_CACHE / f"mypy-{version('mypy')}-py{sys.version_info[0]}.{sys.version_info[1]}"
        cache.mkdir(parents=True, exist_ok=True)
        with open(MYPY_CACHE / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            r = subprocess.run(
                [sys.executable, "-m", "mypy", "mcp_matrix", "--cache-dir", str(cache)]
                + ["--no-error-summary"],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=170,
                check=False,
            )
        assert r.returncode in (0, 1), r.stdout + r.stderr  # 2: mypy itself failed (config, crash)
        (directory / "mypy.txt").write_text(r.stdout, encoding="utf-8")

    output = shared_work.directory("mypy mcp_matrix", run) / "mypy.txt"
    return normalised(output.read_text(encoding="utf-8"))


def test_mypy_finds_no_error_outside_the_baseline(errors: Counter[str]):
    new = errors - baseline()
    assert not new, "new mypy errors (fix them; the baseline may only shrink):\n" + "\n".join(
        sorted(new.elements())
    )


def test_every_error_in_the_baseline_still_occurs(errors: Counter[str]):
    fixed = baseline() - errors
    assert not fixed, (
        f"fixed, so delete these lines from {BASELINE.relative_to(REPO)}:\n"
        + "\n".join(sorted(fixed.elements()))
    )


def test_the_baseline_is_read_without_line_numbers():
    out = "mcp_matrix/a.py:3: error: Name 'x' already defined on line 2  [no-redef]\n"
    out += "mcp_matrix/a.py:9: error: Name 'x' already defined on line 7  [no-redef]\nSuccess\n"
    assert normalised(out) == Counter(
        {"mcp_matrix/a.py: Name 'x' already defined on line N  [no-redef]": 2}
    )
