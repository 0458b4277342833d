"""One profile file's checks: the format (``profile.schema.json``, JSON Schema 2020-12), its
``name`` against the file stem, and every entry against the behaviour registry (a known name
with "did you mean", listed under its own phase, params valid against the behaviour's params
schema, ids unique within a phase)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from mcp_matrix.behaviours.registry import PHASES, REGISTRY, BehaviourSpec
from mcp_matrix.core.errors import InputError, MatrixError, did_you_mean
from mcp_matrix.core.schema_words import KeyPath
from mcp_matrix.core.yamlfile import YamlSource, key_path, schema_errors


def profile_schema() -> dict:
    """The JSON Schema of the profile format (``mcp_matrix/profiles/profile.schema.json``)."""
    schema = format_validator().schema
    assert isinstance(schema, dict)  # profile.schema.json is an object
    return copy.deepcopy(schema)


@lru_cache(maxsize=1)
def format_validator() -> Draft202012Validator:
    text = resources.files("mcp_matrix.profiles").joinpath("profile.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


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


def check_file(src: YamlSource, registry: Mapping[str, BehaviourSpec]) -> list[InputError]:
    """Every problem of one parsed file: the schema, the name, the registry."""
    errors = schema_errors(src, format_validator(), src.data, (), "key")
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
