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
problems of one stage are collected and raised together as ``ProfileErrors``, one per line.
docs/profiles.md is the user-facing reference of the format.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

import matrix
from matrix.behaviours.registry import PHASES, BehaviourSpec, load_all
from matrix.errors import InputError, MatrixError, did_you_mean
from matrix.evidence import Evidence, weakest
from matrix.profiles.model import BehaviourUse, Identity, Profile

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

KeyPath = tuple  # of str (mapping keys) and int (list indexes)

# An abstract base may leave identity out; its resolved Profile carries this empty one.
NO_IDENTITY = Identity(client_info={}, protocol_version="", capabilities={})


class ProfileErrors(InputError):
    """One or more problems found in the profiles at once.

    ``errors`` holds each as an ``InputError``; ``where`` and the first line of the message are
    the first problem's, the next lines are the others as ``FILE:LINE: key.path: message``.
    """

    def __init__(self, errors: Sequence[InputError]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        rest = "".join(f"\n{e}" for e in self.errors[1:])
        super().__init__(first.message + rest, where=first.where)


# ---------------------------------------------------------------------------------------------
# Where the bundled profiles live


def bundled_profiles_dir() -> Path:
    """The directory of the profiles shipped with mcp-matrix.

    Installed, ``clients/`` is the package data directory ``matrix.clients``; in an editable
    install or a source checkout it is ``clients/`` next to the ``matrix`` package.
    """
    candidates: list[Path] = []
    try:
        found = resources.files("matrix.clients")
        if isinstance(found, Path):
            candidates.append(found)
        else:  # a namespace package (no __init__.py): a MultiplexedPath over its directories
            candidates += [Path(str(child)).parent for child in found.iterdir()][:1]
    except (ModuleNotFoundError, TypeError, ValueError, OSError):
        pass
    here = Path(matrix.__file__).resolve().parent
    candidates += [here / "clients", here.parent / "clients"]
    for path in candidates:
        if path.is_dir():
            return path
    raise MatrixError(
        "the bundled client profiles are missing; looked in " + ", ".join(map(str, candidates))
    )


@lru_cache(maxsize=1)
def profile_schema() -> dict:
    """The JSON Schema of the profile format (``matrix/profiles/profile.schema.json``)."""
    text = resources.files("matrix.profiles").joinpath("profile.schema.json").read_text("utf-8")
    return json.loads(text)


# ---------------------------------------------------------------------------------------------
# YAML with lines


class _Loader(yaml.SafeLoader):
    """A SafeLoader that keeps dates as strings: ``2025-11-25`` is a protocol version."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def key_path(path: Iterable[Any]) -> str:
    """``("discovery", 2, "with", "limit")`` -> ``discovery[2].with.limit``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part))}]"
    return out or "(top level)"


@dataclass
class _Source:
    """One profile file: its data and the line of every key path in it."""

    path: Path
    data: Any = None
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line(self, path: KeyPath) -> int:
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1

    def error(self, path: KeyPath, message: str) -> InputError:
        return InputError(f"{key_path(path)}: {message}", where=f"{self.path}:{self.line(path)}")

    def get(self, key: str, default: Any = None) -> Any:
        value = self.data.get(key)
        return default if value is None else value


def _record_lines(node: yaml.Node, path: KeyPath, src: _Source, errors: list, busy: set) -> None:
    """Note the line of every key and item under ``node``; flag duplicate keys."""
    src.lines.setdefault(path, node.start_mark.line + 1)
    if id(node) in busy:
        errors.append(src.error(path, "a YAML alias refers to itself; a profile must be a tree"))
        return
    busy.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue
            key, line = key_node.value, key_node.start_mark.line + 1
            src.lines[path + (key,)] = line  # the last one is the one YAML keeps
            if key in seen:
                errors.append(
                    src.error(
                        path + (key,),
                        f"duplicate key (also at line {seen[key]}); YAML keeps only the last",
                    )
                )
            seen[key] = line
            _record_lines(value_node, path + (key,), src, errors, busy)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, path + (index,), src, errors, busy)
    busy.discard(id(node))


