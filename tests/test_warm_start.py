"""Bundled SDK servers forked from one warm template: the same servers, fewer imports.

Each test starts a real template (``python -m matrix_servers.warm``) and real shims, as
``mcp_matrix.targets.warm_start`` does, and speaks MCP to the forked server over the shim's own pipes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import matrix_servers.warm as template_module
import pytest

from mcp_matrix.run.results import read_events
from mcp_matrix.targets import warm_start
from mcp_matrix.targets.kinds import Target
from tests.servers.conftest import RAW_HANDSHAKE

SHIM = str(Path(template_module.__file__).with_name("warm_shim.py"))
INIT = RAW_HANDSHAKE[0]


@pytest.fixture
def template(tmp_path):
    """A running template on a socket in ``tmp_path``; its socket path."""
    path = str(tmp_path / "s")
    proc = subprocess.Popen(
        warm_start.module_argv(("matrix_servers.warm", path)),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    # These tests are about what the template does once it listens, not about how fast it
    # starts: on a loaded machine its start-up can outlast the shim's connect wait, and the shim
    # then (rightly) starts the server cold, which is not what they check.
    waited = time.monotonic() + 120
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < waited:
        time.sleep(0.05)
    yield proc, path
    if proc.stdin:
        proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def shim(
    path: str, *server: str, env: dict | None = None, cwd: Path | None = None
) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-S", "-I", SHIM, path, "--", *server],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )


def initialize(proc: subprocess.Popen) -> dict:
    assert proc.stdin and proc.stdout
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def wait_gone(pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_warm_server_answers_over_the_shims_own_pipes_in_a_process_of_its_own(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory")
    answer = initialize(client)
    assert answer["result"]["serverInfo"]["name"] == "matrix-memory"
    [server_pid] = children_of(proc.pid)
    assert server_pid not in (proc.pid, client.pid)
    assert os.getpgid(server_pid) == server_pid  # its own group, which signals are sent to
    assert client.stdin
    client.stdin.close()  # end of stdin ends a stdio server, as it would a cold one
    assert client.wait(timeout=60) == 0
    assert wait_gone(server_pid)


def test_the_shim_exits_with_the_servers_code_and_passes_on_its_stderr(template):
    _, path = template
    client = shim(path, "matrix_servers.memory", "--schema", "no-such-variant")
    _, err = client.communicate(timeout=60)
    assert client.returncode == 2  # argparse's usage error, as `python -m` would exit
    assert b"invalid choice: 'no-such-variant'" in err


def test_sigterm_to_the_shims_group_ends_the_server_and_the_shim_ends_the_same_way(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory")
    initialize(client)
    [server_pid] = children_of(proc.pid)
    os.killpg(client.pid, signal.SIGTERM)  # what StdioTransport.close sends
    code = client.wait(timeout=60)
    assert wait_gone(server_pid)
    assert code in (0, -signal.SIGTERM)  # the SDK server exits 0 on SIGTERM or dies of it


def test_a_shim_killed_outright_takes_its_server_with_it(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory")
    initialize(client)
    [server_pid] = children_of(proc.pid)
    os.killpg(client.pid, signal.SIGKILL)
    client.wait(timeout=30)
    assert wait_gone(server_pid), "the server outlived its killed shim"


def test_the_server_gets_the_shims_environment_and_directory(template, tmp_path):
    proc, path = template
    temp, work = tmp_path / "temp", tmp_path / "cwd"
    temp.mkdir()
    work.mkdir()
    client = shim(path, "matrix_servers.gateway", env={**os.environ, "TMPDIR": str(temp)}, cwd=work)
    initialize(client)
    [server_pid] = children_of(proc.pid)
    # The gateway server keeps its database in a temporary directory: under this TMPDIR.
    assert [d.name[:15] for d in temp.iterdir()] == ["matrix-gateway-"]
    assert Path(f"/proc/{server_pid}/cwd").resolve() == work.resolve()
    assert client.stdin
    client.stdin.close()
    client.wait(timeout=60)


def test_a_server_the_template_does_not_hold_starts_cold_through_the_shim(template):
    proc, path = template
    client = shim(path, "matrix_servers.faulty", "--mode", "ok")
    assert "result" in initialize(client)
    assert children_of(proc.pid) == []  # not forked: the shim became the cold server
    # The refused request left no copy of the pipes in the template: stdout ends with the server.
    client.communicate(timeout=60)
    assert client.returncode == 0


def test_other_interpreter_settings_start_the_server_cold(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory", env={**os.environ, "PYTHONWARNINGS": "error"})
    assert initialize(client)["result"]["serverInfo"]["name"] == "matrix-memory"
    assert children_of(proc.pid) == []  # a fork would keep the template's warning filters
    client.communicate(timeout=60)


def test_a_server_exit_and_its_shims_death_in_one_wakeup_leave_the_template_serving(template):
    proc, path = template
    first = shim(path, "matrix_servers.memory")
    initialize(first)
    [server] = children_of(proc.pid)
    os.kill(proc.pid, signal.SIGSTOP)  # both events wait for the template's next select()
    try:
        first.stdin.close()  # the server ends on its stdin's end...
        assert wait_gone(server)
        os.killpg(first.pid, signal.SIGKILL)  # ...and its shim dies before the template looks
        first.wait(timeout=30)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    second = shim(path, "matrix_servers.memory")
    assert initialize(second)["result"]["serverInfo"]["name"] == "matrix-memory"
    assert proc.poll() is None and len(children_of(proc.pid)) == 1  # forked, by the same template
    second.stdin.close()
    second.wait(timeout=60)


def test_a_killed_template_shows_each_shim_an_end_and_the_shim_ends_its_server(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory")
    initialize(client)
    [server] = children_of(proc.pid)
    proc.kill()
    assert client.wait(timeout=60) == 1
    assert wait_gone(server)


def test_when_the_client_ends_its_servers_exit_on_their_own_and_clean_up(template, tmp_path):
    proc, path = template
    temp = tmp_path / "temp"
    temp.mkdir()
    client = shim(path, "matrix_servers.gateway", env={**os.environ, "TMPDIR": str(temp)})
    initialize(client)
    assert [d.name[:15] for d in temp.iterdir()] == ["matrix-gateway-"]  # its database's
    # The client process ending closes both its server's stdin and the template's lifeline.
    client.stdin.close()
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert client.wait(timeout=30) == 0  # the server exited by itself, not killed
    assert list(temp.iterdir()) == []  # and removed its database


def test_the_template_ends_when_its_lifeline_closes_and_takes_running_servers(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory")
    initialize(client)
    [server_pid] = children_of(proc.pid)
    assert proc.stdin
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert wait_gone(server_pid)
    client.wait(timeout=30)
    assert not Path(path).exists()  # its socket goes with it


def test_a_shim_whose_template_was_killed_starts_the_server_cold(template):
    proc, path = template
    client = shim(path, "matrix_servers.memory")
    initialize(client)  # the template is up and has its socket
    client.stdin.close()
    client.wait(timeout=60)
    proc.kill()
    proc.wait(timeout=30)
    assert Path(path).exists()  # SIGKILL left the socket file, with no one listening
    late = shim(path, "matrix_servers.memory")
    assert initialize(late)["result"]["serverInfo"]["name"] == "matrix-memory"
    late.stdin.close()
    assert late.wait(timeout=60) == 0


def test_bundled_sdk_servers_start_warm_unless_turned_off_and_others_always_cold(monkeypatch):
    warm = warm_start.server_command(("matrix_servers.memory", "--schema", "anyof"))
    assert warm[:4] == [sys.executable, "-S", "-I", SHIM] and warm[-3:] == [
        "matrix_servers.memory",
        "--schema",
        "anyof",
    ]
    cold = warm_start.module_argv(("matrix_servers.faulty", "--mode", "ok"))
    assert warm_start.server_command(("matrix_servers.faulty", "--mode", "ok")) == cold
    monkeypatch.setenv(warm_start.WARM_ENV, "0")
    memory = warm_start.module_argv(("matrix_servers.memory",))
    assert warm_start.server_command(("matrix_servers.memory",)) == memory
    # What a user copies out of a report stays the cold command either way.
    assert Target.bundled("memory").server_argv() == memory
    # Never importing from the current directory (tests/hostile/test_cwd_imports.py).
    assert memory[:3] == [sys.executable, "-P", "-m"] or memory[1] == "-c"


def test_the_warm_modules_are_the_bundled_servers_built_on_the_sdk():
    assert warm_start.WARM_MODULES == set(template_module.WARM_MODULES)
    servers = Path(template_module.__file__).parent
    on_sdk = {
        f"matrix_servers.{d.name}"
        for d in servers.iterdir()
        if (d / "__main__.py").is_file()
        and any(
            re.search(r"^(from|import) (mcp|\.\.serving)\b", f.read_text(), re.MULTILINE)
            for f in d.glob("*.py")
        )
    }
    assert on_sdk == set(template_module.WARM_MODULES)


def _cells(path: Path) -> list[tuple]:
    cells = []
    for event in read_events(path):  # a version-3 stream names its shared parts by number
        if event["event"] in ("discovery", "call"):
            text = json.dumps(event.get("answer"), sort_keys=True)
            text = re.sub(r"\d{4}-\d\d-\d\dT[0-9:.+]+", "T", text)  # created_at stamps
            cells.append(
                (
                    event["event"],
                    event.get("profile"),
                    event.get("tool"),
                    event.get("case"),
                    event["verdict"],
                    event.get("reason"),
                    json.dumps(event.get("findings"), sort_keys=True),
                    text,
                )
            )
    return sorted(cells)


def test_a_run_gives_the_same_cells_warm_and_cold(cli, tmp_path, monkeypatch):
    results = {}
    for mode in ("1", "0"):
        monkeypatch.setenv(warm_start.WARM_ENV, mode)
        out = tmp_path / f"warm-{mode}.jsonl"
        done = cli(
            "run", "--server", "memory --schema anyof", "--client", "claude-code",
            "--client", "continue", "--results", str(out), "--quiet",
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        results[mode] = _cells(out)
    assert results["1"] and results["1"] == results["0"]


# A template's preload, then each warm server forked onto pipes for a session (initialize,
# tools/list, every tool called with no arguments, end of input); prints, per server, the modules
# the forked server imported that the template had not.
_IMPORTS_AFTER_FORK = r"""
import json, os, sys
import matrix_servers.warm as warm
warm.preload()
loaded = set(sys.modules)
init, initialized = json.loads(sys.argv[1]), {"jsonrpc": "2.0", "method": "notifications/initialized"}
for module in warm.WARM_MODULES:
    to_server, server_in = os.pipe()
    server_out, from_server = os.pipe()
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (server_in, server_out, report_r):
            os.close(fd)
        os.dup2(to_server, 0)
        os.dup2(from_server, 1)
        sys.argv = [module]
        main = __import__(f"{module}.__main__", fromlist=["main"]).main
        try:
            main([])
        finally:
            os.write(report_w, json.dumps(sorted(set(sys.modules) - loaded)).encode())
            os._exit(0)
    for fd in (to_server, from_server, report_w):
        os.close(fd)
    send, answers = os.fdopen(server_in, "wb"), os.fdopen(server_out, "rb")
    def ask(message):
        send.write((json.dumps(message) + "\n").encode())
        send.flush()
        return json.loads(answers.readline()) if "id" in message else None
    ask(init)
    ask(initialized)
    tools = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})["result"]["tools"]
    for n, tool in enumerate(tools):
        ask({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
             "params": {"name": tool["name"], "arguments": {}}})
    send.close()
    os.waitpid(pid, 0)
    print(module, len(tools), os.fdopen(report_r, "rb").read().decode())
