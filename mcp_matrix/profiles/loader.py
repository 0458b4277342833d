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
``mcp_matrix.core.yamlfile``'s, shared with every other input file; this module adds what is profile-only.
docs/profiles.md is the user-facing reference of the format.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

import mcp_matrix
from mcp_matrix.behaviours.registry import PHASES, REGISTRY, BehaviourSpec, load_all
from mcp_matrix.core.errors import InputError, InputErrors, MatrixError, did_you_mean
from mcp_matrix.core.evidence import Evidence, weakest
from mcp_matrix.core.yamlfile import (
    KeyPath,
    YamlSource,
    key_path,
    parse_yaml,
    schema_errors,
    sort_errors,
)
from mcp_matrix.profiles.model import BehaviourUse, Identity, Profile, ProfileHandshake

__all__ = [
    "NO_IDENTITY",
    "ProfileErrors",
    "bundled_profiles_dir",
    "key_path",
    "load_profiles",
    "profile_schema",
    "profile_summary",
    "select_profiles",
]

# An abstract base may leave identity out; its resolved Profile carries this empty one.
NO_IDENTITY = Identity(client_info={}, protocol_version="", capabilities={})


# The problems of one stage, raised together; the old name of ``InputErrors``.
ProfileErrors = InputErrors


# ---------------------------------------------------------------------------------------------
# Where the bundled profiles live


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


def profile_schema() -> dict:
    """The JSON Schema of the profile format (``mcp_matrix/profiles/profile.schema.json``)."""
    schema = _format_validator().schema
    assert isinstance(schema, dict)  # profile.schema.json is an object
    return copy.deepcopy(schema)


