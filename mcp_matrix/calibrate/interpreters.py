"""The Python interpreters on this machine, for clients that need another than ours.

A Python client may need a newer interpreter than the one mcp-matrix runs on (fast-agent 0.10
needs 3.13): its venv is made with one that satisfies the recipe's ``install.python``, found on
``PATH`` or under pyenv (``$PYENV_ROOT/versions``).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from functools import lru_cache

from packaging.specifiers import SpecifierSet


def interpreters(oldest: tuple[int, int] = (3, 0)) -> list[str]:
    """Python interpreters on this machine no older than ``oldest``, newest first: ours,
    ``python3.N`` on PATH, pyenv's."""
    found = [sys.executable]
    for minor in range(20, 8, -1):
        exe = shutil.which(f"python3.{minor}")
        if exe:
            found.append(exe)
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3")))
    by_version: dict[tuple[int, ...], str] = {}
    for exe in found:
        v = python_version(exe)
        if v and v[:2] >= oldest and v not in by_version:
            by_version[v] = exe
    return [by_version[v] for v in sorted(by_version, reverse=True)]


@lru_cache(maxsize=64)
def python_version(exe: str) -> tuple[int, ...]:
    """``exe``'s version (major, minor, micro), or () if it does not run."""
    if exe == sys.executable:
        return tuple(sys.version_info[:3])
    try:
        done = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ()
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", done.stdout.strip())
    return tuple(int(p) for p in m.groups()) if m and done.returncode == 0 else ()


def matching(spec: str) -> tuple[str | None, list[str]]:
    """The newest interpreter whose version satisfies ``spec`` (a PEP 440 specifier such as
    ``>=3.13``), or None, and the versions of every interpreter seen. Raises ``ValueError`` for
    a malformed specifier."""
    wanted = SpecifierSet(spec)
    seen = []
    for exe in interpreters():
        v = ".".join(str(p) for p in python_version(exe))
        seen.append(v)
        if wanted.contains(v):
            return exe, seen
    return None, seen