"""


def test_a_forked_server_imports_nothing_for_a_session_of_calls():
    """What a server imports once it runs (anyio's loop backend, jsonschema at the first call) is
    imported by the template: a forked server that imported it again paid about 45 ms of its
    75 ms of CPU for each session (``LAZY_MODULES``)."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS_AFTER_FORK, json.dumps(INIT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(template_module.WARM_MODULES)
    for line in lines:
        module, tools, imported = line.split(" ", 2)
        assert int(tools) > 0, module  # every tool was called, so validation ran
        assert json.loads(imported) == [], f"{module} imported after the fork: {imported}"


def test_the_shim_imports_only_what_a_bare_interpreter_loads_cheaply():
    """A shim starts for every session: ``json``, ``socket`` and ``signal`` import ``re``,
    ``enum`` and ``selectors``, two thirds of its CPU; it takes their C modules instead."""
    import ast

    tree = ast.parse(Path(SHIM).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"_json", "_signal", "_socket", "os", "struct", "sys", "time"}, imported


def test_the_bundled_template_compiles_what_each_bundled_server_compiles_when_it_parses_its_arguments():
    """argparse compiles four patterns for a server's first parser: before, each forked bundled
    server compiled them (90 per default run)."""
    code = (
        "from matrix_servers import warm\nwarm.preload()\n"
        "from matrix_servers.memory.__main__ import parse_args\nbefore = warm.compiled()\n"
        "parse_args([])\nprint(sorted(warm.compiled() - before))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr[-2000:]


def test_a_template_reads_res_cache_only_where_it_is_a_dict(monkeypatch):
    """re's cache is internal (``_cache``; ``_cache2`` from 3.12): a Python where it is not a
    dict leaves patterns out of lessons, and its template still starts (before: TypeError)."""
    from types import SimpleNamespace

    monkeypatch.setattr(template_module, "re", SimpleNamespace(_cache=None))
    assert (template_module.cached(), template_module.compiled()) == (0, set())
    held = {(str, "a+", 0): None, (bytes, b"b+", 0): None}
    monkeypatch.setattr(template_module, "re", SimpleNamespace(_cache=held, _cache2=[1]))
    assert (template_module.cached(), template_module.compiled()) == (2, {("a+", 0)})
