"""A plain schema's 2020-12 errors are written without jsonschema, exactly as jsonschema
writes them (keyword, value, paths, instance, message, in its order, up to the limit), and
jsonschema is asked again wherever that could not hold."""

from __future__ import annotations

import random

import fastjsonschema
import jsonschema
import pytest

from mcp_matrix.behaviours import plain_errors, validation
from mcp_matrix.behaviours.plain_schemas import is_plain
from tests.behaviours.test_plain_schemas import INSTANCES, SCHEMAS

TYPES = ["string", "integer", "number", "boolean", "array", "object", "null"]
KEYWORDS = [
    "type",
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "required",
    "properties",
    "properties",
    "additionalProperties",
    "items",
    "allOf",
    "anyOf",
    "$ref",
    "description",
]


def _value(rng: random.Random, depth: int = 0):
    r = rng.random() * (0.6 if depth > 3 else 1)
    if r < 0.1:
        return rng.choice(["", "a", "ab", "abcd"])
    if r < 0.2:
        return rng.choice([0, 1, 2, -1, 10**20])
    if r < 0.3:
        return rng.choice([0.5, 2.0, -3.5])
    if r < 0.4:
        return rng.choice([True, False])
    if r < 0.45:
        return None
    if r < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice("abcdef"): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _schema(rng: random.Random, depth: int = 0):
    if depth > 3 or rng.random() < 0.05:
        return rng.choice([True, False, {}])
    out: dict = {}
    for _ in range(rng.randint(0, 4)):
        k = rng.choice(KEYWORDS)
        if k == "type":
            out[k] = rng.choice(TYPES) if rng.random() < 0.6 else rng.sample(TYPES, 2)
        elif k == "enum":
            out[k] = [_value(rng, 3) for _ in range(rng.randint(1, 3))]
        elif k == "const":
            out[k] = _value(rng, 3)
        elif k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            out[k] = rng.choice([0, 1, 2.5, -1])
        elif k in ("minLength", "maxLength", "minItems", "maxItems"):
            out[k] = rng.choice([0, 1, 2, 3])
        elif k == "required":
            out[k] = rng.sample(list("abcdef"), rng.randint(0, 3))
        elif k == "properties":
            out[k] = {c: _schema(rng, depth + 1) for c in rng.sample(list("abcdef"), 3)}
        elif k in ("additionalProperties", "items"):
            out[k] = _schema(rng, depth + 1)
        elif k in ("allOf", "anyOf"):
            out[k] = [_schema(rng, depth + 1) for _ in range(rng.randint(1, 3))]
        elif k == "$ref":
            return {"$ref": rng.choice(["#/$defs/x", "#/definitions/y"]), "description": "d"}
        else:
            out[k] = "words"
    return out


def _jsonschema(schema, instance, limit):
    """What jsonschema says, as validation.py reads it (None: it recursed too deep)."""
    checker = validation._DRAFT2020(schema, registry=validation.REGISTRY)
    out = []
    try:
        for error in checker.iter_errors(instance):
            out.append(validation._from_jsonschema(error))
            if len(out) >= limit:
                break
    except RecursionError:
        return None
    except jsonschema.exceptions._WrappedReferencingError:
        return []  # a reference to nothing reached: validation.py's check says nothing
    return out


def _ours(schema, instance, limit):
    try:
        return [
            validation._from_plain(e) for e in plain_errors.errors_2020(schema, instance, limit)
        ]
    except plain_errors.TooDeep:
        return None
    except plain_errors.Unresolved:
        return []


def _same(theirs, ours) -> bool:
    # repr: True and 1 are told apart (a Violation's == would not)
    return theirs is None or (ours is not None and list(map(repr, theirs)) == list(map(repr, ours)))


def test_the_errors_are_jsonschemas_on_random_plain_schemas():
    """Some schemas lack the entries their references name (``is_plain(unresolved=True)``):
    jsonschema fails where it reaches one, and says nothing; so does plain_errors."""
    rng = random.Random(25)
    compared = refused = 0
    while compared < 2000:
        root = _schema(rng)
        if isinstance(root, dict):
            if rng.random() < 0.8:
                root["$defs"] = {"x": _schema(rng, 2)}
            if rng.random() < 0.8:
                root["definitions"] = {"y": _schema(rng, 2)}
        if not is_plain(root, unresolved=True):
            continue
        for _ in range(3):
            instance = _value(rng)
            for limit in (validation.ERRORS_KEPT, 1000):
                theirs, ours = _jsonschema(root, instance, limit), _ours(root, instance, limit)
                assert _same(theirs, ours), (root, instance)
                # too deep for us is asked of jsonschema; too deep for jsonschema never ours alone
                assert theirs is not None or ours is None, (root, instance)
                compared += 1
                refused += bool(theirs)
    assert refused > compared // 4  # the cases refuse often enough to say something


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_the_errors_are_jsonschemas_on_the_plain_schema_cases(schema):
    for instance in INSTANCES:
        assert _same(_jsonschema(schema, instance, 5), _ours(schema, instance, 5)), instance


def test_every_checked_case_agrees_with_the_installed_jsonschema():
    for schema, instance in plain_errors.CASES:
        assert is_plain(schema)
        assert validation._plain_words_agree(schema, instance)
        assert _jsonschema(schema, instance, 5)  # each case is refused: its words are checked


