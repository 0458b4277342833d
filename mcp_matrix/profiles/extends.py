"""``extends`` across profile files: unknown parents and cycles found, then each profile resolved
(parents first, a same id replaces in place, ``remove`` drops inherited ids, identity and
handshake inherited from the nearest parent that has one) into a frozen ``Profile``."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from mcp_matrix.behaviours.registry import PHASES, BehaviourSpec
from mcp_matrix.core.errors import InputError, InputErrors, did_you_mean
from mcp_matrix.core.evidence import Evidence
from mcp_matrix.core.yamlfile import YamlSource, sort_errors
from mcp_matrix.profiles.model import BehaviourUse, Identity, Profile, ProfileHandshake

# An abstract base may leave identity out; its resolved Profile carries this empty one.
NO_IDENTITY = Identity(client_info={}, protocol_version="", capabilities={})


def resolve_all(
    sources: Mapping[str, YamlSource], registry: Mapping[str, BehaviourSpec]
) -> dict[str, Profile]:
    """Every profile resolved, by name; raises ``InputErrors`` listing every problem found."""
    errors = _parent_errors(sources)
    if errors:
        raise InputErrors(sort_errors(errors))
    done: dict[str, Profile] = {}
    for name in sorted(sources):
        _resolve(name, sources, registry, done, errors)
    if errors:
        raise InputErrors(sort_errors(errors))
    return done


def _parent_errors(sources: Mapping[str, YamlSource]) -> list[InputError]:
    """An ``extends`` naming no loaded profile, and each cycle in ``extends``."""
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
    return errors


def _resolve(
    name: str,
    sources: Mapping[str, YamlSource],
    registry: Mapping[str, BehaviourSpec],
    done: dict[str, Profile],
    errors: list[InputError],
) -> Profile:
    """``name`` resolved (its parents first, each once: ``done``); problems go to ``errors``."""
    if name in done:
        return done[name]
    src = sources[name]
    parents = [_resolve(p, sources, registry, done, errors) for p in src.get("extends", [])]
    phases = _inherited_uses(src, parents, errors)
    for phase in PHASES:
        _merge(phases[phase], list(_own_uses(src, phase, registry, phases[phase])))
    identity = _own_identity(src) or next(
        (p.identity for p in reversed(parents) if p.identity != NO_IDENTITY), None
    )
    handshake = _own_handshake(src) or next(
        (p.handshake for p in reversed(parents) if p.handshake is not None), None
    )
    if handshake is not None and not handshake.accepts and identity and identity.protocol_version:
        handshake = replace(handshake, accepts=(identity.protocol_version,))  # what it asked for
    abstract = bool(src.data.get("abstract", False))
    if identity is None and not abstract:
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
        identity=identity or NO_IDENTITY,
        extends=tuple(src.get("extends", [])),
        abstract=abstract,
        required_by_default=bool(src.data.get("required_by_default", True)),
        source=str(src.path),
        handshake=handshake,
        **{phase: tuple(uses) for phase, uses in phases.items()},
    )
    return done[name]


def _inherited_uses(
    src: YamlSource, parents: list[Profile], errors: list[InputError]
) -> dict[str, list[BehaviourUse]]:
    """The parents' entries per phase, in order (a same id replaces in place), less ``remove``."""
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
            listed = ", ".join(sorted(set(inherited))) or "none (this profile inherits no entries)"
            errors.append(
                src.error(
                    ("remove", index),
                    f"no inherited entry has id {gone!r}{did_you_mean(gone, inherited)}; inherited ids: {listed}",
                )
            )
        for phase in PHASES:
            phases[phase] = [u for u in phases[phase] if u.id != gone]
    return phases


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


def _evidence(entries: Iterable[Mapping[str, Any]]) -> tuple[Evidence, ...]:
    return tuple(
        Evidence(e["level"], e.get("source", ""), e.get("note", ""), e.get("checked", ""))
        for e in entries
    )


def _own_uses(
    src: YamlSource,
    phase: str,
    registry: Mapping[str, BehaviourSpec],
    inherited: list[BehaviourUse],
) -> Iterable[BehaviourUse]:
    """This file's entries of ``phase``; one replacing an inherited entry by id keeps that
    entry's ``provider`` unless it states its own (as it keeps the entry's place)."""
    providers = {u.id for u in inherited if u.provider}
    for entry in src.get(phase, []):
        use = _own_use(src, entry, registry[entry["use"]])
        if "provider" not in entry and use.id in providers:
            use = replace(use, provider=True)
        yield use


def _own_use(src: YamlSource, entry: Mapping[str, Any], spec: BehaviourSpec) -> BehaviourUse:
    params = copy.deepcopy(spec.defaults())
    params.update(copy.deepcopy(entry.get("with") or {}))
    return BehaviourUse(
        name=entry["use"],
        params=params,
        evidence=_evidence(entry["evidence"]),
        id=entry.get("id", entry["use"]),
        frequency=entry.get("frequency", "always"),
        declared_in=str(src.path),
        provider=bool(entry.get("provider", False)),
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
        evidence=_evidence(raw["evidence"]),
        modern_versions=tuple(raw.get("modern_versions", ("2026-07-28",))),
        accepts=tuple(raw.get("accepts") or ()),
        initialize_after_discover=bool(raw.get("initialize_after_discover", False)),
        honours_ttl=bool(raw.get("honours_ttl", False)),
        listens=bool(raw.get("listens", False)),
        declared_in=str(src.path),
    )
