"""Client-side JSON Schema validation, compiled once per (schema, dialect), safe on hostile schemas.

Draft-07 uses fastjsonschema (compiled to Python, fast enough for large replays); 2020-12
uses jsonschema. A schema that does not compile skips validation, as Gemini CLI's Ajv
wrapper does (docs/clients/google.md#gemini-cli).

Untrusted schemas (docs/security.md): references resolve only inside the document or to a
bundled metaschema (``schema_refs.REGISTRY``; nothing is fetched or read, an external
reference is unresolvable, so the schema "does not compile"); every ``pattern`` runs under a
time budget (``patterns``). fastjsonschema compiles its own ``re`` calls and fetches remote
references with ``urlopen``, so it only gets schemas without patterns, ``$id`` or references
outside the document; the others go to jsonschema with the bounded keywords below.
"""

from __future__ import annotations

import contextvars
import json
import marshal
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import fastjsonschema
import jsonschema
from jsonschema import _keywords, validators
from jsonschema.exceptions import ValidationError
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from mcp_matrix.behaviours import plain_errors as words
from mcp_matrix.behaviours.plain_errors import CASES as PLAIN_CASES
from mcp_matrix.behaviours.plain_errors import PlainError, TooDeep, Unresolved, errors_2020
from mcp_matrix.behaviours.plain_schemas import INVALID, VALID, is_plain, judge
from mcp_matrix.behaviours.rewrite import contains, fingerprint, mentions
from mcp_matrix.behaviours.schema_limits import without_long_enums
from mcp_matrix.behaviours.schema_refs import REGISTRY, external_refs, refusing_handlers
from mcp_matrix.core.jsontypes import JSON

DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"
ERRORS_KEPT = 5


@dataclass(frozen=True)
class Violation:
    """One validation error as fields, so nothing downstream parses a validator's English.

    ``validator`` is the keyword that failed (``required``, ``type``, ``additionalProperties``),
    ``validator_value`` its value in the schema, ``path`` where in the instance (property
    names and item indexes), ``schema_path`` where in the schema (empty when the validator does
    not say: fastjsonschema), ``instance`` the failing value, ``names`` the properties involved
    (missing ones for ``required``, unexpected ones for ``additionalProperties``), and
    ``message`` the validator's own words, for display only.
    """

    validator: str
    validator_value: Any
    path: tuple[str | int, ...]
    schema_path: tuple[str | int, ...]
    instance: Any
    message: str
    names: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """The instance path as ``a/b/0``, or ``(root)``."""
        return "/".join(map(str, self.path)) or "(root)"

    @property
    def text(self) -> str:
        """``where: message``, the line a report shows."""
        return f"{self.where}: {self.message}"

    def to_json(self) -> dict:
        return {
            "validator": self.validator,
            "validator_value": _small(self.validator_value),
            "path": list(self.path),
            "schema_path": list(self.schema_path),
            "instance": _small(self.instance),
            "names": list(self.names),
            "message": self.message[:300],
        }


def plain_errors(errors: Sequence[Violation]) -> str:
    """Validation errors in plain words: ``customer_id is unknown, account_id is missing``.

    Read from the errors' fields (keyword, instance path, the properties involved), never
    from a validator's English."""
    unknown, missing, other = [], [], []
    for error in errors:
        prefix = "".join(f"{p}." for p in error.path)
        if error.validator == "required" and error.names:
            missing += [prefix + n for n in error.names]
        elif error.validator == "additionalProperties" and error.names:
            unknown += [prefix + n for n in error.names]
        else:
            other.append(error.text if error.path else error.message)
    parts = [f"{n} is unknown" for n in unknown] + [f"{n} is missing" for n in missing] + other
    return ", ".join(dict.fromkeys(parts[:4]))