@lru_cache(maxsize=1)
def _format_validator() -> Draft202012Validator:
    text = resources.files("mcp_matrix.profiles").joinpath("profile.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


# ---------------------------------------------------------------------------------------------
# One file


_PARAMS_VALIDATORS: dict[str, Draft202012Validator] = {}


def _params_validator(spec: BehaviourSpec) -> Draft202012Validator:
    """The validator of a behaviour's params; a broken params schema is a bug of the tool.

    A registered behaviour's schema was checked when it registered; only a spec handed in
    through ``registry=`` is checked here (checking all 50 again cost every command 0.1 s)."""
    schema = spec.params_schema
    key = json.dumps(schema, sort_keys=True, default=repr)
    if key not in _PARAMS_VALIDATORS:
        try:
            if REGISTRY.get(spec.name) is not spec:
                Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise MatrixError(
                f"behaviour {spec.name!r} declares an invalid params schema (a bug in mcp-matrix, "
                f"not in the profile): {exc.message} at {key_path(exc.absolute_path)}"
            ) from exc
        _PARAMS_VALIDATORS[key] = Draft202012Validator(schema)
    return _PARAMS_VALIDATORS[key]


def _check_file(src: YamlSource, registry: Mapping[str, BehaviourSpec]) -> list[InputError]:
    """Every problem of one parsed file: the schema, the name, the registry."""
    errors = schema_errors(src, _format_validator(), src.data, (), "key")
    if errors:  # the registry checks below rely on the shape being right
        return errors
    data = src.data
    if data["name"] != src.path.stem:
        errors.append(
            src.error(
                ("name",),
                f"{data['name']!r} must equal the file stem {src.path.stem!r} (rename the file or the profile)",
            )
        )
    for phase in PHASES:
        ids: dict[str, int] = {}
        for index, entry in enumerate(src.get(phase, [])):
            at: KeyPath = (phase, index)
            name = entry["use"]
            spec = registry.get(name)
            if spec is None:
                here = sorted(n for n, s in registry.items() if s.phase == phase)
                listed = ", ".join(here) or "none registered"
                errors.append(
                    src.error(
                        at + ("use",),
                        f"unknown behaviour {name!r}{did_you_mean(name, registry)}; {phase} behaviours: {listed}",
                    )
                )
            elif spec.phase != phase:
                errors.append(
                    src.error(
                        at + ("use",),
                        f"{name!r} is a {spec.phase} behaviour, listed under {phase}; move it to {spec.phase}",
                    )
                )
            else:
                validator = _params_validator(spec)
                errors += schema_errors(
                    src, validator, entry.get("with") or {}, at + ("with",), "param", name
                )
            entry_id = entry.get("id", name)
            if entry_id in ids:
                errors.append(
                    src.error(
                        at + (("id",) if "id" in entry else ("use",)),
                        f"duplicate id {entry_id!r} in {phase} (also {phase}[{ids[entry_id]}]); "
                        "give one of them its own `id`",
                    )
                )
            ids.setdefault(entry_id, index)
    return errors


# ---------------------------------------------------------------------------------------------
# extends


def _cycles(sources: Mapping[str, YamlSource]) -> list[list[str]]:
    """Each cycle in ``extends`` once, as ``[a, b, a]``."""
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(name: str) -> None:
        state[name] = 1
        stack.append(name)
        for parent in sources[name].get("extends", []):
            if parent not in sources:
                continue
            if state.get(parent) == 1:
                found.append(stack[stack.index(parent) :] + [parent])
            elif parent not in state:
                visit(parent)
        stack.pop()
        state[name] = 2

    for name in sorted(sources):
        if name not in state:
            visit(name)
    return found


def _merge(into: list[BehaviourUse], uses: Iterable[BehaviourUse]) -> None:
    """Append ``uses``; one whose id is already there replaces that entry in place."""
    for use in uses:
        at = next((i for i, old in enumerate(into) if old.id == use.id), None)
        if at is None:
            into.append(use)
        else:
            into[at] = use


def _own_use(src: YamlSource, entry: Mapping[str, Any], spec: BehaviourSpec) -> BehaviourUse:
    params = copy.deepcopy(spec.defaults())
    params.update(copy.deepcopy(entry.get("with") or {}))
    evidence = tuple(
        Evidence(e["level"], e.get("source", ""), e.get("note", ""), e.get("checked", ""))
        for e in entry["evidence"]
    )
    return BehaviourUse(
        name=entry["use"],
        params=params,
        evidence=evidence,
        id=entry.get("id", entry["use"]),
        frequency=entry.get("frequency", "always"),
        declared_in=str(src.path),
    )


def _own_identity(src: YamlSource) -> Identity | None:
    raw = src.data.get("identity")
    if raw is None:
        return None
    return Identity(
        client_info=copy.deepcopy(raw["clientInfo"]),
        protocol_version=raw["protocolVersion"],
        capabilities=copy.deepcopy(raw.get("capabilities") or {}),
    )


def _own_handshake(src: YamlSource) -> ProfileHandshake | None:
    raw = src.data.get("handshake")
    if raw is None:
        return None
    return ProfileHandshake(
        fallback=raw["fallback"],
        evidence=tuple(
            Evidence(e["level"], e.get("source", ""), e.get("note", ""), e.get("checked", ""))
            for e in raw["evidence"]
        ),
        modern_versions=tuple(raw.get("modern_versions", ("2026-07-28",))),
        accepts=tuple(raw.get("accepts") or ()),
        initialize_after_discover=bool(raw.get("initialize_after_discover", False)),
        honours_ttl=bool(raw.get("honours_ttl", False)),
        listens=bool(raw.get("listens", False)),
        declared_in=str(src.path),
    )


def _resolve_all(
    sources: Mapping[str, YamlSource], registry: Mapping[str, BehaviourSpec]
) -> dict[str, Profile]:
    errors: list[InputError] = []
    for src in sources.values():
        for index, parent in enumerate(src.get("extends", [])):
            if parent not in sources:
                known = ", ".join(sorted(sources))
                errors.append(
                    src.error(
                        ("extends", index),
                        f"unknown profile {parent!r}{did_you_mean(parent, sources)}; known profiles: {known}",
                    )
                )
    for cycle in _cycles(sources):
        src = sources[cycle[0]]
        index = src.get("extends", []).index(cycle[1])
        errors.append(src.error(("extends", index), f"cycle in extends: {' -> '.join(cycle)}"))
    if errors:
        raise ProfileErrors(sort_errors(errors))

    done: dict[str, Profile] = {}

    def resolve(name: str) -> Profile:
        if name in done:
            return done[name]
        src = sources[name]
        parents = [resolve(p) for p in src.get("extends", [])]
        phases: dict[str, list[BehaviourUse]] = {phase: [] for phase in PHASES}
        for parent in parents:
            for phase in PHASES:
                _merge(
                    phases[phase],
                    (replace(u, params=copy.deepcopy(u.params)) for u in getattr(parent, phase)),
                )
        inherited = [u.id for phase in PHASES for u in phases[phase]]
        for index, gone in enumerate(src.get("remove", [])):
            if gone not in inherited:
                listed = (
                    ", ".join(sorted(set(inherited))) or "none (this profile inherits no entries)"
                )
                errors.append(
                    src.error(
                        ("remove", index),
                        f"no inherited entry has id {gone!r}{did_you_mean(gone, inherited)}; inherited ids: {listed}",
                    )
                )
            for phase in PHASES:
                phases[phase] = [u for u in phases[phase] if u.id != gone]
        for phase in PHASES:
            _merge(
                phases[phase], (_own_use(src, e, registry[e["use"]]) for e in src.get(phase, []))
            )
        identity = _own_identity(src)
        if identity is None:
            identity = next(
                (p.identity for p in reversed(parents) if p.identity != NO_IDENTITY), None
            )
        handshake = _own_handshake(src) or next(
            (p.handshake for p in reversed(parents) if p.handshake is not None), None
        )
        if (
            handshake is not None
            and not handshake.accepts
            and identity is not None
            and identity.protocol_version
        ):
            handshake = replace(
                handshake, accepts=(identity.protocol_version,)
            )  # default: what it asked for
        abstract = bool(src.data.get("abstract", False))
        if identity is None:
            identity = NO_IDENTITY
            if not abstract:
                errors.append(
                    src.error(
                        ("identity",),
                        "missing required key, and no parent declares one "
                        "(only an abstract profile may leave identity out)",
                    )
                )
        done[name] = Profile(
            name=name,
            client=src.data["client"],
            versions=src.data["versions"],
            models=src.data["models"],
            identity=identity,
            extends=tuple(src.get("extends", [])),
            abstract=abstract,
            required_by_default=bool(src.data.get("required_by_default", True)),
            source=str(src.path),
            handshake=handshake,
            **{phase: tuple(uses) for phase, uses in phases.items()},
        )
        return done[name]

    for name in sorted(sources):
        resolve(name)
    if errors:
        raise ProfileErrors(sort_errors(errors))
    return done


# ---------------------------------------------------------------------------------------------
# Public API


def _profile_files(paths: Iterable[Path | str] | None, extra: Iterable[Path | str]) -> list[Path]:
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
    for path in _profile_files(paths, extra_dirs):
        src, found = parse_yaml(
            path,
            "profile",
            empty="the file is empty; expected a mapping with name, client, versions, models",
        )
        if not found:
            found = _check_file(src, registry)
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
    return _resolve_all(sources, registry)


def select_profiles(
    profiles: Mapping[str, Profile], names: Iterable[str] | None = None
) -> list[Profile]:
    """The profiles named, in the order given; all runnable (non-abstract) ones if none are named."""
    runnable = sorted(name for name, p in profiles.items() if not p.abstract)
    wanted = list(dict.fromkeys(names or ()))
    if not wanted:
        return [profiles[name] for name in runnable]
    chosen = []
    for name in wanted:
        if name not in profiles:
            raise InputError(
                f"unknown profile {name!r}{did_you_mean(name, runnable)}; profiles: {', '.join(runnable)}"
            )
        if profiles[name].abstract:
            heirs = [p for p in runnable if name in _ancestors(profiles, p)]
            raise InputError(
                f"{name!r} is an abstract base profile and is never run on its own; "
                f"profiles built on it: {', '.join(heirs) or 'none'}"
            )
        chosen.append(profiles[name])
    return chosen


def _ancestors(profiles: Mapping[str, Profile], name: str) -> set[str]:
    out: set[str] = set()
    todo = list(profiles[name].extends)
    while todo:
        parent = todo.pop()
        if parent not in out and parent in profiles:
            out.add(parent)
            todo += profiles[parent].extends
    return out


def profile_summary(profile: Profile) -> dict:
    """A JSON-ready view of a resolved profile, keyed like the YAML format (``profiles show``)."""
    identity = None
    if profile.identity != NO_IDENTITY:
        identity = {
            "clientInfo": copy.deepcopy(dict(profile.identity.client_info)),
            "protocolVersion": profile.identity.protocol_version,
            "capabilities": copy.deepcopy(dict(profile.identity.capabilities)),
        }
    summary: dict[str, Any] = {
        "name": profile.name,
        "client": profile.client,
        "versions": profile.versions,
        "models": profile.models,
        "abstract": profile.abstract,
        "required_by_default": profile.required_by_default,
        "extends": list(profile.extends),
        "source": profile.source,
        "weakest_evidence": profile.weakest_evidence,
        "identity": identity,
        "handshake": _handshake_summary(profile.handshake),
    }
    for phase, uses in profile.phases().items():
        summary[phase] = [
            {
                "use": use.name,
                "id": use.id,
                "with": copy.deepcopy(dict(use.params)),
                "frequency": use.frequency,
                "weakest_evidence": weakest(use.evidence),
                "evidence": [e.to_json() for e in use.evidence],
                "declared_in": use.declared_in,
            }
            for use in uses
        ]
    return summary


def _handshake_summary(h: ProfileHandshake | None) -> dict | None:
    if h is None:
        return None
    return {
        "fallback": h.fallback,
        "modern_versions": list(h.modern_versions),
        "accepts": list(h.accepts),
        "initialize_after_discover": h.initialize_after_discover,
        "honours_ttl": h.honours_ttl,
        "listens": h.listens,
        "weakest_evidence": h.weakest_evidence,
        "evidence": [e.to_json() for e in h.evidence],
        "declared_in": h.declared_in,
    }
