"""A user's own Python server given with ``--stdio``, forked from a warm template of its command.

``mcp_matrix.targets.python_command`` recognises a pip or uv console script and ``python -m
MODULE`` and nothing else; the template (``servers/warm.py --user``) imports what the command
imports and forks each session, or says why it cannot and every session starts cold. The tests
run the real CLI against real servers: ``mcp-server-time`` from PyPI and a small standard-library
server written here, whose one tool answers with what its process sees (``sys.path[0]``,
``sys.argv``, ``__name__``, the directory), so warm and cold must answer alike.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from mcp_matrix.run.results import read_events
from mcp_matrix.targets.python_command import recognise
from tests.conftest import installed_tool

# A server speaking just enough MCP over stdio (standard library only). ``SETUP`` runs when the
# module is imported: the thread test starts a thread there.
TINY = """
import json, os, sys
{setup}
TOOL = {{"name": "whoami", "description": "What this process sees.",
        "inputSchema": {{"type": "object", "properties": {{}}}},
        "annotations": {{"readOnlyHint": True}}}}


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {{"protocolVersion": msg["params"]["protocolVersion"],
                      "capabilities": {{"tools": {{}}}},
                      "serverInfo": {{"name": "tiny", "version": "1"}}}}
        elif method == "tools/list":
            result = {{"tools": [TOOL]}}
        elif method == "tools/call":
            seen = {{"path0": sys.path[0], "argv": sys.argv, "main": sys.modules["__main__"].__name__,
                    "cwd": os.getcwd()}}
            result = {{"content": [{{"type": "text", "text": json.dumps(seen)}}]}}
        else:
            print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"],
                              "error": {{"code": -32601, "message": "no such method"}}}}), flush=True)
            continue
        print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": result}}), flush=True)
    return 0
"""
THREAD = (
    "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), daemon=True).start()"
)

PIP_WRAPPER = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from {module} import {name}
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit({name}())
"""
UV_WRAPPER = """#!{python}
# -*- coding: utf-8 -*-
import sys
from {module} import {name}
if __name__ == "__main__":
    if sys.argv[0].endswith("-script.pyw"):
        sys.argv[0] = sys.argv[0][:-11]
    elif sys.argv[0].endswith(".exe"):
        sys.argv[0] = sys.argv[0][:-4]
    sys.exit({name}())
"""

# pip 25 and later (what a fresh virtual environment's upgraded pip writes)
PIP25_WRAPPER = """#!{python}
import sys
from {module} import {name}
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit({name}())
"""


def tiny_package(folder: Path, name: str, setup: str = "") -> Path:
    package = folder / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TINY.format(setup=setup))
    (package / "__main__.py").write_text(f"import sys\nfrom {name} import main\nsys.exit(main())\n")
    return package


def script(folder: Path, text: str, name: str = "tiny-server") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_recognises_pip_and_uv_console_scripts_and_python_m_and_nothing_else(tmp_path):
    env = {"PATH": str(tmp_path / "bin")}
    for wrapper in (PIP_WRAPPER, PIP25_WRAPPER, UV_WRAPPER):
        script(tmp_path / "bin", wrapper.format(python=sys.executable, module="a.b", name="main"))
        found = recognise(["tiny-server", "--x"], env, None)
        assert found is not None and (found.mode, found.module) == ("script", "a.b")
        assert found.interpreter == sys.executable
        assert found.argv == (str(tmp_path / "bin" / "tiny-server"), "--x")
    refused = {
        "an extra line": PIP_WRAPPER.replace("import sys\n", "import sys\nimport os\n"),
        "a shebang with a flag": PIP_WRAPPER.replace("{python}", "{python} -E"),
        "a shebang through env": PIP_WRAPPER.replace("#!{python}", "#!/usr/bin/env python3"),
        "not a Python interpreter": PIP_WRAPPER.replace("{python}", "/bin/sh"),
    }
    for why, text in refused.items():
        script(tmp_path / "bin", text.format(python=sys.executable, module="a", name="main"))
        assert recognise(["tiny-server"], env, None) is None, why
    assert recognise(["sh", "-c", "exec python -m a"], {"PATH": "/bin:/usr/bin"}, None) is None
    python = {"PATH": str(Path(sys.executable).parent)}
    name = Path(sys.executable).name
    assert recognise([name, "-m", "pkg.mod", "x"], python, None) is not None
    assert recognise([name, "-u", "-m", "pkg"], python, None) is None  # a flag before -m
    assert recognise([name, "server.py"], python, None) is None


