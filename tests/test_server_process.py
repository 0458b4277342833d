"""Every child process we start is one ``ServerProcess`` (``mcp_matrix.wire.process``), so a
bundled server over HTTP keeps its stderr as a stdio one does (it was read and dropped: the
bundled-server test failed before)."""

from __future__ import annotations

import sys

import pytest

from mcp_matrix.wire.process import ServerProcess
from tests.conftest import NEUTRAL_CWD, read_json, run_cli


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_a_bundled_server_over_http_keeps_its_stderr(tmp_path, transport):
    out = tmp_path / "s.json"
    spec = "memory --schema bogus"  # the server's argparse refuses it on stderr, then exits
    r = run_cli("snapshot", "--server", spec, "--server-transport", transport, "-o", str(out))
    assert r.returncode == 3, r.stderr
    error = read_json(out)["error"]
    assert error["kind"] == "server-exited"
    assert any("invalid choice: 'bogus'" in line for line in error["stderr_tail"]), error
    assert "invalid choice: 'bogus'" in r.stderr


def test_a_server_process_keeps_the_last_lines_of_stderr():
    proc = ServerProcess(
        [sys.executable, "-c", "import sys; [print(i, file=sys.stderr) for i in range(300)]"],
        cwd=NEUTRAL_CWD,
    )
    proc.start()
    proc.wait(timeout=30)
    proc.end()
    proc.stderr_read(timeout=30)  # the reader thread may still be draining the pipe (load)
    assert proc.stderr_tail(3) == ("297", "298", "299")
