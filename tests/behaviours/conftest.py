"""Load bundled profiles straight from clients/*.yaml and run their discovery on a tool list.

A deliberately small stand-in for matrix.profiles.loader (written in parallel): YAML in,
``extends``/``remove``/id replacement resolved as docs/profile-format-draft.md says,
behaviour defaults filled in, a ``Profile`` out. No validation beyond what the tests need.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from matrix.behaviours import registry
from matrix.evidence import Evidence
from matrix.model import ClientView
from matrix.profiles.model import BehaviourUse, Identity, Profile
from matrix.simulate.discovery import client_view, initial_state

CLIENTS = Path(__file__).resolve().parents[2] / "clients"


def profile_names(abstract: bool = False) -> list[str]:
    names = []
    for path in sorted(CLIENTS.glob("*.yaml")):
        if bool(yaml.safe_load(path.read_text()).get("abstract")) == abstract:
            names.append(path.stem)
    return names


@cache
def _raw(name: str) -> dict:
    return yaml.safe_load((CLIENTS / f"{name}.yaml").read_text())


def _use(entry: dict, declared_in: str) -> BehaviourUse:
    spec = registry.get(entry["use"])
    return BehaviourUse(
        name=entry["use"],
        params={**spec.defaults(), **(entry.get("with") or {})},
        evidence=tuple(Evidence(**e) for e in entry["evidence"]),
        id=entry.get("id") or entry["use"],
        frequency=entry.get("frequency", "always"),
        declared_in=declared_in,
    )


@cache
def load(name: str) -> Profile:
    data = _raw(name)
    parents = [load(p) for p in data.get("extends") or []]
    phases: dict[str, list[BehaviourUse]] = {}
    for phase in ("discovery", "cache", "call", "result"):
        merged: list[BehaviourUse] = []
        for use in [u for p in parents for u in p.phases()[phase]] + [
            _use(e, name) for e in data.get(phase) or []
        ]:
            ids = [u.id for u in merged]
            if use.id in ids:
                merged[ids.index(use.id)] = use
            else:
                merged.append(use)
        phases[phase] = [u for u in merged if u.id not in (data.get("remove") or [])]
    identity = None
    if data.get("identity"):
        i = data["identity"]
        identity = Identity(i["clientInfo"], i["protocolVersion"], i.get("capabilities") or {})
    else:
        identity = next((p.identity for p in reversed(parents) if p.identity), None)
    return Profile(
        name=data["name"],
        client=data["client"],
        versions=data["versions"],
        models=data["models"],
        identity=identity,
        extends=tuple(data.get("extends") or ()),
        abstract=bool(data.get("abstract")),
        source=str(CLIENTS / f"{name}.yaml"),
        **{k: tuple(v) for k, v in phases.items()},
    )


def discover(name: str, tools: list[Any], server: str = "srv") -> ClientView:
    """The ClientView of profile ``name`` for ``tools`` (raw tools, or ``(page, tool)`` pairs)."""
    pairs = [t if isinstance(t, tuple) else (0, t) for t in tools]
    return client_view(load(name), initial_state(pairs, server))


@pytest.fixture
def view() -> Callable[..., ClientView]:
    return discover


@pytest.fixture
def profile() -> Callable[[str], Profile]:
    return load


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "concrete_profile" in metafunc.fixturenames:
        metafunc.parametrize("concrete_profile", profile_names())
