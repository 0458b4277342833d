"""A ``--stdio`` server given as ``npx -y PKG ARGS`` is resolved once per run
(``mcp_matrix.targets.npx_command``): the first session runs npx, every later one the process npx
started, with its argv, environment and directory. The run's cells are the same as with npx for
every session (``--cold-start``); the real ``npx`` and ``@modelcontextprotocol/server-memory``
from npm. ``find_server`` is tried on real process trees of the shapes it must accept or refuse.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from mcp_matrix.targets.npx_command import Resolved, find_server, npx_args
from tests.test_warm_user import _cells

MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"


def test_recognises_npx_with_yes_and_package_flags_and_nothing_else():
    assert npx_args(["npx", "-y", MEMORY]) == ()
    assert npx_args(["/usr/bin/npx", "--yes", "pkg", "--flag", "-y"]) == ("--flag", "-y")
    assert npx_args(["npx", "-p", "a", "--package=b", "--package", "c", "bin", "x"]) == ("x",)
    assert npx_args(["npx", "pkg"]) == ()
    for other in (
        ["npx"],
        ["npx", "-y"],
        ["npx", "--no-install", "pkg"],
        ["npx", "-c", "pkg"],
        ["npm", "exec", "--yes", "pkg"],
        ["node", "dist/index.js"],
        ["sh", "-c", "npx -y pkg"],
        ["npx-wrapper", "pkg"],
    ):
        assert npx_args(other) is None, other


def _run(cli, tmp_path: Path, tag: str, *extra: str) -> tuple[list, str]:
    out = tmp_path / f"{tag}.jsonl"
    done = cli(
        "run", "--stdio", f"npx -y {MEMORY}", "--client", "claude-code", "--client", "cursor",
        "--results", str(out), "--quiet", "--verbose", *extra,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    line = re.search(r"^server processes: (.*)$", done.stdout, re.MULTILINE)
    assert line, done.stdout
    return _cells(out), line.group(1)


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


def _pipes(proc: subprocess.Popen) -> tuple[int, int]:
    assert proc.stdin and proc.stdout
    return os.fstat(proc.stdin.fileno()).st_ino, os.fstat(proc.stdout.fileno()).st_ino


def _started(argv: list[str], cwd: Path) -> subprocess.Popen:
    """``argv`` on pipes, once its server has written its first line."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=cwd, start_new_session=True
    )
    assert proc.stdout and proc.stdout.readline() == b"up\n"
    return proc


def _ended(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, 9)
    proc.wait(5)


# a server stand-in: says it is up, then reads its stdin until the end
SERVER = "import sys; print('up', flush=True); sys.stdin.read()"


def test_find_server_takes_the_process_under_sh_c_with_its_argv_env_and_directory(tmp_path):
    """npm runs a package's bin under ``sh -c``, which holds the pipes too."""
    command = shlex.join([sys.executable, "-c", SERVER, "a1", "a2"])
    launcher = f"import subprocess; subprocess.run(['sh', '-c', {command!r}])"
    proc = _started([sys.executable, "-c", launcher], tmp_path)
    try:
        found = find_server(proc.pid, _pipes(proc), ("a1", "a2"))
    finally:
        _ended(proc)
    assert isinstance(found, Resolved), found
    assert found.argv == (sys.executable, "-c", SERVER, "a1", "a2")
    assert found.cwd == str(tmp_path)
    assert found.env.get("PATH") == os.environ.get("PATH")
    assert found.files == (sys.executable,) and found.still_there()


def test_a_resolved_process_whose_files_are_gone_is_not_started_again(tmp_path):
    """A long-lived process (the pytest plugin) may outlive the npx cache it resolved to."""
    entry = tmp_path / "index.js"
    entry.write_text("")
    resolved = Resolved(("node", str(entry)), {}, str(tmp_path), (str(entry),))
    assert resolved.still_there()
    entry.unlink()
    assert not resolved.still_there()


def test_find_server_refuses_a_shell_script_and_a_command_line_without_the_args(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text(f'{sys.executable} -c "{SERVER}"\n')
    launcher = f"import subprocess; subprocess.run(['sh', {str(script)!r}])"
    proc = _started([sys.executable, "-c", launcher], tmp_path)
    try:
        assert find_server(proc.pid, _pipes(proc), ()) == "a shell script holds the session's pipes"
    finally:
        _ended(proc)
    launcher = f"import subprocess; subprocess.run([{sys.executable!r}, '-c', {SERVER!r}, 'b'])"
    proc = _started([sys.executable, "-c", launcher], tmp_path)
    try:
        why = find_server(proc.pid, _pipes(proc), ("a",))
    finally:
        _ended(proc)
    assert why == "its command line does not end with the command's arguments"
