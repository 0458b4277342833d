"""Load client profiles: YAML files in, validated and resolved frozen ``Profile`` values out.

Everything is checked when the profiles load, before any server is contacted:

1. each file is parsed keeping the line of every key (a YAML syntax error carries its line);
2. it is validated against ``profile.schema.json`` (the format, JSON Schema 2020-12);
3. its ``name`` must equal the file stem, and every entry is checked against the behaviour
   registry: a known name ("did you mean"), listed under its own phase, params valid against
   the behaviour's params schema;
4. across files: a name defined twice, an unknown parent, a cycle in ``extends``;
5. ``extends`` is resolved (parents first, a same id replaces in place, ``remove`` drops
   inherited ids) and every profile must end up with an identity unless it is abstract.

Every problem is an ``InputError`` whose ``where`` is ``FILE:LINE`` and whose message starts
with the key path (``discovery[2].with.limit: expected an integer, got string "64"``). The
problems of one stage are collected and raised together as ``ProfileErrors`` (another name
for ``mcp_matrix.core.errors.InputErrors``), one per line. Reading the YAML and wording schema errors is
``mcp_matrix.core.yamlfile``'s, shared with every other input file. The stages are modules of
their own: ``files`` (where profiles are read from), ``checks`` (one file: 2 and 3), ``extends``
(4 and 5); ``selection`` and ``summary`` are what commands do with the result. This module reads
the files in order and keeps the names callers take from ``mcp_matrix.profiles.loader``.
docs/profiles.md is the user-facing reference of the format.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from mcp_matrix.behaviours.registry import BehaviourSpec, load_all
from mcp_matrix.core.errors import InputError, InputErrors
from mcp_matrix.core.yamlfile import YamlSource, parse_yaml, sort_errors
from mcp_matrix.profiles.checks import check_file, profile_schema
from mcp_matrix.profiles.extends import resolve_all
from mcp_matrix.profiles.files import bundled_profiles_dir, profile_files
from mcp_matrix.profiles.model import Profile
from mcp_matrix.profiles.selection import select_profiles
from mcp_matrix.profiles.summary import profile_summary

__all__ = [
    "ProfileErrors",
    "bundled_profiles_dir",
    "load_profiles",
    "profile_schema",
    "profile_summary",
    "select_profiles",
]

# The problems of one stage, raised together; the old name of ``InputErrors``.
ProfileErrors = InputErrors


def runnable_profiles(
    names: Iterable[str] = (), extra_dirs: Iterable[Path | str] = ()
) -> list[Profile]:
    """The runnable profiles named (all of them when none are), bundled and from ``extra_dirs``,
    with did-you-mean for a typo: what every command and ``mcp_matrix.api.profiles`` run."""
    loaded = load_profiles(extra_dirs=extra_dirs)
    return [p for p in select_profiles(loaded, list(names)) if not p.abstract]


def load_profiles(
    paths: Iterable[Path | str] | None = None,
    extra_dirs: Iterable[Path | str] = (),
    *,
    registry: Mapping[str, BehaviourSpec] | None = None,
) -> dict[str, Profile]:
    """Load, validate and resolve profiles; name -> Profile, abstract bases included.

    ``paths`` are files or directories (their ``*.yaml``) to load instead of the bundled
    profiles (None: the bundled directory); ``extra_dirs`` are loaded in addition, e.g. a
    user's own profiles extending bundled bases. A name defined in two files is an error.
    Raises ``ProfileErrors`` (an ``InputError``) listing every problem found.
    """
    registry = load_all() if registry is None else registry
    errors: list[InputError] = []
    sources: dict[str, YamlSource] = {}
    for path in profile_files(paths, extra_dirs):
        src, found = parse_yaml(
            path,
            "profile",
            empty="the file is empty; expected a mapping with name, client, versions, models",
        )
        if not found:
            found = check_file(src, registry)
        if found:
            errors += found
            continue
        name = src.data["name"]
        if name in sources:
            errors.append(
                src.error(
                    ("name",),
                    f"profile {name!r} is defined twice: in {sources[name].path} and in {path}",
                )
            )
            continue
        sources[name] = src
    if errors:
        raise ProfileErrors(sort_errors(errors))
    return resolve_all(sources, registry)
