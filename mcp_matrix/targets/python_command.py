"""Whether a ``--stdio`` command is a Python program a warm template can run, and how.

These shapes are recognised, strictly, and nothing else (anything else starts cold as its command
says): a console script as pip or uv writes it (a shebang naming a Python interpreter by
absolute path, or uv's relocatable ``#!/bin/sh`` header that runs the ``python`` beside it, then
exactly the standard wrapper, ``from MODULE import NAME`` ... ``sys.exit(NAME())``), such a script
run as ``python SCRIPT ARGS`` (what a launcher's child is once the shebang has run: ``uvx``), and
``python -m MODULE ARGS`` (no flag before ``-m`` or the script). The command is
found as ``subprocess`` would find it: on the ``PATH`` of the environment the server gets,
relative to its directory. See ``mcp_matrix.targets.warm_start`` for what is done with it.
"""

from __future__ import annotations

import ast
import os
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["PythonCommand", "recognise"]

MAX_SCRIPT_BYTES = 4096  # a wrapper is a few hundred bytes
MAX_USER_SCRIPT_BYTES = 1 << 20  # a server's own script, parsed for its leading imports
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
# a shebang naming the interpreter, or uv's relocatable form (a tool's environment: ``uvx``,
# ``uv tool install``): sh execs the ``python`` beside the script's real path on the script
_SHEBANG = (
    r"(?:#!(?P<interpreter>/[^\s]+)\n"
    r"""|#!/bin/sh\n'''exec' "\$\(dirname -- "\$\(realpath -- "\$0"\)"\)"/"""
    r"""'(?P<sibling>python[0-9.]*)' "\$0" "\$@"\n' '''\n)"""
)
_HEAD = r"(?:# -\*- coding: utf-8 -\*-\n)?"
# pip (distlib's ScriptMaker: before pip 25, and since) and uv, the wrapper each writes for a
# console_scripts entry point
_WRAPPERS = (
    re.compile(
        _SHEBANG
        + _HEAD
        + rf"import re\nimport sys\nfrom (?P<module>{_DOTTED}) import (?P<name>{_NAME})\n"
        + r"if __name__ == (?P<q>['\"])__main__(?P=q):\n"
        + r"    sys\.argv\[0\] = re\.sub\(r'\(-script\\\.pyw\|\\\.exe\)\?\$', '', sys\.argv\[0\]\)\n"
        + rf"    sys\.exit\((?P=name)(?:\.{_NAME})*\(\)\)\n?"
    ),
    re.compile(
        _SHEBANG
        + _HEAD
        + rf"import sys\nfrom (?P<module>{_DOTTED}) import (?P<name>{_NAME})\n"
        + r"if __name__ == (?P<q>['\"])__main__(?P=q):\n"
        + r'    if sys\.argv\[0\]\.endswith\("-script\.pyw"\):\n'
        + r"        sys\.argv\[0\] = sys\.argv\[0\]\[:-11\]\n"
        + r'    elif sys\.argv\[0\]\.endswith\("\.exe"\):\n'
        + r"        sys\.argv\[0\] = sys\.argv\[0\]\[:-4\]\n"
        + rf"    sys\.exit\((?P=name)(?:\.{_NAME})*\(\)\)\n?"
    ),
    re.compile(  # pip 25 and later (distlib 0.4)
        _SHEBANG
        + _HEAD
        + rf"import sys\nfrom (?P<module>{_DOTTED}) import (?P<name>{_NAME})\n"
        + r"if __name__ == (?P<q>['\"])__main__(?P=q):\n"
        + r"    sys\.argv\[0\] = sys\.argv\[0\]\.removesuffix\((?P<q2>['\"])\.exe(?P=q2)\)\n"
        + rf"    sys\.exit\((?P=name)(?:\.{_NAME})*\(\)\)\n?"
    ),
)


