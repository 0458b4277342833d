"""Bundled profiles, loaded by the real loader, and a helper that runs their discovery on a tool list."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from mcp_matrix.core.model import ClientView
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.profiles.model import Profile
from mcp_matrix.simulate.discovery import client_view, initial_state


@cache
def _profiles() -> dict[str, Profile]:
    return load_profiles()


def profile_names(abstract: bool = False) -> list[str]:
    return sorted(name for name, p in _profiles().items() if p.abstract == abstract)


def load(name: str) -> Profile:
    return _profiles()[name]


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
