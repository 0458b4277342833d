"""A ``--stdio`` server given as ``npx -y PKG ARGS`` is resolved once per run
(``mcp_matrix.targets.npx_command``): the first session runs npx, every later one the process npx
started, with its argv, environment and directory. The run's cells are the same as with npx for
every session (``--cold-start``); the real ``npx`` and ``@modelcontextprotocol/server-memory``
from npm. ``find_server`` is tried on real process trees of the shapes it must accept or refuse.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mcp_matrix.targets.launcher import Resolved
from mcp_matrix.targets.npx_command import find_server, npx_args, npx_refused
from tests.test_warm_user import THREAD, _cells, script, tiny_package

MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"


def test_recognises_npx_with_yes_and_package_flags_and_nothing_else():
    assert npx_args(["npx", "-y", MEMORY]) == ()
    assert npx_args(["/usr/bin/npx", "--yes", "pkg", "--flag", "-y"]) == ("--flag", "-y")
    assert npx_args(["npx", "-p", "a", "--package=b", "--package", "c", "bin", "x"]) == ("x",)
    assert npx_args(["npx", "pkg"]) == ()
    assert npx_args(["npm", "exec", "--yes", "pkg", "a1"]) == ("a1",)
    assert npx_args(["npm", "x", "-y", "--", "pkg", "--flag", "-y"]) == ("--flag", "-y")
    assert npx_args(["/usr/bin/npm", "exec", "--package=p", "--", "bin", "x"]) == ("x",)
    assert npx_args(("npm", "exec", "--", "pkg")) == ()  # a Target's command is a tuple
    for other in (
        ["npx"],
        ["npx", "-y"],
        ["npx", "--no-install", "pkg"],
        ["npx", "-c", "pkg"],
        ["npx", "--", "pkg"],
        ["npm", "exec", "pkg", "--flag"],  # npm would take --flag as its own
        ["npm", "exec", "-c", "pkg"],
        ["npm", "exec", "--"],
        ["npm", "run", "pkg"],
        ["npm", "install", "pkg"],
        ["node", "dist/index.js"],
        ["sh", "-c", "npx -y pkg"],
        ["npx-wrapper", "pkg"],
    ):
        assert npx_args(other) is None, other


def test_an_unrecognised_npx_command_names_the_word_that_made_it_so():
    """--verbose said such a command 'started cold: not a Python console script ...'; it now says
    which word kept the launcher form from being recognised."""
    refused = {
        ("npx", "--no-install", "pkg"): "its option '--no-install'",
        ("npx", "-c", "pkg"): "its option '-c'",
        ("npx", "--", "pkg"): "'--' before the package",
        ("npm", "exec", "pkg", "--flag"): "'--flag' after the package without '--'",
        ("npx", "-y"): "no package after its options",
    }
    for command, why in refused.items():
        assert (npx_refused(command) or "").startswith(why), command
    for other in (["npx", "-y", MEMORY], ["npm", "run", "pkg"], ["node", "x.js"], ["uvx", "p"]):
        assert npx_refused(other) is None, other


def _verbose_run(cli, out: Path, *args: str) -> tuple[list, str]:
    """``run ARGS --verbose``: its cells and its ``server processes:`` line."""
    done = cli("run", *args, "--results", str(out), "--quiet", "--verbose")
    assert done.returncode in (0, 1), done.stderr
    line = re.search(r"^server processes: (.*)$", done.stdout, re.MULTILINE)
    assert line, done.stdout
    return _cells(out), line.group(1)


def _answered(cells: list, how: str, pattern: str) -> None:
    """``--verbose`` said ``pattern`` of the server processes, and a call arrived intact."""
    assert re.fullmatch(pattern, how), how
    assert any(c[0] == "call" and c[3] == "intact" for c in cells), cells


def _run(cli, tmp_path: Path, tag: str, *extra: str) -> tuple[list, str]:
    target = ("--stdio", f"npx -y {MEMORY}", "--client", "claude-code", "--client", "cursor")
    return _verbose_run(cli, tmp_path / f"{tag}.jsonl", *target, *extra)


def test_npx_memory_server_resolved_once_gives_the_cells_of_npx_every_session(cli, tmp_path):
    assert shutil.which("npx"), "npx (Node.js) runs the npm servers of the suite"
    once, how = _run(cli, tmp_path, "once")
    resolved = re.fullmatch(
        rf"npx -y {re.escape(MEMORY)}: resolved once to (\S+) (\S+) "
        r"\((\d+) processes started from it, 1 through npx\)",
        how,
    )
    assert resolved, how
    assert os.path.basename(resolved.group(1)) == "node"
    assert "/node_modules/.bin/mcp-server-memory" in resolved.group(2)
    assert int(resolved.group(3)) >= 2  # the profiles' sessions at least
    every, how = _run(cli, tmp_path, "every", "--cold-start")
    assert re.fullmatch(r".* started cold: --cold-start \(\d+ processes\)", how), how
    assert once and once == every


def test_npm_exec_is_resolved_once_as_npx_is(cli, tmp_path):
    """``npm exec -- PKG`` runs what ``npx PKG`` runs (npm under ``sh -c``): the same tree."""
    target = ("--stdio", f"npm exec -y -- {MEMORY}", "--client", "claude-code")
    cells, how = _verbose_run(cli, tmp_path / "exec.jsonl", *target)
    _answered(
        cells,
        how,
        rf"npm exec -y -- {re.escape(MEMORY)}: resolved once to \S+ \S+/mcp-server-memory "
        r"\(\d+ processes started from it, 1 through npx\)",
    )


# An ``npx`` of our own, run as npm's is: the package's bin ``tiny-bin`` (in PKG_BIN) under
# ``sh -c 'tiny-bin ARGS'``, with npm's ``PATH`` entry and lifecycle variables.
FAKE_NPX = """#!{python}
import os, shlex, subprocess, sys
env = dict(os.environ, PATH={bin!r} + os.pathsep + os.environ["PATH"],
           npm_lifecycle_event="npx", npm_lifecycle_script="tiny-bin")