@dataclass(frozen=True)
class PythonCommand:
    """A recognised command: the interpreter the template runs under (the shebang's, or the
    command's own first word), ``script`` (a console script: its path as the interpreter gets it)
    or ``module`` (``-m``), the module to import, and the server's ``sys.argv``. A script of the
    user's own has no module to import: ``prefix`` is then its leading import statements, which
    the template runs as the script would before any of its own code (``module`` names the
    file, for messages)."""

    interpreter: str
    mode: str  # "script" | "module"
    module: str
    script: str
    argv: tuple[str, ...]
    prefix: str | None = None


def find(name: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    """The file ``subprocess`` would execute for ``name`` (``os.get_exec_path`` of ``env``),
    as the path it passes on; None when there is none."""
    if "/" in name:
        candidates = [name]
    else:
        path = env.get("PATH", os.defpath)
        candidates = [os.path.join(d, name) for d in path.split(os.pathsep)]
    for candidate in candidates:
        where = os.path.join(cwd, candidate) if cwd else candidate
        if os.path.isfile(where) and os.access(where, os.X_OK):
            return candidate
    return None


def _console_script(path: str, cwd: str | None) -> tuple[str, str] | None:
    """(interpreter, module) of a standard console script at ``path``, else None."""
    where = os.path.join(cwd, path) if cwd else path
    try:
        with open(where, "rb") as f:
            data = f.read(MAX_SCRIPT_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_SCRIPT_BYTES or not data.startswith(b"#!/"):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for wrapper in _WRAPPERS:
        found = wrapper.fullmatch(text)
        if found and found["sibling"]:
            beside = os.path.dirname(os.path.realpath(where))
            return os.path.join(beside, found["sibling"]), found["module"]
        if found and _PYTHON.fullmatch(os.path.basename(found["interpreter"])):
            return found["interpreter"], found["module"]
    return None


def leading_imports(path: str) -> str | None:
    """The import statements a Python script at ``path`` begins with (after its docstring,
    which comes with them), as source, or None when it begins with anything else or cannot be read as Python here.

    Run first by a template, in the script's directory, environment and ``sys.argv``, they do
    what the script's first lines do before anything else of it runs (as a console script's
    ``from MODULE import NAME`` is imported first); the fork then runs the whole script, whose
    imports find those modules loaded. Relative imports (a script has no package) and a zip
    archive (``python app.pyz`` runs its ``__main__.py``) are refused."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_USER_SCRIPT_BYTES + 1)
        if len(data) > MAX_USER_SCRIPT_BYTES or zipfile.is_zipfile(path):
            return None
        body = ast.parse(data, path).body
    except (OSError, SyntaxError, ValueError):
        return None
    docstring: list[ast.stmt] = []
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        docstring, body = body[:1], body[1:]  # run too: __main__.__doc__ is set before them
    leading: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "__future__":
            continue  # compiles the script differently; imports nothing
        if not (
            isinstance(statement, ast.Import)
            or (isinstance(statement, ast.ImportFrom) and statement.level == 0)
        ):
            break
        leading.append(statement)
    return "\n".join(ast.unparse(s) for s in docstring + leading) + "\n" if leading else None


def recognise(
    command: Sequence[str], env: Mapping[str, str], cwd: str | None
) -> PythonCommand | None:
    """The Python program ``command`` runs, when it is one of the two shapes; else None."""
    if not command:
        return None
    first, args = command[0], tuple(command[1:])
    if _PYTHON.fullmatch(os.path.basename(first)):
        if not args or find(first, env, cwd) is None:
            return None
        if len(args) >= 2 and args[0] == "-m" and re.fullmatch(_DOTTED, args[1]):
            return PythonCommand(first, "module", args[1], "", (args[1], *args[2:]))
        if args[0].startswith("-"):
            return None
        script = _console_script(args[0], cwd)
        if script is not None:
            return PythonCommand(first, "script", script[1], args[0], args)
        prefix = leading_imports(os.path.join(cwd, args[0]) if cwd else args[0])
        if prefix is None:
            return None
        return PythonCommand(first, "script", os.path.basename(args[0]), args[0], args, prefix)
    path = find(first, env, cwd)
    if path is None:
        return None
    script = _console_script(path, cwd)
    if script is None:
        return None
    interpreter, module = script
    return PythonCommand(interpreter, "script", module, path, (path, *args))