def _parse(path: Path) -> tuple[_Source, list[InputError]]:
    src = _Source(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return src, [InputError(f"cannot read the profile: {exc}", where=str(path))]
    errors: list[InputError] = []
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _record_lines(node, (), src, errors, set())
            src.data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = min(mark.line + 1, len(text.splitlines()) or 1) if mark else 1
        message = f"YAML syntax error: {exc.problem or exc}"
        if isinstance(exc, yaml.constructor.ConstructorError):
            message = f"YAML tags are not allowed, a profile is data only: {exc.problem}"
        elif exc.context:
            message += f" ({exc.context}"
            message += f" at line {exc.context_mark.line + 1})" if exc.context_mark else ")"
        return src, [InputError(message, where=f"{path}:{line}")]
    except yaml.YAMLError as exc:
        return src, [InputError(f"YAML syntax error: {exc}", where=f"{path}:1")]
    finally:
        loader.dispose()
    if src.data is None:
        errors.append(
            src.error(
                (), "the file is empty; expected a mapping with name, client, versions, models"
            )
        )
    return src, errors


# ---------------------------------------------------------------------------------------------
# Schema errors in words

_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def _show(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(error: ValidationError, noun: str, owner: str) -> list[tuple[KeyPath, str]]:
    """Turn one jsonschema error into ``(key path, message)`` pairs a user can act on.

    ``noun`` is what the keys are called here ("key" in the format, "param" in a behaviour's
    ``with``); ``owner`` names the behaviour whose params they are.
    """
    path: KeyPath = tuple(error.absolute_path)
    kw, expected, value, schema = (
        error.validator,
        error.validator_value,
        error.instance,
        error.schema,
    )
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if kw == "required":
        out = []
        for name in expected:
            if isinstance(value, dict) and name not in value:
                about = (props.get(name) or {}).get("description", "")
                out.append(
                    (
                        path + (name,),
                        f"missing required {noun}" + (f" ({about.rstrip('.')})" if about else ""),
                    )
                )
        return out
    if kw == "additionalProperties" and isinstance(value, dict):
        if props:
            valid = (
                f"; {owner} takes: {', '.join(props)}"
                if owner
                else f"; valid {noun}s: {', '.join(props)}"
            )
        else:
            valid = f"; {owner or 'this'} takes no {noun}s"
        return [
            (path + (name,), f"unknown {noun} {name!r}{did_you_mean(str(name), props)}{valid}")
            for name in value
            if name not in props
        ]
    if kw == "type":
        types = [expected] if isinstance(expected, str) else [t for t in expected if t != "null"]
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        message = f"expected {words}, got {_json_type(value)} {_show(value)}"
        if "string" in types and isinstance(value, (int, float)):
            message += f' (quote it in YAML: "{value}")'
        return [(path, message)]
    if kw == "enum":
        hint = did_you_mean(str(value), [str(x) for x in expected])
        return [
            (path, f"expected one of {', '.join(map(str, expected))}, got {_show(value)}{hint}")
        ]
    if kw == "pattern":
        about = schema.get("description", "")
        return [
            (
                path,
                f"{_show(value)} does not match {expected}"
                + (f" ({about.rstrip('.')})" if about else ""),
            )
        ]
    if kw == "minItems":
        return [
            (
                path,
                f"expected at least {expected} item{'s' if expected != 1 else ''}, got {len(value)}",
            )
        ]
    if kw == "minLength":
        return [(path, "must not be empty")]
    if kw == "uniqueItems":
        seen, twice = [], None
        for item in value:
            if item in seen:
                twice = item
                break
            seen.append(item)
        return [(path, f"lists {_show(twice)} more than once")]
    return [(path, error.message)]


def _schema_errors(
    src: _Source,
    validator: Draft202012Validator,
    data: Any,
    base: KeyPath,
    noun: str,
    owner: str = "",
) -> list[InputError]:
    found = []
    for error in validator.iter_errors(data):
        for path, message in _describe(error, noun, owner):
            found.append(src.error(base + path, message))
    return found


def _sorted(errors: Iterable[InputError]) -> list[InputError]:
    unique = {str(e): e for e in errors}

    def order(e: InputError) -> tuple:
        file, _, line = e.where.rpartition(":")
        return (file, int(line), e.message) if line.isdigit() else (e.where, 0, e.message)

    return sorted(unique.values(), key=order)


# ---------------------------------------------------------------------------------------------
# One file


def _check_file(src: _Source, registry: Mapping[str, BehaviourSpec]) -> list[InputError]:
    """Every problem of one parsed file: the schema, the name, the registry."""
    errors = _schema_errors(src, Draft202012Validator(profile_schema()), src.data, (), "key")
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
                validator = Draft202012Validator(spec.params_schema)
                errors += _schema_errors(
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


def _cycles(sources: Mapping[str, _Source]) -> list[list[str]]:
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


def _own_use(src: _Source, entry: Mapping[str, Any], spec: BehaviourSpec) -> BehaviourUse:
    params = copy.deepcopy(spec.defaults())
    params.update(copy.deepcopy(entry.get("with") or {}))
    evidence = tuple(
        Evidence(e["level"], e.get("source", ""), e.get("note", "")) for e in entry["evidence"]
    )
    return BehaviourUse(
        name=entry["use"],
        params=params,
        evidence=evidence,
        id=entry.get("id", entry["use"]),
        frequency=entry.get("frequency", "always"),
        declared_in=str(src.path),
    )


def _own_identity(src: _Source) -> Identity | None:
    raw = src.data.get("identity")
    if raw is None:
        return None
    return Identity(
        client_info=copy.deepcopy(raw["clientInfo"]),
        protocol_version=raw["protocolVersion"],
        capabilities=copy.deepcopy(raw.get("capabilities") or {}),
    )


def _resolve_all(
    sources: Mapping[str, _Source], registry: Mapping[str, BehaviourSpec]
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
        raise ProfileErrors(_sorted(errors))

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
            source=str(src.path),
            **{phase: tuple(uses) for phase, uses in phases.items()},
        )
        return done[name]

    for name in sorted(sources):
        resolve(name)
    if errors:
        raise ProfileErrors(_sorted(errors))
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
    sources: dict[str, _Source] = {}
    for path in _profile_files(paths, extra_dirs):
        src, found = _parse(path)
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
        raise ProfileErrors(_sorted(errors))
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
        "extends": list(profile.extends),
        "source": profile.source,
        "weakest_evidence": profile.weakest_evidence,
        "identity": identity,
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
