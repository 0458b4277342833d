"""Which client release to calibrate: the pinned one, or the registry's newest.

``calibrate --latest`` asks the package registries (through ``npm view`` and ``pip index``, so
a user's registry mirror and proxy settings apply) for the newest release of a recipe's client
package, and calibrates that one instead of the pinned one. For a Python client each local
interpreter's pip is asked (a release may need a newer Python than ours: fast-agent 0.10 needs
3.13), and the release is installed with an interpreter that saw it.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from mcp_matrix.calibrate.harness import InstallError, Recipe
from mcp_matrix.calibrate.interpreters import interpreters, python_version

REGISTRY_TIMEOUT = 120.0
# Library drivers import mcp_matrix inside the client's venv: its oldest supported Python.
DRIVER_PYTHON = (3, 10)
_PINNED = re.compile(r"^(?P<name>@?[^@=<>!~ ]+?)(?P<sep>@|==)(?P<version>[^,;\s]+)$")


@dataclass(frozen=True)
class ClientPackage:
    """The install spec that is the client itself: the one pinned at the recipe's version."""

    ecosystem: str  # "npm" or "pip"
    name: str
    index: int  # its place in the recipe's install list


def client_package(recipe: Recipe) -> ClientPackage:
    """The first install spec pinned at ``recipe.version`` (the others are its pinned deps)."""
    for ecosystem, specs in (("npm", recipe.npm), ("pip", recipe.pip)):
        for i, spec in enumerate(specs):
            m = _PINNED.match(spec)
            if m and m["version"] == recipe.version:
                return ClientPackage(ecosystem, _bare(m["name"]), i)
    raise InstallError(
        f"the {recipe.name} recipe pins no package at its version {recipe.version}: "
        "cannot tell which package is the client"
    )


def _bare(name: str) -> str:
    return name.split("[", 1)[0]  # pip extras: pydantic-ai-slim[openai] -> pydantic-ai-slim


@dataclass(frozen=True)
class Release:
    """The newest release of a client package, and (pip) an interpreter that can install it."""

    version: str
    python: str = ""  # a path, for pip packages: the interpreter whose pip saw this release


def newest_release(package: ClientPackage) -> Release:
    """The newest release the registry lists; for pip, the newest the newest local interpreter
    (from 3.10, what the library drivers need) can install."""
    if package.ecosystem == "npm":
        out = _ask(["npm", "view", package.name, "version"], package)
        return Release(out.strip().splitlines()[-1].strip())
    refusals = []
    for exe in interpreters(oldest=DRIVER_PYTHON):
        try:
            out = _ask([exe, "-m", "pip", "index", "versions", package.name], package)
        except InstallError as exc:  # none of its releases supports this interpreter
            refusals.append(str(exc))
            continue
        m = re.search(rf"^{re.escape(package.name)} \(([^)]+)\)", out, re.MULTILINE | re.IGNORECASE)
        if m:  # the newest interpreter that sees a release sees the newest (unless a release
            return Release(m[1], exe)  # caps Python below it, which is rare)
    raise InstallError(
        refusals[0] if refusals else f"the registry lists no release of {package.name}"
    )


def _ask(argv: list[str], package: ClientPackage) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=REGISTRY_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise InstallError(
            f"cannot ask for {package.name}'s newest release: {argv[0]!r} is not on PATH"
        ) from None
    except subprocess.TimeoutExpired:
        raise InstallError(
            f"asking the {package.ecosystem} registry for {package.name} took over "
            f"{REGISTRY_TIMEOUT:.0f} s (is it reachable?)"
        ) from None
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise InstallError(
            f"the {package.ecosystem} registry did not list {package.name} "
            f"(exit {done.returncode}): {tail}"
        )
    return done.stdout


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def at_release(recipe: Recipe, release: Release) -> Recipe:
    """``recipe`` installing ``release`` of its client, in a folder of its own, with the rest of
    its packages unpinned: what a user installing the newest release today gets (the recipe's
    other pins fit its pinned release, e.g. fast-agent 0.2.36's ``pydantic<2.12``)."""
    package = client_package(recipe)
    unpinned = {
        "npm": tuple(_unpinned(s, "npm") for s in recipe.npm),
        "pip": tuple(_unpinned(s, "pip") for s in recipe.pip),
    }
    specs = list(unpinned[package.ecosystem])
    specs[package.index] = (
        f"{specs[package.index]}@{release.version}"
        if package.ecosystem == "npm"
        else f"{specs[package.index]}=={release.version}"
    )
    unpinned[package.ecosystem] = tuple(specs)
    python = recipe.python
    if release.python:
        major, minor = python_version(release.python)[:2]
        python = f"=={major}.{minor}.*"  # an interpreter whose pip saw the release
    return dataclasses.replace(
        recipe,
        npm=unpinned["npm"],
        pip=unpinned["pip"],
        version=release.version,
        python=python,
        cache="",  # install_key: <recipe>-<version>, never the pinned release's folder
    )


def _unpinned(spec: str, ecosystem: str) -> str:
    """A package spec without its version: ``@scope/pkg@1.2`` -> ``@scope/pkg``,
    ``pkg[extra]==1.2`` / ``pkg<2`` -> ``pkg[extra]``; a path or URL stays as it is."""
    if ecosystem == "npm":
        at = spec.rfind("@")
        return spec[:at] if at > 0 else spec
    if "/" in spec or "{" in spec:
        return spec
    return re.split(r"[=<>!~;\s]", spec, maxsplit=1)[0]


def is_newer(release: Release, recipe: Recipe) -> bool:
    return _version(release.version) > _version(recipe.version)
