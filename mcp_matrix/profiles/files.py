"""Where profiles are read from: the bundled directory, or the files and directories given."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path

import mcp_matrix
from mcp_matrix.core.errors import InputError, MatrixError


def bundled_profiles_dir() -> Path:
    """The directory of the profiles shipped with mcp-matrix.

    Installed, ``clients/`` is the package data directory ``mcp_matrix.clients``; in an editable
    install or a source checkout it is ``clients/`` next to the ``mcp_matrix`` package.
    """
    candidates: list[Path] = []
    try:
        found = resources.files("mcp_matrix.clients")
        if isinstance(found, Path):
            candidates.append(found)
        else:  # a namespace package (no __init__.py): a MultiplexedPath over its directories
            candidates += [Path(str(child)).parent for child in found.iterdir()][:1]
    except (ModuleNotFoundError, TypeError, ValueError, OSError):
        pass
    here = Path(mcp_matrix.__file__).resolve().parent
    candidates += [here / "clients", here.parent / "clients"]
    for path in candidates:
        if path.is_dir():
            return path
    raise MatrixError(
        "the bundled client profiles are missing; looked in " + ", ".join(map(str, candidates))
    )


def profile_files(paths: Iterable[Path | str] | None, extra: Iterable[Path | str]) -> list[Path]:
    """The ``*.yaml`` files to load, each once: ``paths`` (None: the bundled directory), then
    ``extra``; a path that is neither a file nor a directory is an ``InputError``."""
    roots = [bundled_profiles_dir()] if paths is None else [Path(p) for p in paths]
    roots += [Path(p) for p in extra]
    files, seen = [], set()
    for root in roots:
        if root.is_dir():
            found = sorted(root.glob("*.yaml"))
        elif root.is_file():
            found = [root]
        else:
            raise InputError("no such profile file or directory", where=str(root))
        for path in found:
            if path.resolve() not in seen:
                seen.add(path.resolve())
                files.append(path)
    return files