def _run(cli, tmp_path: Path, tag: str, *target: str, warm: str = "1", client=("claude-code",)):
    out = tmp_path / f"{tag}-{warm}.jsonl"
    done = cli(
        "run", *target, *(a for c in client for a in ("--client", c)),
        "--results", str(out), "--quiet", "--verbose",
        env={"MCP_MATRIX_WARM_SERVERS": warm},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    line = re.search(r"^server processes: (.*)$", done.stdout, re.MULTILINE)
    assert line, done.stdout
    return _cells(out), line.group(1)


def _cells(path: Path) -> list[tuple]:
    cells = []
    for event in read_events(path):  # the stream's values stored once are put back in place
        if event.get("event") in ("discovery", "call"):
            answer = json.dumps(event.get("answer"), sort_keys=True)
            answer = re.sub(r"\d{4}-\d\d-\d\dT[0-9:.+\-]+", "T", answer)  # the time server's now
            cell = (event["event"], event.get("profile"), event.get("tool"), event["verdict"])
            cells.append((*cell, event.get("reason"), answer))
    return sorted(cells)


def test_mcp_server_time_through_two_profiles_gives_the_same_cells_warm_and_cold(cli, tmp_path):
    exe = installed_tool("mcp-server-time")
    assert exe, "the test extra installs mcp-server-time from PyPI"
    target = ("--stdio", f"{exe} --local-timezone UTC")
    clients = ("claude-code", "codex-raw")
    warm, how = _run(cli, tmp_path, "time", *target, client=clients)
    forked = re.fullmatch(r"(\d+) sessions forked from a warm template of .*mcp-server-time.*", how)
    assert forked, how
    # one process per session: the snapshot's, the eras probe's and each profile's calls
    assert int(forked.group(1)) >= len(clients)
    cold, how = _run(cli, tmp_path, "time", *target, warm="0", client=clients)
    assert "started cold: warm start is off" in how
    assert warm and warm == cold


def test_a_python_m_server_sees_what_its_command_would_warm_or_cold(cli, tmp_path):
    """``python -m`` puts the directory first on ``sys.path`` (the module is found there only);
    the forked server sees the same path, argv, ``__main__`` and directory as a cold one."""
    tiny_package(tmp_path / "work", "tiny_m")
    target = ("--stdio", f"{sys.executable} -m tiny_m --flag", "--cwd", str(tmp_path / "work"))
    warm, how = _run(cli, tmp_path, "m", *target)
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .* -m tiny_m --flag", how)
    cold, _ = _run(cli, tmp_path, "m", *target, warm="0")
    assert warm == cold
    flag, how = _run(cli, tmp_path, "m-flag", *target, "--cold-start")
    assert re.search(r"tiny_m --flag started cold: --cold-start \(\d+ processes\)$", how)
    assert flag == cold
    seen = [c for c in warm if c[0] == "call" and "path0" in c[-1]]
    assert seen and str(tmp_path / "work") in seen[0][-1]


def test_a_console_script_sees_what_its_command_would_warm_or_cold(cli, tmp_path):
    """A console script's ``sys.path[0]`` is its own folder, not the directory it runs in."""
    tiny_package(tmp_path / "lib", "tiny_script")
    text = PIP_WRAPPER.format(python=sys.executable, module="tiny_script", name="main")
    path = script(tmp_path / "bin", text)
    target = ("--stdio", f"{path} a b", "--env", f"PYTHONPATH={tmp_path / 'lib'}")
    warm, how = _run(cli, tmp_path, "script", *target)
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .*tiny-server a b", how)
    cold, _ = _run(cli, tmp_path, "script", *target, warm="0")
    assert warm == cold
    assert any(str(tmp_path / "bin") in c[-1] for c in warm if c[0] == "call")


def test_a_server_that_starts_a_thread_when_imported_starts_every_session_cold(cli, tmp_path):
    tiny_package(tmp_path / "work", "tiny_thread", setup=THREAD)
    target = ("--stdio", f"{sys.executable} -m tiny_thread", "--cwd", str(tmp_path / "work"))
    cells, how = _run(cli, tmp_path, "thread", *target)
    assert re.search(
        r"started cold: importing tiny_thread started a thread \(\d+ processes\)$", how
    )
    assert any(c[0] == "call" and c[3] == "intact" for c in cells), cells


def test_a_command_that_is_not_a_python_program_starts_cold(cli, tmp_path):
    tiny_package(tmp_path / "work", "tiny_sh")
    command = f"sh -c 'exec {sys.executable} -m tiny_sh'"
    cells, how = _run(cli, tmp_path, "sh", "--stdio", command, "--cwd", str(tmp_path / "work"))
    cold = re.search(
        r"started cold: not a Python console script, python -m MODULE or python SCRIPT "
        r"beginning with its imports \((\d+) processes\)$",
        how,
    )
    assert cold, how
    # each process it started is counted: at least the snapshot's and the calls' session
    assert int(cold.group(1)) >= 2, how
    assert any(c[0] == "call" and c[3] == "intact" for c in cells), cells


def _faulty(cli, tmp_path: Path, mode: str, warm: str, *extra: str):
    (tmp_path / "work").mkdir(exist_ok=True)
    target = ("--stdio", f"{sys.executable} -m matrix_servers.faulty --mode {mode}")
    where = ("--cwd", str(tmp_path / "work"))
    return _run(cli, tmp_path, mode, *target, *where, *extra, warm=warm, client=("continue",))


def test_a_forked_server_that_crashes_on_a_call_is_broken_as_a_cold_one(cli, tmp_path):
    warm, how = _faulty(cli, tmp_path, "crash-on-call", "1", "--timeout-call", "10")
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .*crash-on-call", how), how
    cold, _ = _faulty(cli, tmp_path, "crash-on-call", "0", "--timeout-call", "10")
    assert warm == cold
    assert any(c[0] == "call" and c[3] == "broken" for c in warm), warm


def _in(folder: Path) -> list[int]:
    """Processes running in ``folder`` (a forked server runs where its command would)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").resolve() == folder.resolve():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_a_forked_server_that_hangs_is_ended_by_the_call_timeout_and_its_run(cli, tmp_path):
    cells, how = _faulty(cli, tmp_path, "hang-on-call", "1", "--timeout-call", "2")
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .*hang-on-call", how), how
    broken = [c for c in cells if c[0] == "call" and c[3] == "broken"]
    assert broken and all("the timeout is ours" in c[4] for c in broken), cells
    # the run has ended: its template and every server forked from it end too (bounded wait)
    deadline = time.monotonic() + 60
    while _in(tmp_path / "work") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _in(tmp_path / "work") == []


LAZY = """
import os, sys
with open(os.environ["TINY_MARKS"], "a") as f:  # who imported this module
    f.write(f"{os.getpid()}\\n")
"""


def test_what_a_forked_server_imported_once_it_ran_is_imported_by_the_template_next(tmp_path):
    """A server that imports a module only once it runs (``argparse`` in many ``main``s) leaves
    its name; the template imports it before the next fork, so the next server does not."""
    from mcp_matrix.targets import warm_start
    from mcp_matrix.wire.process import ServerProcess
    from mcp_matrix.wire.stdio import server_environment

    work = tmp_path / "work"
    package = tiny_package(work, "tiny_lazy")
    (package / "runtime_only.py").write_text(LAZY)
    main = (
        (package / "__init__.py")
        .read_text()
        .replace("def main():\n", "def main():\n    import tiny_lazy.runtime_only  # noqa: F401\n")
    )
    (package / "__init__.py").write_text(main)
    marks = tmp_path / "marks"
    command = [sys.executable, "-m", "tiny_lazy"]
    env = server_environment({"TINY_MARKS": str(marks)})
    pids = []
    for _ in range(2):
        fork = warm_start.user_fork(command, env, str(work))
        assert fork is not None
        process = ServerProcess(
            command, env=env, cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, fork=fork
        )
        process.start()
        pids.append(process.pid)
        process.end(
            stdin_grace=30.0
        )  # it ends by itself on its stdin's end, and says what it imported
        assert process.poll() == 0
    imported_by = [int(line) for line in marks.read_text().split()]
    # the first server imported it; then the template did (a pid of neither); the second did not
    assert imported_by[0] == pids[0] and len(imported_by) == 2
    assert imported_by[1] not in pids


def test_a_second_run_in_one_process_runs_the_code_as_edited_and_counts_its_own(tmp_path):
    """A caller of the API (or the pytest plugin) running one target twice, editing the server
    in between: the second run's sessions were forked from the first run's template, which had
    imported the old code; and ``--verbose``'s counts added up across the runs."""
    from mcp_matrix import api

    package = tiny_package(tmp_path, "tiny_edited")
    target = api.target(stdio=[sys.executable, "-m", "tiny_edited"], cwd=str(tmp_path))

    def run() -> tuple[str, str]:
        out = api.run(target, profiles=api.profiles(["claude-code"]), timeouts=api.Timeouts())
        tools = next(e for e in out.events if e.KIND == "snapshot").snapshot["tools"]
        assert out.work is not None
        return tools[0]["tool"]["description"], out.work.starts

    first, starts = run()
    init = package / "__init__.py"
    init.write_text(init.read_text().replace("What this process sees.", "Edited since."))
    assert run() == ("Edited since.", starts)
    assert first == "What this process sees." and "forked from a warm template" in starts
