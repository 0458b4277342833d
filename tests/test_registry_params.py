"""Behaviours' params schemas: mcp-matrix's own are checked here (not in every process), a
plugin's when it registers."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from mcp_matrix.behaviours import registry


def test_every_bundled_behaviours_params_schema_is_valid_2020_12():
    specs = registry.load_all()
    assert specs
    for spec in specs.values():
        try:
            Draft202012Validator.check_schema(spec.params_schema)
        except SchemaError as exc:  # pragma: no cover - names the broken one
            pytest.fail(f"{spec.name}: {exc.message}")


def test_a_bundled_behaviour_is_not_meta_checked_at_import(monkeypatch):
    seen = []
    monkeypatch.setattr(Draft202012Validator, "check_schema", lambda s: seen.append(s))
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))

    def own(plan, ctx):
        """An own behaviour."""
        return plan

    own.__module__ = "mcp_matrix.behaviours.calls"
    registry.behaviour("own-for-test", "call", params={"n": {"type": "integer"}})(own)
    assert seen == []


def test_a_plugins_invalid_params_schema_fails_when_it_registers(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))

    def plugged(plan, ctx):
        """A plugin's behaviour."""
        return plan

    plugged.__module__ = "someone_elses_plugin"
    with pytest.raises(ValueError, match="'plugged-for-test' declares an invalid params schema"):
        registry.behaviour("plugged-for-test", "call", params={"n": {"type": 7}})(plugged)
