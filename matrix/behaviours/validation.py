"""Client-side JSON Schema validation, compiled once per (schema, dialect).

Draft-07 uses fastjsonschema (compiled to Python, fast enough for large replays); 2020-12
uses jsonschema. A schema that does not compile skips validation, as Gemini CLI's Ajv
wrapper does (client-quirks.md §7).
"""

from __future__ import annotations

from typing import Any, Callable

import fastjsonschema
import jsonschema

from matrix.behaviours.rewrite import fingerprint

DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"
_COMPILED: dict[tuple[str, str], Callable[[Any], list[str]] | None] = {}


def _compile(schema: Any, dialect: str) -> Callable[[Any], list[str]] | None:
    if dialect == "auto":
        dialect = "2020-12" if isinstance(schema, dict) and schema.get("$schema") == DRAFT_2020 else "draft-07"
    if not isinstance(schema, (dict, bool)):
        return None
    if dialect == "draft-07":
        try:
            fn = fastjsonschema.compile(
                {k: v for k, v in schema.items() if k != "$schema"} if isinstance(schema, dict) else schema,
                use_default=False, use_formats=False,
            )
        except Exception:  # fastjsonschema raises many kinds on odd schemas: treat as "does not compile"
            return _jsonschema_validator(schema, jsonschema.Draft7Validator)

        def check(instance: Any) -> list[str]:
            try:
                fn(instance)
                return []
            except fastjsonschema.JsonSchemaValueException as exc:
                return [exc.message]
            except Exception as exc:  # a compiled validator failing on odd input: report, don't crash
                return [f"validator error: {exc}"]

        return check
    return _jsonschema_validator(schema, jsonschema.Draft202012Validator)


def _jsonschema_validator(schema: Any, cls) -> Callable[[Any], list[str]] | None:
    try:
        cls.check_schema(schema)
        validator = cls(schema)
    except (jsonschema.SchemaError, RecursionError, TypeError):
        return None

    def check(instance: Any) -> list[str]:
        try:
            return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in validator.iter_errors(instance)][:5]
        except Exception:  # an unresolvable $ref or absurd depth: treat as "does not compile", skip
            return []

    return check


def validation_errors(schema: Any, instance: Any, dialect: str = "draft-07") -> list[str]:
    """Errors of ``instance`` against ``schema`` ([] when valid or when the schema does not compile)."""
    key = (fingerprint(schema), dialect)
    if key not in _COMPILED:
        _COMPILED[key] = _compile(schema, dialect)
    check = _COMPILED[key]
    return check(instance) if check else []
