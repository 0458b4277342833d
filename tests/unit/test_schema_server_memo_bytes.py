"""The modelled server's answers are remembered up to a size, not only a count.

Each remembered answer is keyed by the call's arguments in words and holds what the handler
read (about as much again); 4,096 were kept whatever their size, so a replay of 300 calls each
carrying a 1 MiB string kept them all. Counted (what the memo holds), never RSS or time."""

from __future__ import annotations

from mcp_matrix.run.call_servers import SchemaServer

MIB = 1 << 20


def test_large_answers_are_kept_up_to_a_size():
    tool = {"name": "store", "inputSchema": {"type": "object", "properties": {"text": {}}}}
    server = SchemaServer({"store": tool})
    for i in range(100):
        assert server.answer("store", {"text": "x" * MIB, "n": i}).ok
    held = sum(len(words) for _, words in server._answers)
    assert held <= SchemaServer.MEMO_BYTES  # fails before: 100 MiB (every call kept)
    assert server._answers  # the last ones are still there


def test_usual_answers_are_kept_by_count_as_before():
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"n": {}}}}
    server = SchemaServer({"t": tool})
    for i in range(SchemaServer.MEMO):
        server.answer("t", {"n": i})
    assert len(server._answers) == SchemaServer.MEMO
    first = server.answer("t", {"n": 0})
    assert server.answer("t", {"n": 0}) is first
