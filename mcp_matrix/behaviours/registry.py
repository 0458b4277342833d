"""The behaviour registry: named pure functions that profiles point at.

A behaviour is registered with its name (the key a profile's YAML uses), its phase, and a
JSON Schema for its parameters. The profile loader validates every entry against that
schema before any server is contacted, so a typo in a profile is an input error with
"did you mean", never a surprise at run time.

Phases and signatures:
- ``discovery``: ``fn(state: ListState, **params) -> ListState`` (the whole tool list, so
  name collisions, caps and whole-list rejections can be modelled).
- ``cache``: ``fn(live: ClientView, baseline: ClientView | None, **params) -> (ClientView, Finding | None)``.
- ``call``: ``fn(plan: CallPlan, ctx: CallContext, **params) -> CallPlan``.
- ``result``: ``fn(result, ctx: CallContext, **params) -> Finding | None``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from mcp_matrix.core.jsontypes import JSON

PHASES = ("discovery", "cache", "call", "result")


@dataclass(frozen=True)
class BehaviourSpec:
    name: str
    phase: str
    fn: Callable[..., Any]
    params: Mapping[str, Any] = field(default_factory=dict)  # JSON Schema per parameter
    required: tuple[str, ...] = ()
    summary: str = ""

    @property
    def params_schema(self) -> dict:
        return {
            "type": "object",
            "properties": dict(self.params),
            "required": list(self.required),
            "additionalProperties": False,
        }

    def defaults(self) -> dict:
        return {k: v["default"] for k, v in self.params.items() if "default" in v}


REGISTRY: dict[str, BehaviourSpec] = {}
# a decorated function keeps its own type
_Behaviour = TypeVar("_Behaviour", bound=Callable[..., object])


_OWN = "mcp_matrix.behaviours."  # modules whose params schemas the tests check


def behaviour(
    name: str,
    phase: str,
    params: Mapping[str, object] | None = None,
    required: tuple[str, ...] = (),
) -> Callable[[_Behaviour], _Behaviour]:
    """Register ``fn`` under ``name``; its docstring's first line becomes its summary.

    A plugin's params schema is checked here, at import, so a broken one fails loudly with the
    behaviour's name (as pluggy checks a plugin when it registers) rather than when a profile
    first uses it. mcp-matrix's own are checked by its tests (tests/test_registry_params.py),
    not in every process: the 2020-12 meta-schema check of all of them cost each command ~80 ms.
    """
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}")

    def register(fn: _Behaviour) -> _Behaviour:
        if name in REGISTRY:
            raise ValueError(f"behaviour {name!r} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()
        spec = BehaviourSpec(
            name, phase, fn, dict(params or {}), tuple(required), doc[0] if doc else ""
        )
        try:
            if not fn.__module__.startswith(_OWN):
                Draft202012Validator.check_schema(spec.params_schema)
        except SchemaError as exc:
            at = "/".join(map(str, exc.absolute_path))
            raise ValueError(
                f"behaviour {name!r} declares an invalid params schema: {exc.message}"
                + (f" at {at}" if at else "")
            ) from exc
        REGISTRY[name] = spec
        return fn

    return register


def get(name: str) -> BehaviourSpec:
    load_all()
    return REGISTRY[name]


_LOADED: list[bool] = []


def load_all() -> dict[str, BehaviourSpec]:
    """Import every phase module so the registry is complete (once)."""
    import importlib

    if _LOADED:
        return REGISTRY

    for module in (
        "discovery",
        "calls",
        "coercion",
        "results",
        "copilot",
        "cline",
        "continue_cli",
        "qwen",
        "openai_agents_js",
        "smolagents",
        "llm_tools_mcp",
        "llamaindex",
        "agent_framework",
        "mcp_use",
        "semantic_kernel",
        "amp",
        "fantasy",
        "run_scope",
    ):
        try:
            importlib.import_module(f"mcp_matrix.behaviours.{module}")
        except ModuleNotFoundError as exc:  # a phase not written yet
            if exc.name != f"mcp_matrix.behaviours.{module}":
                raise
    _LOADED.append(True)
    return REGISTRY


def freeze(value: JSON) -> Any:
    """A hashable stand-in for JSON-ish params (memo keys)."""
    return json.dumps(value, sort_keys=True, default=str)
