"""What a warm template of a ``--stdio`` Python server must refuse, and what must not outlive a run.

A server's module that reads stdin or starts a process while it is imported is not a program a
fork can copy: the template must say so at once and every session start cold (before, one that
read stdin hung the template on its lifeline until the run gave up on it, 60 s later, and one that
started a process was forked with that process shared by every session).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from mcp_matrix.targets import warm_start
from mcp_matrix.wire.stdio import server_environment
from tests.test_warm_user import PIP_WRAPPER, script, tiny_package

READS_STDIN = "FIRST = sys.stdin.readline()"
# A server's main that says on stderr whether re's cache held its pattern, then compiles it
COMPILES = """import re
import sys

PATTERN = 'tiny-(pattern)+'


def main():
    caches = [getattr(re, name, {}) for name in ('_cache', '_cache2')]
    held = any(key[1:] == (PATTERN, 0) for cache in caches for key in cache)
    re.compile(PATTERN)
    print('cached' if held else 'compiled', file=sys.stderr)
    return 0
"""
STARTS_A_PROCESS = "import subprocess\nCHILD = subprocess.Popen(['sleep', '600'])"


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        (READS_STDIN, "read stdin"),
        ("os.close(0)", "closed a file descriptor"),  # before: said "left ... open"
        (STARTS_A_PROCESS, "started a process"),
    ],
)
def test_a_server_that_reads_stdin_or_starts_a_process_when_imported_starts_cold(
    tmp_path, monkeypatch, setup, why
):
    monkeypatch.setattr(warm_start, "READY_WAIT", 20.0)  # a hung template fails, not slowly
    name = f"tiny_{why.split()[-1]}_{len(setup)}"
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


def test_a_server_slower_to_import_than_the_handshake_bound_is_not_forked(tmp_path):
    """A cold server's imports count against --timeout-initialize; forked from a template that
    waited longer for them, the handshake would pass where the command's own fails (before: the
    first session waited up to 60 s for the template, whatever the bound)."""
    tiny_package(tmp_path, "tiny_slower", setup="import time\ntime.sleep(4)")
    command = [sys.executable, "-m", "tiny_slower"]
    # None: not forked (waiting for the import to end, the template would have been ready)
    assert warm_start.user_fork(command, server_environment({}), str(tmp_path), 1.0) is None
    assert warm_start.starts(command, "CMD") == (
        "CMD started cold: its imports took longer than 1 s (--timeout-initialize), so every "
        "session starts cold and its handshake is bounded as the command's is"
    )


def _package(folder, name: str, init: str) -> None:
    """A package ``name`` whose ``__init__`` is ``init`` and whose ``__main__`` runs its main()."""
    package = folder / name
    package.mkdir()
    (package / "__init__.py").write_text(init)
    (package / "__main__.py").write_text(f"import sys\nfrom {name} import main\nsys.exit(main())\n")


def _tiny(folder, name: str, init: str) -> tuple[list[str], dict]:
    """``python -m name`` for a package ``_package`` writes, and a minimal environment."""
    _package(folder, name, init)
    return [sys.executable, "-m", name], server_environment({})


def _both(command: list[str], cwd, env: dict) -> list[tuple]:
    """Exit code and stderr of ``command`` forked from its template, then started cold."""
    from mcp_matrix.wire.process import ServerProcess

    seen = []
    for fork in (warm_start.user_fork(command, env, str(cwd)), None):
        process = ServerProcess(
            command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, fork=fork
        )
        process.start()
        assert process.wait(30.0) is not None
        process.stderr_read(5.0)
        seen.append((process.poll(), process.stderr_tail(50)))
        process.end()
    return seen


def _ended(command: list[str], env: dict, cwd, fork):
    """One session of ``command`` (forked as ``fork`` says) that ends on its stdin's end."""
    from mcp_matrix.wire.process import ServerProcess

    process = ServerProcess(
        command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, fork=fork
    )
    process.start()
    process.end(stdin_grace=30.0)
    return process