def test_a_refused_call_of_a_plain_schema_builds_no_jsonschema_validator(monkeypatch):
    """The server's 2020-12 words for a refused call come without jsonschema (fails before:
    a validator was built for the words)."""
    assert validation._plain_words_hold()
    built = []
    real = validation._jsonschema_validator
    monkeypatch.setattr(
        validation, "_jsonschema_validator", lambda *a, **k: built.append(a) or real(*a, **k)
    )
    schema = {"type": "object", "properties": {"q": {"type": "integer", "minimum": 4097}}}
    errors = validation.validate(schema, {"q": "x", "r": 1}, "2020-12").errors
    assert [(e.validator, e.path, e.schema_path, e.message) for e in errors] == [
        ("type", ("q",), ("properties", "q", "type"), "'x' is not of type 'integer'")
    ]
    assert built == []


def test_words_that_do_not_hold_send_the_call_to_jsonschema(monkeypatch):
    """Another jsonschema release that words a case otherwise: jsonschema is asked."""
    monkeypatch.setattr(validation, "_PLAIN_WORDS_HOLD", [False])
    built = []
    real = validation._jsonschema_validator
    monkeypatch.setattr(
        validation, "_jsonschema_validator", lambda *a, **k: built.append(a) or real(*a, **k)
    )
    schema = {"type": "object", "properties": {"q": {"type": "integer", "minimum": 4098}}}
    errors = validation.validate(schema, {"q": 1}, "2020-12").errors
    assert [e.message for e in errors] == ["1 is less than the minimum of 4098"]
    assert len(built) == 1


# -- fastjsonschema's first draft-07 error (a client's own validation) ------------------------


def _fast(schema, instance):
    """What the compiled fastjsonschema check says, as validation.py reads it."""
    fn = validation._fast_compile_new(schema)
    try:
        fn(instance)
    except fastjsonschema.JsonSchemaValueException as exc:
        return validation._from_fast(exc)
    return None


def _fast_ours(schema, instance):
    found = plain_errors.fast_first_error(schema, instance)
    return None if found is None else validation._from_fast(found)


def test_the_first_error_is_fastjsonschemas_on_random_plain_schemas():
    rng = random.Random(7)
    compared = refused = 0
    while compared < 1500:
        root = _schema(rng)
        if isinstance(root, dict):
            root["$defs"] = {"x": _schema(rng, 2)}
            root["definitions"] = {"y": _schema(rng, 2)}
        if not (
            is_plain(root) and validation._fast_path_safe(root) and plain_errors.like_fast(root)
        ):
            continue
        for _ in range(3):
            instance = _value(rng)
            try:
                ours = _fast_ours(root, instance)
            except plain_errors.TooDeep:
                continue  # compiled instead
            try:
                theirs = _fast(root, instance)
            except RecursionError:
                continue
            assert repr(theirs) == repr(ours), (root, instance)
            compared += 1
            refused += theirs is not None
    assert refused > compared // 4


def test_every_fast_case_agrees_with_the_installed_fastjsonschema():
    assert validation._fast_words_agree(
        plain_errors.FAST_CASE_SCHEMA, plain_errors.FAST_CASE_INSTANCES
    )
    said = {
        _fast(plain_errors.FAST_CASE_SCHEMA, x).validator
        for x in plain_errors.FAST_CASE_INSTANCES[:-1]
    }
    assert len(said) >= 15  # every case is refused, for many keywords


def test_a_client_refusal_of_a_plain_schema_compiles_nothing(monkeypatch):
    """A client's draft-07 refusal (fastjsonschema's first error) of a plain schema comes
    without compiling it (fails before: each refused schema was compiled)."""
    assert validation._fast_words_hold()
    compiled = []
    real = validation._fast_compile_new
    monkeypatch.setattr(validation, "_fast_compile_new", lambda s: compiled.append(s) or real(s))
    schema = {"type": "object", "properties": {"q": {"type": "integer", "minimum": 4095}}}
    errors = validation.validate(schema, {"q": 1}, "draft-07").errors
    assert [(e.validator, e.path, e.message) for e in errors] == [
        ("minimum", ("q",), "data.q must be bigger than or equal to 4095")
    ]
    assert compiled == []


def test_a_schema_fastjsonschema_refuses_to_compile_is_not_written():
    """fastjsonschema does not compile a required property that additionalProperties forbids:
    such a schema is not one plain_errors follows (the client skips validation, as before)."""
    schema = {"properties": {"a": {}}, "required": ["b"], "additionalProperties": False}
    assert is_plain(schema)
    assert not plain_errors.like_fast(schema)
    assert validation._fast_compile_new(schema) is None


def test_a_schema_with_a_reference_to_nothing_is_judged_without_jsonschema(monkeypatch):
    """A 2020-12 check of a schema whose reference names no entry: no metaschema walk and no
    jsonschema validator (fails before: both, for every such schema), and jsonschema's answer:
    errors met before the reference, nothing once it is reached."""
    assert validation._plain_words_hold()  # its own check, once a process, before counting
    built = []
    real = validation._jsonschema_validator
    monkeypatch.setattr(
        validation, "_jsonschema_validator", lambda *a, **k: built.append(a) or real(*a, **k)
    )
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 4093}, "r": {"$ref": "#/$defs/gone"}},
    }
    assert not is_plain(schema) and is_plain(schema, unresolved=True)
    assert not validation.validate(schema, {"n": 1}, "2020-12").errors
    assert [e.message for e in validation.validate(schema, {"n": 4094}, "2020-12").errors] == [
        "4094 is greater than the maximum of 4093"
    ]
    assert not validation.validate(schema, {"n": 4094, "r": 1}, "2020-12").errors
    assert built == []
    monkeypatch.undo()
    checker = validation._jsonschema_validator(
        schema, validation._DRAFT2020, jsonschema.Draft202012Validator
    )
    assert not checker({"n": 4094, "r": 1}).errors  # what jsonschema says, as before
