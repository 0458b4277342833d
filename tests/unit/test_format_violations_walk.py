"""A client checking formats (Gemini CLI, Qwen Code) walks a schema for ``format`` keys only
when it has one: most tool schemas have none, and the walk ran for every call they validated.
Counted (the schema's look-ups), never timed; what is found is the same."""

from __future__ import annotations

from mcp_matrix.behaviours.validation import FORMATS, format_violations


class Looked(dict):
    """A schema node that counts the keys read from it with ``get``."""

    reads = 0

    def get(self, key, default=None):
        Looked.reads += 1
        return super().get(key, default)


def test_a_schema_without_a_format_key_is_not_walked():
    schema = Looked(
        type="object",
        properties=Looked(when=Looked(type="string"), to=Looked(type="string", title="email")),
    )
    Looked.reads = 0
    assert format_violations(schema, {"when": "soon", "to": "nobody"}, FORMATS) == []
    assert Looked.reads == 0  # fails before: every node's format, properties and items read


def test_a_schema_with_a_format_key_is_walked_as_before():
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "list": {"type": "array", "items": {"type": "string", "format": "email"}},
        },
    }
    found = format_violations(schema, {"when": "soon", "list": ["a@b.co", "x"]}, FORMATS)
    assert found == ["/when must match format 'date-time'", "/list/1 must match format 'email'"]
    assert format_violations(schema, {"when": "soon"}, ()) == []  # no format checked
