"""Output paths: a device, an input of the same command, a write that fails.

``--results /dev/null`` (a common idiom) was a traceback (``ftruncate`` on a device), exit 1;
``/dev/full`` for results or reports four tracebacks, exit 1 (the findings code); an output
path naming an input (``--cases c.yaml --results c.yaml``) destroyed the input.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from tests.conftest import LOADED_MACHINE_BOUNDS, NEUTRAL_CWD, run_cli, run_cli_in_process
from tests.hostile.conftest import tiny_server

CASES = "tools:\n  memory_reflect:\n    - name: plain\n      arguments: {text: hi}\n"


def assert_clean_error(r: subprocess.CompletedProcess, *words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    for word in words:
        assert word in r.stderr, r.stderr[-2000:]


def test_dev_null_takes_the_results_and_the_reports():
    r = run_cli(
        "run", "--server", "memory", "--client", "claude-code",
        "--results", os.devnull, "--report", f"md:{os.devnull}",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "release gate: passed" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--server", "memory", "--results", "/dev/full"),
        ("run", "--server", "memory", "--report", "md:/dev/full"),
        ("report", "RESULTS", "-o", "/dev/full"),
        ("check", "RESULTS", "-o", "/dev/full"),
    ],
    ids=["results", "report", "report-o", "check-o"],
)
def test_a_device_other_than_dev_null_is_refused_before_anything_runs(tmp_path, args):
    results = tmp_path / "r.jsonl"
    results.write_text("")  # never read: the output path is refused first
    r = run_cli_in_process(*(str(results) if a == "RESULTS" else a for a in args))
    assert_clean_error(r, "/dev/full", "is a device")


def test_a_write_that_fails_mid_run_is_exit_2_naming_the_file_not_a_traceback(tmp_path):
    """Files of at most 4 KiB (RLIMIT_FSIZE; Python ignores SIGXFSZ, so a write past it fails
    with EFBIG as a full disk fails with ENOSPC): the results file overflows during the run."""
    tool = {"name": "echo", "description": "x" * 8000, "inputSchema": {"type": "object"}}
    server = tiny_server(tmp_path, {"tools": [tool]})  # stdlib only: it writes no file itself

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    results = tmp_path / "r.jsonl"
    r = subprocess.run(
        [sys.executable, "-m", "mcp_matrix", "run", *LOADED_MACHINE_BOUNDS["run"]]
        + ["--stdio", server, "--client", "claude-code", "--results", str(results)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=NEUTRAL_CWD,
        preexec_fn=small_files,
        check=False,
    )
    assert_clean_error(r, f"--results {results}", "cannot write")
    assert "echo" in r.stdout and "1 tools" in r.stdout  # the run went on: its grid is printed


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize(
    "command",
    [
        ("run", "--server", "memory", "--cases", "IN", "--results", "OUT"),
        ("run", "--server", "memory", "--baseline", "IN", "--results", "OUT"),
        ("run", "--server", "memory", "--cases", "IN", "--report", "md:OUT"),
        ("report", "IN", "-o", "OUT"),
        ("check", "IN", "-o", "OUT"),
        ("snapshot", "IN", "-o", "OUT"),
    ],
    ids=["cases-results", "baseline-results", "cases-report", "report-o", "check-o", "snapshot-o"],
)
def test_an_output_that_is_an_input_of_the_same_command_is_refused_and_the_input_kept(
    tmp_path, command, link
):
    source = tmp_path / "input.txt"
    source.write_text(CASES, encoding="utf-8")
    out = tmp_path / "output.txt"
    if link == "same":
        out = source
    elif link == "symlink":
        out.symlink_to(source)
    else:
        os.link(source, out)
    args = [str(source) if a == "IN" else a for a in command]
    args = [a.replace("OUT", str(out)) if "OUT" in a else a for a in args]
    r = run_cli_in_process(*args)
    assert_clean_error(r, str(out), "is also an input of this command")
    assert source.read_text(encoding="utf-8") == CASES