def _small(value: JSON) -> JSON:
    """A value as it goes into results: itself when short, else its JSON type (an instance may be huge)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:200] + "…"
    text = repr(value)
    return (
        value
        if len(text) <= 200 and _plain(value)
        else {"type": type(value).__name__, "size": len(value)}
    )


def _plain(value: JSON, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))


def _names(validator: str, value: object, instance: object, schema: object) -> tuple[str, ...]:
    """The properties a ``required`` or ``additionalProperties`` error is about, from the instance and schema."""
    if not isinstance(instance, dict):
        return ()
    if validator == "required" and isinstance(value, list):
        return tuple(str(n) for n in value if n not in instance)
    if validator == "additionalProperties" and isinstance(schema, dict):
        props = given if isinstance(given := schema.get("properties"), dict) else {}
        pats = (
            list(schema.get("patternProperties") or {})
            if isinstance(schema.get("patternProperties"), dict)
            else []
        )
        return tuple(
            sorted(
                (
                    str(k)
                    for k in instance
                    if k not in props and not any(_matches(p, k) for p in pats)
                ),
                key=str,
            )
        )
    return ()


def _from_jsonschema(e: ValidationError) -> Violation:
    validator = str(e.validator)
    path = tuple(e.absolute_path)
    return Violation(
        validator=validator,
        validator_value=e.validator_value,
        path=path,
        schema_path=tuple(e.absolute_schema_path),
        instance=e.instance,
        message=e.message,
        names=_names(validator, e.validator_value, e.instance, e.schema),
    )


def _from_plain(e: PlainError) -> Violation:
    """``_from_jsonschema`` of the error jsonschema would give (``plain_errors``)."""
    validator = str(e.validator)
    return Violation(
        validator=validator,
        validator_value=e.validator_value,
        path=tuple(e.path),
        schema_path=tuple(e.schema_path),
        instance=e.instance,
        message=e.message,
        names=_names(validator, e.validator_value, e.instance, e.schema),
    )


def _from_fast(exc: fastjsonschema.JsonSchemaValueException) -> Violation:
    rule = str(exc.rule or "")
    path = tuple(exc.path[1:]) if exc.path and exc.path[0] == "data" else tuple(exc.path or ())
    return Violation(
        validator=rule,
        validator_value=exc.rule_definition,
        path=path,
        schema_path=(),
        instance=exc.value,
        message=exc.message,
        names=_names(rule, exc.rule_definition, exc.value, exc.definition),
    )


@dataclass(frozen=True)
class Validation:
    """What validating one instance found: errors, and what was too costly to check."""

    errors: tuple[Violation, ...] = ()
    unchecked: tuple[str, ...] = ()  # patterns over their time budget
    long_enums: tuple[str, ...] = ()  # enums over the cap (schema_limits), left out


_COMPILED: dict[tuple[str, str], Callable[[JSON], Validation] | None] = {}
# Patterns over budget in the validation running in this thread: once one pattern ran out of
# budget it is not run again, and after TIMEOUTS_PER_VALIDATION none is (a bound per call).
TIMEOUTS_PER_VALIDATION = 5
_UNCHECKED: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "unchecked", default=None
)


def _matches(pattern: str, text: str) -> bool:
    """A bounded ``re.search``; a pattern over budget counts as matching (it was not checked)."""
    costly = _UNCHECKED.get()
    if costly is not None and (pattern in costly or len(costly) >= TIMEOUTS_PER_VALIDATION):
        return True
    # imported where a schema has a pattern: regex is ~25 ms of a process's start, and a
    # replay of schemas without one (most tools) never needs it
    from mcp_matrix.behaviours import patterns

    try:
        return patterns.search(pattern, text)
    except patterns.PatternTooCostly as exc:
        if costly is not None:
            costly[pattern] = str(exc)
        return True


def _pattern(validator, patrn, instance, schema):
    if validator.is_type(instance, "string") and not _matches(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for k, v in instance.items():
            if _matches(pattern, k):
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def _additional_properties(validator, ap, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    pats = list(schema.get("patternProperties", {}))
    extras = [k for k in instance if k not in properties and not any(_matches(p, k) for p in pats)]
    if validator.is_type(ap, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], ap, path=extra)
    elif not ap and extras:
        listed = ", ".join(repr(e) for e in sorted(extras, key=str))
        yield ValidationError(f"Additional properties are not allowed ({listed} unexpected)")


_BOUNDED = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}
_DRAFT7 = validators.extend(jsonschema.Draft7Validator, _BOUNDED)
_DRAFT2020 = validators.extend(jsonschema.Draft202012Validator, _BOUNDED)


def _fast_path_safe(schema: JSON) -> bool:
    """Whether fastjsonschema may compile ``schema``: no pattern to run, nothing to fetch."""
    if mentions(schema, "pattern", "patternProperties") or contains(schema, '"$id":"', '"id":"'):
        return False
    return not (mentions(schema, "$ref") and external_refs(schema, limit=1))


def _compile(schema: JSON, dialect: str) -> Callable[[JSON], Validation] | None:
    """The check for ``schema``; an enum over the cap (schema_limits) is left out and said so."""
    schema, skipped = _once(_long_enums_left_out, schema)
    check = _compile_bounded(schema, dialect, judged=not skipped)
    if not skipped or check is None:
        return check

    def check_and_say(instance: JSON) -> Validation:
        done = check(instance)
        return Validation(done.errors, done.unchecked, skipped)

    return check_and_say


def _long_enums_left_out(schema: JSON, _: bool) -> tuple[JSON, tuple[str, ...]]:
    return without_long_enums(schema)


def _compile_bounded(
    schema: JSON, dialect: str, judged: bool = True
) -> Callable[[JSON], Validation] | None:
    """The check for ``schema``; a plain one (``plain_schemas``) is judged without compiling,
    and compiled only for an instance the judge is not sure is valid (``judged``)."""
    if dialect == "auto":
        dialect = (
            "2020-12"
            if isinstance(schema, dict) and schema.get("$schema") == DRAFT_2020
            else "draft-07"
        )
    if not isinstance(schema, (dict, bool)):
        return None
    plain = judged and _once(is_plain, schema)
    if dialect != "draft-07":
        if plain or (judged and _once(is_plain, schema, True)):
            return _plain_2020(schema)
        return _screened_2020(schema)
    if plain:
        return _judged_first(schema, lambda: _draft7_check(schema))
    return _draft7_check(schema)


_ONCE: dict[tuple[int, Callable, bool], tuple[JSON, Any]] = {}


def _once(fn: Callable[[JSON, bool], Any], schema: JSON, flag: bool = False) -> Any:
    """``fn(schema, flag)`` once per schema object (``is_plain``, ``without_long_enums``): the
    server's 2020-12 check and a client's draft-07 check of one schema (Gemini CLI and Qwen
    Code validate against the server's) are compiled apart, from the one schema object."""
    key = (id(schema), fn, flag)
    hit = _ONCE.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    found = fn(schema, flag)
    _ONCE[key] = (schema, found)  # holding the schema keeps its id unique
    return found


_VERDICTS: dict[tuple[int, int], tuple[JSON, JSON, bytes, int]] = {}
VERDICTS_KEPT = 64  # (schema, instance) pairs whose verdict is kept: about one call's checks
CONTENTS_KEPT = 16384  # bytes of contents a result kept by identity is checked against, at most


def contents(*values: JSON) -> bytes | None:
    """``values`` as bytes that differ whenever their contents do (1, 1.0 and True apart, key
    order too), so a result kept for objects by identity is reused only while a caller has not
    changed them in place; None for what is not plain data or over ``CONTENTS_KEPT`` bytes
    (then nothing is kept: a kept result stays small, and a check never costs more than the
    work it saves). marshal, at C speed: far less than a judgement or a read."""
    if any(_long_string(value) for value in values):
        return None  # over the bound for sure, without copying it
    try:
        # version 2: no back-references, floats as bits; JSON is marshallable or refused
        found = marshal.dumps(values, 2)  # type: ignore[arg-type]
    except ValueError:  # not plain data, or nested too deep
        return None
    return found if len(found) <= CONTENTS_KEPT else None


def _long_string(value: JSON) -> bool:
    """Whether ``value`` is, or directly holds, a string over ``CONTENTS_KEPT`` characters."""
    if isinstance(value, str):
        return len(value) > CONTENTS_KEPT
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(isinstance(v, str) and len(v) > CONTENTS_KEPT for v in items)


def _verdict(schema: JSON, instance: JSON) -> int:
    """``judge``, kept for the last few (schema, instance) objects. A client validating against
    the server's schema (Gemini CLI, Qwen Code: draft-07) and the modelled server (2020-12)
    judge the very same arguments against the very same schema object, one right after the
    other; the judge reads no dialect (its ``VALID`` is every validator's). A hit is the same
    objects (threads never mix two) with the same ``contents`` of the instance: a caller that
    changed the arguments in place since is judged again. A schema is its object, here as in
    every compiled check and fingerprint (``rewrite.fingerprint``): never changed in place."""
    key = (id(schema), id(instance))
    hit = _VERDICTS.get(key)
    now = contents(instance)
    if hit is not None and hit[0] is schema and hit[1] is instance and hit[2] == now:
        return hit[3]
    verdict = judge(schema, instance)
    if now is not None:
        if len(_VERDICTS) >= VERDICTS_KEPT:
            _VERDICTS.clear()
        _VERDICTS[key] = (schema, instance, now, verdict)  # holding both keeps their ids unique
    return verdict


def _judged_first(
    schema: JSON, build: Callable[[], Callable[[JSON], Validation] | None]
) -> Callable[[JSON], Validation]:
    """A plain schema's draft-07 check: an instance the judge finds valid is valid (every
    validator accepts it); any other goes to the compiled check, built on first need."""
    full: list[Callable[[JSON], Validation] | None] = []
    written: list[bool] = []  # whether plain_errors writes fastjsonschema's words for it

    def check(instance: JSON) -> Validation:
        if _verdict(schema, instance) == VALID:
            return _VALID
        if not written:
            written.append(_fast_path_safe(schema) and words.like_fast(schema))
        if written[0] and _fast_words_hold():
            try:
                found = words.fast_first_error(schema, instance)
                return _VALID if found is None else Validation((_from_fast(found),))
            except TooDeep:
                pass
        if not full:
            full.append(build())
        return full[0](instance) if full[0] else _VALID

    return check


_FAST_WORDS_HOLD: list[bool] = []


def _fast_words_hold() -> bool:
    """Whether ``plain_errors.fast_first_error`` gives the installed fastjsonschema's very
    first error on its checked cases (one compile, once a process); if not, it compiles."""
    if not _FAST_WORDS_HOLD:
        _FAST_WORDS_HOLD.append(
            _fast_words_agree(words.FAST_CASE_SCHEMA, words.FAST_CASE_INSTANCES)
        )
    return _FAST_WORDS_HOLD[0]


def _fast_words_agree(schema: JSON, instances: Sequence[JSON]) -> bool:
    fn = _fastjsonschema(schema)
    if fn is None or not words.like_fast(schema):
        return False
    for instance in instances:
        try:
            fn(instance)
            theirs = None
        except fastjsonschema.JsonSchemaValueException as exc:
            theirs = _from_fast(exc)
        ours = words.fast_first_error(schema, instance)
        if repr(theirs) != repr(None if ours is None else _from_fast(ours)):
            return False
    return True


def _draft7_check(schema: JSON) -> Callable[[JSON], Validation] | None:
    """fastjsonschema's draft-07 check (its first error), or jsonschema's where it may not run."""
    fn = _fast_compile(schema) if _fast_path_safe(schema) else None
    if fn is None:
        return _jsonschema_validator(schema, _DRAFT7, jsonschema.Draft7Validator)

    def check(instance: JSON) -> Validation:
        try:
            fn(instance)
            return Validation()
        except fastjsonschema.JsonSchemaValueException as exc:
            return Validation((_from_fast(exc),))
        except Exception as exc:  # noqa: BLE001 -- a compiled validator failing on odd input: report, don't crash
            return Validation((Violation("", None, (), (), instance, f"validator error: {exc}"),))

    return check


_FAST: dict[str, Callable[[JSON], JSON] | None] = {}


def _fast_compile(schema: JSON) -> Callable[[JSON], JSON] | None:
    """fastjsonschema's draft-07 function for ``schema``, or None when it does not compile.

    Compiled once per distinct content: a 2020-12 schema's screen and a draft-07 check of the
    same schema (the server's side and a client validating against the server's schema) are
    one function, and compiling is most of a replay's fixed cost."""
    key = fingerprint(schema)
    if key not in _FAST:
        _FAST[key] = _fast_compile_new(schema)
    return _FAST[key]


def _fast_compile_new(schema: Any) -> Callable[[JSON], JSON] | None:
    return _fastjsonschema(schema)


def _fastjsonschema(schema: Any) -> Callable[[JSON], JSON] | None:
    """fastjsonschema's function for ``schema`` as this module compiles every one (the tool
    schemas through ``_fast_compile``, once each; ``_fast_words_agree``'s own case apart)."""
    try:
        return fastjsonschema.compile(
            {k: v for k, v in schema.items() if k != "$schema"}
            if isinstance(schema, dict)
            else schema,
            handlers=refusing_handlers(),
            use_default=False,
            use_formats=False,
        )
    except Exception:  # noqa: BLE001 -- fastjsonschema raises many kinds on odd schemas: treat as "does not compile"
        return None


# Keywords that 2020-12 reads differently from draft-07, or that one of them lacks.
_NOT_THE_SAME_IN_DRAFT7 = (
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "additionalItems",
    "minContains",
    "maxContains",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$anchor",
    "$vocabulary",
)
# Keys beside a ``$ref`` that do not validate (draft-07 ignores a ``$ref``'s siblings).
_ANNOTATIONS = {"$ref", "$comment", "description", "title", "default", "examples"}


def _reads_the_same_in_draft7(schema: JSON) -> bool:
    """Whether a 2020-12 ``schema`` accepts exactly what draft-07 accepts: none of the keywords
    that differ, ``items`` never a list, no ``$ref`` with validating siblings. Conservative:
    False only costs the fast path."""
    if mentions(schema, *_NOT_THE_SAME_IN_DRAFT7) or contains(schema, '"items":['):
        return False
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if "$ref" in node and not node.keys() <= _ANNOTATIONS:
                return False
            stack.extend(node.values())
    return True


def _screened_2020(schema: JSON) -> Callable[[JSON], Validation] | None:
    """The 2020-12 check: jsonschema, as before, behind a compiled draft-07 screen where the
    two read ``schema`` alike. An instance the screen accepts is valid; any other goes to
    jsonschema (built on first need), so errors and their words do not change. Most recorded
    calls are valid, and jsonschema per call was half of a large replay's time."""
    screen = (
        _fast_compile(schema)
        if _fast_path_safe(schema) and _reads_the_same_in_draft7(schema)
        else None
    )
    if screen is None:
        return _jsonschema_validator(schema, _DRAFT2020, jsonschema.Draft202012Validator)
    full: list[Callable[[JSON], Validation] | None] = []

    def check(instance: JSON) -> Validation:
        try:
            screen(instance)
        except Exception:  # noqa: BLE001 -- refused or confused: jsonschema decides and says why
            if not full:  # a schema jsonschema cannot check is not checked (no errors), as before
                full.append(
                    _jsonschema_validator(schema, _DRAFT2020, jsonschema.Draft202012Validator)
                )
            return full[0](instance) if full[0] else _VALID
        return _VALID

    return check


_VALID = Validation()


def _plain_2020(schema: JSON) -> Callable[[JSON], Validation]:
    """``_screened_2020`` for a plain schema, without compiling what it need not: the judge
    decides a valid instance; one it is unsure of goes to the compiled screen as before (where
    fastjsonschema is lenient, as with ``True`` for an enum's ``1``, the screen's answer
    stands); one every validator refuses goes straight to jsonschema for its words, built with
    no metaschema check (a plain schema is valid)."""
    screenable = _fast_path_safe(schema) and _reads_the_same_in_draft7(schema)
    screen: list[Callable[[JSON], JSON] | None] = []
    full: list[Callable[[JSON], Validation] | None] = []

    def check(instance: JSON) -> Validation:
        verdict = _verdict(schema, instance)
        if verdict == VALID:
            return _VALID
        if verdict != INVALID and screenable:
            if not screen:
                screen.append(_fast_compile(schema))
            if screen[0] is not None:
                try:
                    screen[0](instance)
                    return _VALID
                except Exception:  # noqa: BLE001, S110 -- refused or confused: jsonschema decides
                    pass
        if _plain_words_hold():
            try:
                errors = errors_2020(schema, instance, ERRORS_KEPT)
                return Validation(tuple(map(_from_plain, errors))) if errors else _VALID
            except TooDeep:
                pass
            except Unresolved:  # jsonschema raises there: its check says nothing
                return _VALID
        if not full:
            full.append(
                _jsonschema_validator(
                    schema, _DRAFT2020, jsonschema.Draft202012Validator, checked=True
                )
            )
        return full[0](instance) if full[0] else _VALID

    return check


_PLAIN_WORDS_HOLD: list[bool] = []


def _plain_words_hold() -> bool:
    """Whether ``plain_errors`` gives the installed jsonschema's very errors on its checked
    cases (``plain_errors.CASES``), asked once a process; if not, jsonschema is asked."""
    if not _PLAIN_WORDS_HOLD:
        _PLAIN_WORDS_HOLD.append(all(_plain_words_agree(s, x) for s, x in PLAIN_CASES))
    return _PLAIN_WORDS_HOLD[0]


def _plain_words_agree(schema: JSON, instance: JSON) -> bool:
    check = _jsonschema_validator(schema, _DRAFT2020, jsonschema.Draft202012Validator, checked=True)
    ours = tuple(map(_from_plain, errors_2020(schema, instance, ERRORS_KEPT)))
    return check is not None and check(instance).errors == ours


_META_VALID: dict[str, bool] = {}  # a subschema's text -> whether the 2020-12 metaschema accepts it
META_VALID_KEPT = 100_000


def _dynamic_ref_once(validator, ref, instance, schema):
    """The 2020-12 metaschema's ``$dynamicRef: "#meta"``, decided once per distinct subschema.

    Checking a schema, every subschema position of the metaschema is ``$dynamicRef: "#meta"``,
    which resolves to the metaschema itself (the root of the dynamic scope): whether it accepts
    a subschema depends on that subschema alone. Tool schemas repeat their small property
    schemas, and walking the metaschema was most of building a validator."""
    try:
        key = json.dumps(instance, sort_keys=True) if ref == "#meta" else None
    except (TypeError, ValueError, RecursionError):
        key = None
    if key is not None and _META_VALID.get(key):
        return
    errors = list(_keywords.dynamicRef(validator, ref, instance, schema))
    if key is not None:
        if len(_META_VALID) >= META_VALID_KEPT:
            _META_VALID.clear()
        _META_VALID[key] = not errors
    yield from errors


_META_2020 = validators.extend(jsonschema.Draft202012Validator, {"$dynamicRef": _dynamic_ref_once})
_META_2020_DOCS: list[Any] = []  # the metaschema's documents without "$schema", and their registry


def _meta_2020_checker() -> Any:
    """A validator of schemas against the 2020-12 metaschema that keeps ``_dynamic_ref_once``.

    jsonschema picks a document's validator class by its ``$schema``, so the metaschema's
    documents are registered here without it (as 2020-12 resources: the same anchors)."""
    if not _META_2020_DOCS:
        docs = {
            uri: DRAFT202012.create_resource(
                {k: v for k, v in SPECIFICATIONS.contents(uri).items() if k != "$schema"}
            )
            for uri in SPECIFICATIONS
            if uri.startswith("https://json-schema.org/draft/2020-12/")
        }
        _META_2020_DOCS.append((docs[DRAFT_2020].contents, Registry().with_resources(docs.items())))
    root, registry = _META_2020_DOCS[0]
    return _META_2020(
        root, registry=registry, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def _check_schema(schema: JSON, meta) -> None:
    """``meta.check_schema(schema)``; for 2020-12 with each distinct subschema checked once."""
    if meta is not jsonschema.Draft202012Validator:
        meta.check_schema(schema)
        return
    for error in _meta_2020_checker().iter_errors(schema):
        raise jsonschema.SchemaError.create_from(error)


def _jsonschema_validator(
    schema: JSON, cls, meta, checked: bool = False
) -> Callable[[JSON], Validation] | None:
    """jsonschema's check (up to ``ERRORS_KEPT`` errors); None when ``schema`` is not valid
    against ``meta``'s metaschema (not asked when ``checked``: a plain schema is valid)."""
    try:
        if not checked:
            _check_schema(schema, meta)
        validator = cls(schema, registry=REGISTRY)
    except (jsonschema.SchemaError, RecursionError, TypeError):
        return None

    def check(instance: JSON) -> Validation:
        unchecked: dict[str, str] = {}
        token = _UNCHECKED.set(unchecked)
        try:
            errors = []
            for e in validator.iter_errors(instance):
                errors.append(_from_jsonschema(e))
                if len(errors) >= ERRORS_KEPT:
                    break
            return Validation(tuple(errors), tuple(unchecked.values()))
        except Exception:  # noqa: BLE001
            # an unresolvable (external) $ref, a pattern that does not compile, absurd depth:
            # the schema "does not compile", so the client skips validation
            return Validation(unchecked=tuple(unchecked.values()))
        finally:
            _UNCHECKED.reset(token)

    return check


def validate(schema: JSON, instance: JSON, dialect: str = "draft-07") -> Validation:
    """Validate ``instance`` against ``schema`` (no errors when the schema does not compile)."""
    key = (fingerprint(schema), dialect)
    if key not in _COMPILED:
        _COMPILED[key] = _compile(schema, dialect)
    check = _COMPILED[key]
    return check(instance) if check else Validation()


def validation_errors(schema: JSON, instance: JSON, dialect: str = "draft-07") -> list[Violation]:
    """Errors of ``instance`` against ``schema`` ([] when valid or when the schema does not compile)."""
    return list(validate(schema, instance, dialect).errors)


# -- formats: what Ajv with ajv-formats (full mode) refuses, for clients that add it ----------

_FORMATS: dict[str, re.Pattern] = {
    # ajv-formats' full-mode email
    "email": re.compile(
        r"^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@"
        r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$",
        re.IGNORECASE,
    ),
    # RFC 3339 date-time (a time zone required, as ajv-formats asks)
    "date-time": re.compile(
        r"^\d{4}-\d{2}-\d{2}[t\s]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:z|[+-]\d{2}(?::?\d{2})?)$",
        re.IGNORECASE,
    ),
    "date": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
    # an absolute URI: a scheme, then no white space
    "uri": re.compile(r"^[a-z][a-z0-9+\-.]*:[^\s]*$", re.IGNORECASE),
}
FORMATS = tuple(_FORMATS)


def format_violations(
    schema: JSON, instance: JSON, formats: Sequence[str], at: str = ""
) -> list[str]:
    """Strings that break a checked ``format`` keyword, as ``"<pointer> must match format ..."``.

    Why: JSON Schema makes ``format`` an annotation, so ``validate`` ignores it; a client that
    adds a format checker (Gemini CLI's Ajv with ajv-formats) refuses such calls before sending.
    Walks ``properties`` and ``items`` only (where tool arguments put formats); not at all when
    no format is checked or ``schema`` has no ``format`` key anywhere (``mentions``: exact when
    False: 565 of the replay benchmark's 1,000 tools)."""
    if not formats or not mentions(schema, "format"):
        return []
    return _format_violations(schema, instance, formats, at)


def _format_violations(schema: JSON, instance: JSON, formats: Sequence[str], at: str) -> list[str]:
    if not isinstance(schema, dict):
        return []
    out = []
    fmt = schema.get("format")
    pattern = _FORMATS.get(fmt) if isinstance(fmt, str) and fmt in formats else None
    # a string over 2,048 characters is not checked (bounded time on hostile input)
    if (
        isinstance(instance, str)
        and pattern
        and len(instance) <= 2048
        and not pattern.match(instance)
    ):
        out.append(f"{at or '/'} must match format {fmt!r}")
    props = schema.get("properties")
    if isinstance(instance, dict) and isinstance(props, dict):
        for key, sub in props.items():
            if key in instance:
                out += _format_violations(sub, instance[key], formats, f"{at}/{key}")
    items = schema.get("items")
    if isinstance(instance, list) and isinstance(items, dict):
        for i, value in enumerate(instance):
            out += _format_violations(items, value, formats, f"{at}/{i}")
    return out