def test_a_server_crashing_at_start_shows_the_traceback_and_code_a_cold_one_does(tmp_path):
    """Before: the forked one's traceback began with the template's own frames (warm.py,
    runpy.run_module), which the report's stderr lines showed instead of the cold ones."""
    crash = 'def main():\n    raise RuntimeError("boom at start")\n'
    _package(tmp_path, "tiny_crash", crash)
    env = server_environment({"PYTHONPATH": str(tmp_path)})
    path = script(
        tmp_path / "bin",
        PIP_WRAPPER.format(python=sys.executable, module="tiny_crash", name="main"),
    )
    for command in ([sys.executable, "-m", "tiny_crash"], [str(path)]):
        warm, cold = _both(command, tmp_path, env)
        assert warm == cold and cold[0] == 1, (warm, cold)
        assert "Traceback (most recent call last):" in cold[1] and "warm.py" not in str(warm)


def test_a_server_ended_by_ctrl_c_dies_of_sigint_as_a_cold_one_does(tmp_path):
    """Python ends on an uncaught KeyboardInterrupt by SIGINT (-2), not exit code 1."""
    interrupted = "def main():\n    raise KeyboardInterrupt\n"
    _package(tmp_path, "tiny_int", interrupted)
    env = server_environment({})
    warm, cold = _both([sys.executable, "-m", "tiny_int"], tmp_path, env)
    assert warm == cold and cold[0] == -signal.SIGINT, (warm, cold)


def test_what_a_server_writes_to_stderr_when_imported_reaches_each_session_as_cold(tmp_path):
    """Before: it reached the template's stderr once, and no session's (a report showed less)."""
    said = (
        'import sys\nprint("said while imported", file=sys.stderr)\n\n\ndef main():\n    return 3\n'
    )
    _package(tmp_path, "tiny_says", said)
    command = [sys.executable, "-m", "tiny_says"]
    warm, cold = _both(command, tmp_path, server_environment({}))
    assert warm == cold == (3, ("said while imported",)), (warm, cold)


def test_a_module_imported_once_the_server_ran_that_writes_to_stderr_stops_the_forking(tmp_path):
    """The template imports what a server imported once it ran, so the next server does not:
    one whose import writes to stderr would then be missing from every later session's stderr."""

    _package(tmp_path, "tiny_later", "def main():\n    import tiny_later.noisy\n    return 0\n")
    (tmp_path / "tiny_later" / "noisy.py").write_text(
        'import sys\nprint("said later", file=sys.stderr)\n'
    )
    command, env = [sys.executable, "-m", "tiny_later"], server_environment({})
    for _ in range(2):
        process = _ended(command, env, tmp_path, warm_start.user_fork(command, env, str(tmp_path)))
        process.stderr_read(5.0)
        assert (process.poll(), process.stderr_tail()) == (0, ("said later",))
    # the template reads the first server's imports before it reads the next request, and
    # says so on its stdout, which a thread here reads (waited for, not timed)
    why = "CMD started cold: importing what a server imported once it ran wrote to stderr"
    deadline = time.monotonic() + 30
    while not warm_start.starts(command, "CMD").startswith(why) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert warm_start.starts(command, "CMD").startswith(why)


def test_a_server_ending_itself_with_os_exit_teaches_the_template_what_it_imported(tmp_path):
    """The bundled servers end with os._exit (skipping the interpreter's teardown); before, such
    a server left no lesson, so every fork imported again what the first had (the memory server
    run by --stdio: about 1 s of CPU per session instead of 20-70 ms). Its exit code is kept."""
    ends = "import os\n\n\ndef main():\n    import tiny_exits.later\n    os._exit(5)\n"
    _package(tmp_path, "tiny_exits", ends)
    (tmp_path / "tiny_exits" / "later.py").write_text("LATER = 1\n")
    command = [sys.executable, "-m", "tiny_exits"]
    warm, cold = _both(command, tmp_path, server_environment({}))
    assert warm == cold and cold[0] == 5, (warm, cold)
    template = next(t for key, t in warm_start._user.items() if key[0] == tuple(command))
    deadline = time.monotonic() + 30  # read from its stdout by a thread here: waited, not timed
    while not template.learned and time.monotonic() < deadline:
        time.sleep(0.05)
    assert template.learned >= 1 and not template.cold


