"""A (schema, arguments) pair is judged once whatever dialect checks it, and a schema's shape
(plain or not, its long enums) is read once for every dialect it is compiled for.

Offline, Gemini CLI and Qwen Code validate a call against the server's schema (draft-07) and
the modelled server validates the very same arguments against the very same schema (2020-12):
the plain-schema judge, which reads no dialect, ran for both. Counted, never timed; the
results are the same values either way."""

from __future__ import annotations

from mcp_matrix.behaviours import plain_schemas, validation


def counting(monkeypatch, name: str) -> list:
    """The calls ``validation`` makes of ``plain_schemas.<name>`` from now on."""
    seen: list = []
    real = getattr(plain_schemas, name)

    def counted(*args):
        seen.append(args)
        return real(*args)

    monkeypatch.setattr(validation, name, counted)
    return seen


def schema(n: int) -> dict:
    return {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": n}, "s": {"type": "string"}},
        "required": ["n"],
        "additionalProperties": False,
    }


def test_a_client_and_the_server_judge_the_same_arguments_once(monkeypatch):
    judged = counting(monkeypatch, "judge")
    held = schema(8111)
    arguments = {"n": 8112, "s": "x"}
    client = validation.validate(held, arguments, "auto")  # Gemini CLI: draft-07 here
    server = validation.validate(held, arguments, "2020-12")  # the modelled server
    assert client.errors == server.errors == ()
    assert len(judged) == 1  # fails before: 2, one a dialect


def test_the_words_of_a_refusal_are_each_dialects_own(monkeypatch):
    """What is shared is the judge's verdict, never the errors: each dialect still writes its
    own (fastjsonschema's first error for draft-07, jsonschema's for 2020-12), as alone."""
    held, arguments = schema(8221), {"n": 3, "t": 1}
    client = validation.validate(held, arguments, "draft-07")
    server = validation.validate(held, arguments, "2020-12")
    alone_client = validation.validate(schema(8221), dict(arguments), "draft-07")
    alone_server = validation.validate(schema(8221), dict(arguments), "2020-12")
    assert client == alone_client and server == alone_server
    assert client.errors and server.errors and client.errors != server.errors


def test_other_arguments_or_another_schema_are_judged_again(monkeypatch):
    judged = counting(monkeypatch, "judge")
    held = schema(8331)
    validation.validate(held, {"n": 8331}, "draft-07")
    validation.validate(held, {"n": 8331}, "2020-12")  # equal, but another object: judged
    validation.validate(schema(8331), {"n": 8331}, "2020-12")
    assert len(judged) == 3


def test_a_schemas_shape_is_read_once_for_both_dialects(monkeypatch):
    plain = counting(monkeypatch, "is_plain")
    held = schema(8441)
    validation.validate(held, {"n": 8441}, "draft-07")
    validation.validate(held, {"n": 8441}, "2020-12")
    assert len(plain) == 1  # fails before: 2, one a compile
