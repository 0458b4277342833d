"""A release policy: which clients must see every tool, which verdicts fail, expected failures.

A policy names the clients that must see every tool, the verdicts that fail a release
(default: every ``silent-*``, ``accepted-invalid``, ``broken``), expected failures with a
reason, and the schema-evolution keys (``baseline``, ``aliases``, ``recorded_calls``,
``retire_quiet_days``). Policies come from a YAML file or ``[tool.mcp-matrix]`` in
pyproject.toml; both are validated the same way, and an unknown client is named with its line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from jsonschema import Draft202012Validator

from mcp_matrix.core.errors import InputError, InputErrors, did_you_mean
from mcp_matrix.core.schemas import load_schema
from mcp_matrix.core.yamlfile import key_path, load_yaml_source
from mcp_matrix.report.grid import RELEASE_FAILING

POLICY_SCHEMA: dict = load_schema("policy")  # published: mcp_matrix/core/schemas/policy.schema.json


EVOLUTION_KEYS = ("baseline", "aliases", "recorded_calls", "retire_quiet_days")


@dataclass(frozen=True)
class Policy:
    # None: the default set, every profile of every run required by default (default_required)
    required_clients: tuple[str, ...] | None = None
    fail_on: tuple[str, ...] = RELEASE_FAILING
    expected_failures: tuple[dict, ...] = ()
    source: str = "default policy"
    extra: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict, compare=False)  # key path -> line in a YAML policy

    def where(self, *path: str | int) -> str:
        """``FILE:LINE`` of a key (``FILE: key.path`` where lines are not known: pyproject.toml)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return f"{self.source}:{self.lines[path[:end]]}"
        prefix = ("tool", "mcp-matrix") if self.source.endswith("pyproject.toml") else ()
        return f"{self.source}: {key_path(prefix + path)}"


def load_policy(path: str | Path | None) -> Policy:
    """A policy file (YAML), ``pyproject.toml``'s ``[tool.mcp-matrix]``, or the default."""
    if path is None:
        return Policy()
    p = Path(path)
    lines: dict = {}
    if p.name == "pyproject.toml":
        data = _from_pyproject(p)
    else:
        src = load_yaml_source(p, POLICY_SCHEMA, noun="policy file")
        data, lines = src.data or {}, src.lines
    return Policy(
        required_clients=tuple(data["required_clients"]) if "required_clients" in data else None,
        fail_on=tuple(data.get("fail_on", RELEASE_FAILING)),
        expected_failures=tuple(data.get("expected_failures", ())),
        source=str(p),
        extra={k: v for k, v in data.items() if k in EVOLUTION_KEYS},
        lines=lines,
    )


def _from_pyproject(p: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", where=str(p)) from None
    data = doc.get("tool", {}).get("mcp-matrix")
    if data is None:
        raise InputError("no [tool.mcp-matrix] table", where=str(p))
    errors = sorted(
        Draft202012Validator(POLICY_SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path)
    )
    if errors:
        e = errors[0]
        path = key_path(("tool", "mcp-matrix", *e.absolute_path))
        raise InputError(f"{path}: {e.message}", where=str(p))
    return data


def check_clients(names: Iterable[str], known: Iterable[str], where: str) -> None:
    """Every client a policy or flag names is a known profile (did you mean ...?)."""
    known = list(known)
    for name in names:
        if name not in known:
            raise InputError(
                f"unknown client profile {name!r}{did_you_mean(name, known)}; "
                f"see `mcp-matrix profiles`",
                where=where,
            )


def check_policy_clients(policy: Policy, known: Iterable[str]) -> None:
    """The policy's ``required_clients`` are known profiles: every unknown one is reported with
    its line and the nearest name, before anything runs."""
    known = list(known)
    errors = [
        InputError(
            f"required_clients[{i}]: unknown client profile {name!r}{did_you_mean(name, known)}; "
            "see `mcp-matrix profiles`",
            where=policy.where("required_clients", i),
        )
        for i, name in enumerate(policy.required_clients or ())
        if name not in known
    ]
    if errors:
        raise errors[0] if len(errors) == 1 else InputErrors(errors)


def policy_path(policy: Policy, value: str) -> Path:
    """A path from the policy file, relative to the folder the policy file is in."""
    p = Path(value)
    if p.is_absolute() or policy.source == "default policy":
        return p
    return Path(policy.source).parent / p


__all__ = [
    "EVOLUTION_KEYS",
    "POLICY_SCHEMA",
    "Policy",
    "check_clients",
    "check_policy_clients",
    "load_policy",
    "policy_path",
]
