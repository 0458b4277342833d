"""What a warm template of a ``--stdio`` Python server must refuse, and what must not outlive a run.

A server's module that reads stdin or starts a process while it is imported is not a program a
fork can copy: the template must say so at once and every session start cold (before, one that
read stdin hung the template on its lifeline until the run gave up on it, 60 s later, and one that
started a process was forked with that process shared by every session).
"""

from __future__ import annotations

import sys
import time

import pytest

from mcp_matrix.targets import warm_start
from mcp_matrix.wire.stdio import server_environment
from tests.test_warm_user import tiny_package

READS_STDIN = "FIRST = sys.stdin.readline()"
STARTS_A_PROCESS = "import subprocess\nCHILD = subprocess.Popen(['sleep', '600'])"


@pytest.mark.parametrize(
    ("setup", "why"), [(READS_STDIN, "read stdin"), (STARTS_A_PROCESS, "started a process")]
)
def test_a_server_that_reads_stdin_or_starts_a_process_when_imported_starts_cold(
    tmp_path, monkeypatch, setup, why
):
    monkeypatch.setattr(warm_start, "READY_WAIT", 20.0)  # a hung template fails, not slowly
    name = "tiny_" + why.split()[-1]
    tiny_package(tmp_path, name, setup=setup)
    command = [sys.executable, "-m", name]
    assert warm_start.user_fork(command, server_environment({}), str(tmp_path)) is None
    shown = " ".join(command)
    assert warm_start.starts(command, shown) == (f"{shown} started cold: importing {name} {why}")


def test_a_template_given_up_for_its_slowness_says_so(tmp_path, monkeypatch):
    """Not 'the template ended': that is what it did once it was ended for being slow."""
    monkeypatch.setattr(warm_start, "READY_WAIT", 1.0)
    tiny_package(tmp_path, "tiny_slow", setup="import time\ntime.sleep(30)")
    command = [sys.executable, "-m", "tiny_slow"]
    assert warm_start.user_fork(command, server_environment({}), str(tmp_path)) is None
    time.sleep(0.5)  # the template's stdout has ended meanwhile
    assert (
        warm_start.starts(command, "CMD")
        == "CMD started cold: the template was not ready within 1 s"
    )