def test_what_a_server_imported_once_it_ran_is_imported_in_its_order(tmp_path):
    """Before, the template imported a lesson sorted by name: ``_asyncio`` before ``asyncio``,
    after which every forked server's asyncio lost track of its tasks (``current_task()`` None;
    anyio's run raised AttributeError, so each later session of the memory server by --stdio
    crashed)."""
    runs = (
        "def main():\n    import asyncio\n\n    async def ask():\n"
        "        return asyncio.current_task() is not None\n\n"
        "    return 0 if asyncio.run(ask()) else 3\n"
    )
    command, env = _tiny(tmp_path, "tiny_aio", runs)
    codes = []
    for _ in range(2):
        fork = warm_start.user_fork(command, env, str(tmp_path))
        assert fork is not None
        codes.append(_ended(command, env, tmp_path, fork).poll())
        assert _learned(command, 1)
    assert codes == [0, 0]


def _started(command: list[str], env: dict, cwd):
    """A session of ``command`` forked from its template, its stdin left open."""
    from mcp_matrix.wire.process import ServerProcess

    fork = warm_start.user_fork(command, env, str(cwd))
    assert fork is not None
    process = ServerProcess(
        command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, fork=fork
    )
    process.start()
    return process


def _learned(command: list[str], at_least: int) -> int:
    """How many modules the template of ``command`` has imported from lessons, once it is
    ``at_least`` or 30 s have passed (read from its stdout by a thread here: waited, not timed)."""
    template = next(t for key, t in warm_start._user.items() if key[0] == tuple(command))
    deadline = time.monotonic() + 30
    while template.learned < at_least and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not template.cold
    return template.learned


def test_a_server_that_imports_more_once_called_teaches_the_template_after_others_did(tmp_path):
    """Before, a template took three lessons at most, counting those it had learned already:
    the three servers a run forks together at its start each left the same lesson, and what later
    servers imported once called was imported again by each of them (mcp-server-time's first log
    line imports rich.table: 30 of its 34 sessions in a run did)."""
    runs = (
        "import sys\n\n\ndef main():\n    import tiny_calls.listed\n\n"
        "    if sys.stdin.readline().strip() == 'call':\n        import tiny_calls.called\n"
        "    return 0\n"
    )
    _package(tmp_path, "tiny_calls", runs)
    (tmp_path / "tiny_calls" / "listed.py").write_text("LISTED = 1\n")
    (tmp_path / "tiny_calls" / "called.py").write_text("CALLED = 1\n")
    command, env = [sys.executable, "-m", "tiny_calls"], server_environment({})
    together = [_started(command, env, tmp_path) for _ in range(3)]
    for process in together:  # each imported tiny_calls.listed: the same lesson three times
        process.end(stdin_grace=30.0)
        assert process.poll() == 0
    assert _learned(command, 1) == 1
    called = _started(command, env, tmp_path)
    assert called.popen is not None and called.popen.stdin is not None
    called.popen.stdin.write(b"call\n")
    called.end(stdin_grace=30.0)
    assert called.poll() == 0
    assert _learned(command, 2) == 2


def test_a_regular_expression_a_server_compiled_once_it_ran_is_compiled_by_the_template(tmp_path):
    """argparse and rich's log highlighter compile theirs when first used: before, every forked
    server compiled them again (about 2 ms of CPU each for mcp-server-time, whose sessions each
    log a call). The server here says whether re's cache held its pattern before it compiled it:
    a template's internal state, which nothing else a server does can see."""
    command, env = _tiny(tmp_path, "tiny_regex", COMPILES)
    said = []
    for _ in range(2):
        process = _ended(command, env, tmp_path, warm_start.user_fork(command, env, str(tmp_path)))
        process.stderr_read(5.0)
        said.append((process.poll(), process.stderr_tail()))
        _learned(command, 1)
    assert said == [(0, ("compiled",)), (0, ("cached",))]