command = shlex.join(["tiny-bin", *sys.argv[3:]])
sys.exit(subprocess.run(["sh", "-c", command], env=env).returncode)
"""
# the package's bin: a Node package's is a script with a shebang; these are Python or sh
BIN_PYTHON = "#!{python}\nimport sys\nfrom tiny_npx import main\nsys.exit(main())\n"
BIN_SH = '#!/bin/sh\n{python} -m tiny_npx "$@"\n'  # a shell script between: no exec
BIN_SH_EXEC = '#!/bin/sh\nexec {python} -m tiny_npx "$@"\n'  # its set-up would be skipped


def _fake_npx(cli, tmp_path: Path, tag: str, bin_text: str, *extra: str) -> tuple[list, str]:
    if not (tmp_path / "work").exists():
        tiny_package(tmp_path / "work", "tiny_npx")
    script(tmp_path / tag, bin_text.format(python=sys.executable), name="tiny-bin")
    fake = FAKE_NPX.format(python=sys.executable, bin=str(tmp_path / tag))
    npx = script(tmp_path / tag / "npx-home", fake, name="npx")
    return _verbose_run(
        cli, tmp_path / f"{tag}{len(extra)}.jsonl",
        "--stdio", f"{npx} -y tiny-pkg a1", "--cwd", str(tmp_path / "work"),
        "--env", f"PYTHONPATH={tmp_path / 'work'}", "--client", "claude-code", *extra,
    )  # fmt: skip


def test_a_python_bin_npx_runs_under_sh_c_is_resolved_and_forked_seeing_the_same(cli, tmp_path):
    """The tiny server's tool answers with its argv and directory: the same from the Python
    script npx resolved to, forked from a warm template of it, as through npx every session."""
    once, how = _fake_npx(cli, tmp_path, "py", BIN_PYTHON)
    assert re.fullmatch(
        r".*npx -y tiny-pkg a1: resolved once to \S+ \S+/py/tiny-bin a1 "
        r"\(\d+ sessions forked from a warm template of it, 1 through npx\)",
        how,
    ), how
    every, how = _fake_npx(cli, tmp_path, "py", BIN_PYTHON, "--cold-start")
    assert "started cold: --cold-start" in how
    seen = [c for c in once if c[0] == "call" and "a1" in c[-1]]
    assert seen and once == every


def test_a_python_bin_that_cannot_be_forked_is_resolved_started_cold_and_says_why(cli, tmp_path):
    """Its package starts a thread when imported: each session starts the resolved script."""
    tiny_package(tmp_path / "work", "tiny_npx", setup=THREAD)
    cells, how = _fake_npx(cli, tmp_path, "thread", BIN_PYTHON)
    _answered(
        cells,
        how,
        r".*npx -y tiny-pkg a1: resolved once to (\S+ \S+/thread/tiny-bin a1) "
        r"\(\d+ processes started from it, 1 through npx\); "
        r"\1 started cold: importing tiny-bin started a thread \(\d+ processes\)",
    )


def test_a_shell_script_as_the_bin_keeps_npx_for_every_session(cli, tmp_path):
    """A later session started as the server process alone would skip what the script does
    first; so npx runs every session, whether the script waits for the server or execs it."""
    for tag, text, why in (
        ("sh", BIN_SH, "a shell script holds the session's pipes"),
        ("exec", BIN_SH_EXEC, "its process is not the program npx ran"),
    ):
        cells, how = _fake_npx(cli, tmp_path, tag, text)
        _answered(
            cells,
            how,
            rf".*npx -y tiny-pkg a1 started through npx every session: {re.escape(why)}.*"
            r" \(\d+ processes\)",
        )


def _pipes(proc: subprocess.Popen) -> tuple[int, int]:
    assert proc.stdin and proc.stdout
    return os.fstat(proc.stdin.fileno()).st_ino, os.fstat(proc.stdout.fileno()).st_ino


def _started(argv: list[str], cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """``argv`` on pipes, once its server has written its first line."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, env=env,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout and proc.stdout.readline() == b"up\n"
    return proc


