"""The modelled server reads a valid call's arguments once: to answer it, and for
``deliver.unread`` (which keys it does not list) right after, the same objects. Counted (the
top-level reads), never timed; what each gives is the same."""

from __future__ import annotations

from mcp_matrix.run import call_servers
from mcp_matrix.run.call_servers import SchemaServer, unlisted


def test_a_valid_calls_arguments_are_read_once_for_the_answer_and_the_unlisted_keys(
    monkeypatch,
):
    reads = []
    real = call_servers._read

    def counting(schema, value, pointer):
        if pointer == "":
            reads.append(value)
        return real(schema, value, pointer)

    monkeypatch.setattr(call_servers, "_read", counting)
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}}}
    server = SchemaServer({"t": tool})
    arguments = {"a": 1, "extra": 2}
    assert server.answer("t", arguments).ok
    assert unlisted(tool, arguments) == ({"a": 1}, ("/extra",))
    assert len(reads) == 1  # fails before: 2
    assert unlisted(tool, {"a": 1, "extra": 2}) == ({"a": 1}, ("/extra",))  # another object
    assert unlisted(dict(tool), arguments) == ({"a": 1}, ("/extra",))  # another tool
    assert len(reads) == 3
