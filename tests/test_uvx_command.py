"""A ``--stdio`` server given as ``uvx PKG ARGS`` is resolved once per run
(``mcp_matrix.targets.uvx_command``, ``launcher``): the first session runs uvx, every later one
is forked from a warm template of the console script uv ran (``ENV/bin/python ENV/bin/CMD
ARGS``). The run's cells are the same as with uvx for every session (``--cold-start``): the
real uv (the test extra) and ``mcp-server-time`` from PyPI. ``find_server`` is tried on real
process trees of the shapes it must accept or refuse.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from mcp_matrix.targets.launcher import Resolved
from mcp_matrix.targets.uvx_command import find_server, uv_refused, uv_run_command, uvx_command
from tests.conftest import installed_tool
from tests.test_npx_command import SERVER, _ended, _pipes, _started, _verbose_run
from tests.test_python_script import SERVER as USER_SCRIPT
from tests.test_warm_user import script, tiny_package

TIME = "mcp-server-time@2026.10.19"
PROJECT = '[project]\nname = "tiny"\nversion = "0"\nrequires-python = ">=3.10"\ndependencies = []\n'


def test_recognises_uvx_and_uv_tool_run_with_from_with_and_python_and_nothing_else():
    assert uvx_command(["uvx", "mcp-server-time"]) == ("mcp-server-time", ())
    assert uvx_command(["/x/uvx", TIME, "--local-timezone", "UTC"]) == (
        "mcp-server-time",
        ("--local-timezone", "UTC"),
    )
    assert uvx_command(["uvx", "--from", "git+https://example.org/r", "srv", "-v"]) == (
        "srv",
        ("-v",),
    )
    assert uvx_command(["uv", "tool", "run", "--with", "a", "--python=3.12", "pkg[x]"]) == (
        "pkg",
        (),
    )
    assert uvx_command(["uvx", "-p", "3.12", "--from=p", "cmd", "x"]) == ("cmd", ("x",))
    assert uvx_command(("uv", "tool", "run", "pkg")) == ("pkg", ())  # a Target's command
    for other in (
        ["uvx"],
        ["uvx", "--from", "p"],
        ["uvx", "--isolated", "pkg"],
        ["uvx", "--refresh", "pkg"],
        ["uvx", "--from=", "pkg"],
        ["uvx", "pkg==1.0"],
        ["uvx", "--from", "p", "./bin/srv"],
        ["uv", "run", "pkg"],
        ["uv", "tool", "install", "pkg"],
        ["sh", "-c", "uvx pkg"],
        ["uvx-wrapper", "pkg"],
    ):
        assert uvx_command(other) is None, other


def test_recognises_uv_run_of_a_script_or_command_with_its_project_and_nothing_else():
    assert uv_run_command(["uv", "--directory", "/p", "run", "weather.py"]) == ("weather.py", ())
    assert uv_run_command(("uv", "run", "--project=/p", "mcp", "run", "s.py")) == (
        "mcp",
        ("run", "s.py"),
    )
    for other in (
        ["uv", "run"],
        ["uv", "run", "--with", "mcp", "s.py"],
        ["uv", "--offline", "run", "s.py"],
        ["uv", "run", "python", "s.py"],
        ["uv", "sync"],
        ["uvx", "run", "s.py"],
    ):
        assert uv_run_command(other) is None, other


def test_an_unrecognised_uv_command_names_the_word_that_made_it_so():
    refused = {
        ("uvx", "--offline", "pkg"): "its option '--offline'",
        ("uv", "tool", "run", "--isolated", "pkg"): "its option '--isolated'",
        ("uvx", "pkg==1.0"): "the package 'pkg==1.0'",
        ("uv", "--offline", "run", "s.py"): "uv's option '--offline'",
        ("uv", "run", "--with", "mcp", "s.py"): "its option '--with'",
        ("uv", "run", "python", "s.py"): "the command 'python'",
        ("uvx",): "nothing to run",
    }
    for command, why in refused.items():
        assert (uv_refused(command) or "").startswith(why), command
    for other in (["uvx", TIME], ["uv", "sync"], ["uv", "tool", "install", "p"], ["npx", "p"]):
        assert uv_refused(other) is None, other


def test_verbose_says_which_word_kept_a_uvx_command_from_being_resolved(cli, tmp_path):
    """``uvx --offline PKG`` runs uvx every session, as designed; --verbose said 'started cold:
    not a Python console script ...', now that the launcher form was not recognised, and why."""
    uvx = installed_tool("uvx")
    assert uvx, "the test extra installs uv (uvx) from PyPI"
    target = ("--stdio", f"{uvx} --offline {TIME}", *_certs(), "--client", "claude-code")
    how = _verbose_run(cli, tmp_path / "offline.jsonl", *target)[1]
    said = "processes): the launcher form was not recognised: its option '--offline' (only --from"
    assert how.startswith(f"{uvx} --offline {TIME} ran as given every session (") and said in how


def _certs() -> tuple[str, ...]:
    """uv reaches the index with the machine's roots, which the minimal environment leaves out."""
    certs = os.environ.get("SSL_CERT_FILE")
    return ("--env", f"SSL_CERT_FILE={certs}") if certs else ()


