"""A ``--stdio`` server given as ``python SCRIPT ARGS`` (a script of the user's own, not a console
script): forked from a warm template that ran the script's leading import statements, as the
script runs them before any of its own code (``python_command.leading_imports``). The real CLI
against a small server whose tool answers with what its process sees (``sys.path[0]``,
``sys.argv``, ``__name__``, the directory): the same warm and with ``--cold-start``.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

from mcp_matrix.targets.python_command import leading_imports, recognise
from tests.test_warm_user import _run, tiny_package

SERVER = '''"""A server of the user's own."""
from __future__ import annotations
import sys
from tiny_s import main
sys.exit(main())
'''


def test_leading_imports_are_the_import_statements_a_script_begins_with(tmp_path):
    path = tmp_path / "s.py"
    cases = {
        SERVER: '"A server of the user\'s own."\nimport sys\nfrom tiny_s import main\n',
        "import os, json as j\nfrom a.b import (c, d)\nx = 1\nimport late\n": (
            "import os, json as j\nfrom a.b import c, d\n"
        ),
        "import os; os.environ['A'] = '1'\nimport b\n": "import os\n",
        "print('hi')\nimport os\n": None,  # its own code first: nothing to run before it
        "from . import x\n": None,  # a script has no package
        "'''only a docstring'''\n": None,
        "def (:\n": None,
    }
    for text, prefix in cases.items():
        path.write_text(text)
        assert leading_imports(str(path)) == prefix, text
    with zipfile.ZipFile(tmp_path / "app.pyz", "w") as archive:
        archive.writestr("__main__.py", "import os\n")
    assert leading_imports(str(tmp_path / "app.pyz")) is None  # python runs its __main__.py
    assert leading_imports(str(tmp_path / "missing.py")) is None


def test_python_script_is_recognised_with_its_prefix_and_argv(tmp_path):
    (tmp_path / "s.py").write_text(SERVER)
    python = {"PATH": str(Path(sys.executable).parent)}
    name = Path(sys.executable).name
    found = recognise([name, "s.py", "a1"], python, str(tmp_path))
    assert found is not None
    assert (found.mode, found.module, found.script) == ("script", "s.py", "s.py")
    assert found.argv == ("s.py", "a1")
    assert found.prefix == '"A server of the user\'s own."\nimport sys\nfrom tiny_s import main\n'
    assert recognise([name, "-u", "s.py"], python, str(tmp_path)) is None  # a flag first
    assert recognise([name, "missing.py"], python, str(tmp_path)) is None


def test_a_python_script_sees_what_its_command_would_warm_or_cold(cli, tmp_path):
    """``python SCRIPT`` puts the script's folder first on ``sys.path`` (its sibling package is
    found there only), runs it as ``__main__`` with its argv, in the directory given."""
    tiny_package(tmp_path / "app", "tiny_s")
    (tmp_path / "app" / "server.py").write_text(SERVER)
    (tmp_path / "work").mkdir()
    target = (
        "--stdio", f"{sys.executable} {tmp_path / 'app' / 'server.py'} a1",
        "--cwd", str(tmp_path / "work"),
    )  # fmt: skip
    warm, how = _run(cli, tmp_path, "script", *target)
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .*server\.py a1", how), how
    cold, how = _run(cli, tmp_path, "script-cold", *target, "--cold-start")
    assert "started cold: --cold-start" in how
    assert warm == cold
    seen = [c for c in warm if c[0] == "call" and "path0" in c[-1]]
    assert seen and str(tmp_path / "app") in seen[0][-1] and "__main__" in seen[0][-1]


def test_a_script_named_after_a_builtin_module_is_forked_and_a_real_shadow_is_not(cli, tmp_path):
    """A script's folder goes first on ``sys.path`` after the interpreter started: a module built
    into the interpreter (``time``, ``gc``), frozen into it or loaded at its start (``os``) is
    never read from there, so ``time.py`` and an ``os.py`` beside it change nothing; an
    ``argparse.py`` there is what a later ``import argparse`` reads (the template has the
    standard library's loaded), so that one starts cold."""
    app = tmp_path / "app"
    tiny_package(app, "tiny_t")
    (app / "time.py").write_text(SERVER.replace("tiny_s", "tiny_t"))
    for name in ("gc", "os"):  # never read: a fork and a cold server would fail alike if it were
        (app / f"{name}.py").write_text(f"raise SystemExit('{name}.py was imported')\n")
    target = ("--stdio", f"{sys.executable} {app / 'time.py'}", "--cwd", str(tmp_path))
    warm, how = _run(cli, tmp_path, "builtin", *target)
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .*time\.py", how), how
    cold, _ = _run(cli, tmp_path, "builtin-cold", *target, "--cold-start")
    assert warm == cold and any(c[0] == "call" and c[3] == "intact" for c in warm), warm
    (app / "argparse.py").write_text("ArgumentParser = None\n")
    _, how = _run(cli, tmp_path, "shadow", *target)
    assert re.search(
        rf"started cold: argparse is in {re.escape(str(app))} and loaded before", how
    ), how


READS_MAIN = '''"""Reads its own __main__."""
import os
import sys
from tiny_r import main
FILES = os.listdir(os.path.dirname(__file__))  # '' if __file__ were relative: no such folder
sys.exit(main())
'''
# imported first: a module that reads the script's __main__ while it is imported
MAIN_AT_IMPORT = """import __main__
if (__main__.__file__, __main__.__doc__) != (os.path.abspath(sys.argv[0]), "Reads its own __main__."):
    raise SystemExit(f"__main__ is {__main__.__file__}")"""


def test_a_script_run_by_a_relative_path_has_the_main_module_a_cold_one_has(cli, tmp_path):
    """``python server.py`` (``uv run server.py``'s child too) runs the script in a ``__main__``
    whose ``__file__`` is absolute (Python 3.9+), and that module is already ``__main__`` (with
    its docstring) while the script's leading imports run: warm as cold."""
    app = tmp_path / "app"
    tiny_package(app, "tiny_r", setup=MAIN_AT_IMPORT)
    (app / "server.py").write_text(READS_MAIN)
    target = ("--stdio", f"{sys.executable} server.py", "--cwd", str(app))
    warm, how = _run(cli, tmp_path, "main", *target)
    assert re.fullmatch(r"\d+ sessions forked from a warm template of .*server\.py", how), how
    cold, _ = _run(cli, tmp_path, "main-cold", *target, "--cold-start")
    assert warm == cold and any(c[0] == "call" and c[3] == "intact" for c in warm), warm


AT_EXIT = """import atexit
atexit.register(lambda: open(os.path.join(os.getcwd(), "ended"), "a").write("x\\n"))"""


def test_a_forked_server_runs_its_atexit_functions_and_its_template_does_not(cli, tmp_path):
    """Python runs the ``atexit`` functions at its end (a log flushed, a folder removed): each
    forked server does, as each cold one does; the template that imported the module that
    registered them is no server and does not."""
    app = tmp_path / "app"
    tiny_package(app, "tiny_a", setup=AT_EXIT)
    (app / "server.py").write_text(SERVER.replace("tiny_s", "tiny_a"))
    ended, hows = {}, {}
    for tag, extra in (("warm", ()), ("cold", ("--cold-start",))):
        (tmp_path / tag).mkdir()
        target = ("--stdio", f"{sys.executable} {app / 'server.py'}", "--cwd", str(tmp_path / tag))
        _, hows[tag] = _run(cli, tmp_path, f"atexit-{tag}", *target, *extra)
        ended[tag] = (tmp_path / tag / "ended").read_text().count("x")
    forked = re.fullmatch(
        r"(\d+) sessions forked from a warm template of .*server\.py", hows["warm"]
    )
    cold = re.search(r"started cold: --cold-start \((\d+) processes\)$", hows["cold"])
    assert forked and cold, hows
    assert ended == {"warm": int(forked.group(1)), "cold": int(cold.group(1))}, (ended, hows)
