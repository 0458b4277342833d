"""A stdio server forked by a warm template straight onto our pipes (``mcp_matrix.wire.forked``):
the shim's guarantees, without the shim.

Each test starts a real template (the ``template`` fixture of ``tests/test_warm_start.py``) and a
real ``ServerProcess`` or ``StdioTransport`` with ``fork``, and speaks MCP to the forked server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

from mcp_matrix.targets import warm_start
from mcp_matrix.wire.forked import ForkedPopen
from mcp_matrix.wire.process import ServerProcess
from tests.test_warm_start import INIT, children_of, template, wait_gone

__all__ = ["template"]  # the fixture, used by name below

MEMORY = ("matrix_servers.memory",)


def forked(path: str, *server: str, env: dict | None = None) -> ServerProcess:
    process = ServerProcess(
        warm_start.module_argv(server),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        fork=(path, list(server)),
    )
    process.start()
    return process


def initialize(process: ServerProcess) -> dict:
    popen = process.popen
    assert popen and popen.stdin and popen.stdout
    popen.stdin.write((json.dumps(INIT) + "\n").encode())
    return json.loads(popen.stdout.readline())


def test_a_forked_server_answers_on_our_pipes_in_its_own_group_and_exits_with_its_code(template):
    proc, path = template
    process = forked(path, *MEMORY)
    assert isinstance(process.popen, ForkedPopen)
    assert initialize(process)["result"]["serverInfo"]["name"] == "matrix-memory"
    [server] = children_of(proc.pid)
    assert process.pid == server and os.getpgid(server) == server  # no process in between
    process.end(stdin_grace=30.0)  # end of stdin ends it, as it would a cold one
    assert process.poll() == 0 and wait_gone(server)


def test_its_exit_code_and_stderr_reach_us_as_a_cold_servers_would(template):
    _, path = template
    process = forked(path, *MEMORY, "--schema", "no-such-variant")
    assert process.wait(60) == 2  # argparse's usage error
    process.stderr_read(timeout=10)
    assert any("invalid choice: 'no-such-variant'" in line for line in process.stderr_tail())


def test_a_signal_to_its_group_ends_it_and_wait_says_which(template):
    proc, path = template
    process = forked(path, *MEMORY)
    initialize(process)
    process.signal(signal.SIGKILL)
    assert process.wait(60) == -signal.SIGKILL
    assert children_of(proc.pid) == []


def test_a_killed_template_ends_the_server_it_forked(template):
    proc, path = template
    process = forked(path, *MEMORY)
    initialize(process)
    [server] = children_of(proc.pid)
    proc.kill()
    assert process.wait(60) == -signal.SIGKILL
    assert wait_gone(server)


# A client that forks a server and is then killed outright: its connection to the template is the
# server's lifeline, as a killed shim's was.
_CLIENT = textwrap.dedent(
    """
    import subprocess, sys, time
    from mcp_matrix.targets.warm_start import module_argv
    from mcp_matrix.wire.process import ServerProcess
    process = ServerProcess(module_argv(["matrix_servers.memory"]), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, fork=(sys.argv[1], ["matrix_servers.memory"]))
    process.start()
    print(process.pid, type(process.popen).__name__, flush=True)
    time.sleep(600)
    """
)


def test_a_client_killed_outright_takes_its_forked_server_with_it(template):
    _, path = template
    client = subprocess.Popen(
        [sys.executable, "-c", _CLIENT, path], stdout=subprocess.PIPE, text=True
    )
    assert client.stdout
    pid, kind = client.stdout.readline().split()
    assert kind == "ForkedPopen"
    client.kill()
    client.wait(timeout=30)
    assert wait_gone(int(pid))


def test_a_server_the_template_refuses_starts_cold(template):
    proc, path = template
    process = forked(path, "matrix_servers.faulty", "--mode", "ok")  # not a warm module
    assert isinstance(process.popen, subprocess.Popen)
    assert initialize(process)["result"]["serverInfo"]["name"] == "faulty"
    assert children_of(proc.pid) == []
    process.end(stdin_grace=30.0)