def test_uv_run_of_a_projects_script_is_resolved_and_forked_seeing_what_it_would(cli, tmp_path):
    """The MCP quickstart's ``uv --directory PROJECT run server.py``: uv's child is the project
    environment's interpreter on the script, in the project; forked from a warm template of it,
    the tiny server sees the same ``sys.path[0]``, argv and directory as through uv every time."""
    uv = installed_tool("uv")
    assert uv, "the test extra installs uv from PyPI"
    project = tmp_path / "project"
    tiny_package(project, "tiny_s")
    (project / "server.py").write_text(USER_SCRIPT)
    (project / "pyproject.toml").write_text(PROJECT)
    target = (
        "--stdio", f"{uv} --directory {project} run server.py a1", *_certs(),
        "--client", "claude-code",
    )  # fmt: skip
    once, how = _verbose_run(cli, tmp_path / "once.jsonl", *target)
    assert re.fullmatch(
        rf".* run server\.py a1: resolved once to {re.escape(str(project))}/\.venv/bin/python\S* "
        r"server\.py a1 \(\d+ sessions forked from a warm template of it, 1 through uv\)",
        how,
    ), how
    every, how = _verbose_run(cli, tmp_path / "every.jsonl", *target, "--cold-start")
    assert "started cold: --cold-start" in how
    seen = [c for c in once if c[0] == "call" and "path0" in c[-1]]
    assert seen and str(project) in seen[0][-1] and once == every


def test_uvx_time_server_resolved_once_and_forked_gives_the_cells_of_uvx_every_session(
    cli, tmp_path
):
    uvx = installed_tool("uvx")
    assert uvx, "the test extra installs uv (uvx) from PyPI"
    target = (
        "--stdio", f"{uvx} {TIME} --local-timezone UTC", *_certs(),
        "--client", "claude-code", "--client", "cursor",
    )  # fmt: skip
    once, how = _verbose_run(cli, tmp_path / "once.jsonl", *target)
    resolved = re.fullmatch(
        rf"{re.escape(uvx)} {re.escape(TIME)} --local-timezone UTC: resolved once to "
        r"(\S+) (\S+) --local-timezone UTC "
        r"\((\d+) sessions forked from a warm template of it, 1 through uvx\)",
        how,
    )
    assert resolved, how
    assert os.path.basename(resolved.group(1)) == "python"
    assert resolved.group(2) == os.path.join(os.path.dirname(resolved.group(1)), "mcp-server-time")
    assert int(resolved.group(3)) >= 2  # the profiles' sessions at least
    every, how = _verbose_run(cli, tmp_path / "every.jsonl", *target, "--cold-start")
    assert re.fullmatch(r".* started cold: --cold-start \(\d+ processes\)", how), how
    assert once and once == every


def _uv_like(tmp_path: Path, command: str, prefix: bool = True) -> subprocess.Popen:
    """A launcher that runs ``ENV/bin/srv a1`` as uv does: its one child, with ``ENV/bin`` put
    first on its own ``PATH`` (``prefix``)."""
    folder = tmp_path / "env" / "bin"
    script(folder, command.format(python=sys.executable), name="srv")
    path = f"{folder}{os.pathsep}{os.environ['PATH']}" if prefix else os.environ["PATH"]
    launcher = (
        "import os, subprocess; "
        f"subprocess.run([{str(folder / 'srv')!r}, 'a1'], env=dict(os.environ, PATH={path!r}))"
    )
    return _started([sys.executable, "-c", launcher], tmp_path)


def test_find_server_takes_uvs_child_with_its_argv_env_and_directory(tmp_path):
    proc = _uv_like(tmp_path, SERVER)
    try:
        found = find_server(proc.pid, _pipes(proc), "srv", ("a1",))
    finally:
        _ended(proc)
    assert isinstance(found, Resolved), found
    srv = str(tmp_path / "env" / "bin" / "srv")
    assert found.argv == (sys.executable, srv, "a1")  # the shebang's interpreter, then the file
    assert found.cwd == str(tmp_path) and found.env["PATH"].startswith(os.path.dirname(srv))
    assert found.files == found.argv[:2] and found.still_there()


def test_find_server_refuses_what_uv_did_not_run_as_its_tool(tmp_path):
    """A shell script that runs the server, a command of another name, a ``PATH`` uv did not
    make: later sessions would not start what uv starts."""
    waits = "#!/bin/sh\n{python} -c 'print(\"up\", flush=True); import sys; sys.stdin.read()'\n"
    cases = (
        (waits, True, "srv", "a shell script holds the session's pipes"),
        (SERVER, True, "other", "its process is not the program uvx ran"),
        (SERVER, False, "srv", "its process is not the program uvx ran"),
    )
    for text, prefix, name, why in cases:
        proc = _uv_like(tmp_path, text, prefix)
        try:
            found = find_server(proc.pid, _pipes(proc), name, ("a1",))
        finally:
            _ended(proc)
        assert isinstance(found, str) and found.startswith(why), (found, why)