def _ended(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, 9)
    proc.wait(5)


# a server stand-in: says it is up, then reads its stdin until the end
SERVER = "#!{python}\nimport sys\nprint('up', flush=True)\nsys.stdin.read()\n"


def _npm_like(tmp_path: Path, args: str) -> subprocess.Popen:
    """A launcher that runs bin ``srv`` as npm does: ``sh -c 'srv ARGS'``."""
    script(tmp_path / "bin", SERVER.format(python=sys.executable), name="srv")
    env = dict(os.environ, npm_lifecycle_event="npx", npm_lifecycle_script="srv")
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env['PATH']}"
    launcher = f"import subprocess; subprocess.run(['sh', '-c', {'srv ' + args!r}])"
    return _started([sys.executable, "-c", launcher], tmp_path, env)


def test_find_server_takes_the_bin_under_sh_c_with_its_argv_env_and_directory(tmp_path):
    """npm runs a package's bin under ``sh -c``, which holds the pipes too."""
    proc = _npm_like(tmp_path, "a1 a2")
    try:
        found = find_server(proc.pid, _pipes(proc), ("a1", "a2"))
    finally:
        _ended(proc)
    assert isinstance(found, Resolved), found
    assert found.argv == (sys.executable, str(tmp_path / "bin" / "srv"), "a1", "a2")
    assert found.cwd == str(tmp_path)
    assert found.env["PATH"].startswith(str(tmp_path / "bin"))
    assert found.files == found.argv[:2] and found.still_there()


def test_find_server_refuses_a_command_line_without_the_args(tmp_path):
    proc = _npm_like(tmp_path, "b")
    try:
        why = find_server(proc.pid, _pipes(proc), ("a",))
    finally:
        _ended(proc)
    assert why == "its command line does not end with the command's arguments"


def test_a_resolved_process_whose_files_are_gone_is_not_started_again(tmp_path):
    """A long-lived process (the pytest plugin) may outlive the npx cache it resolved to."""
    entry = tmp_path / "index.js"
    entry.write_text("")
    resolved = Resolved(("node", str(entry)), {}, str(tmp_path), (str(entry),))
    assert resolved.still_there()
    entry.unlink()
    assert not resolved.still_there()
