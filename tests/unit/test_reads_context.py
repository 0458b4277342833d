"""ReadsContext notes a read of what the client holds, and only that (replay shares a plan made
without one across held copies)."""

from mcp_matrix.simulate.calls import ReadsContext


def test_reading_the_held_schema_or_tool_is_noted_and_fresh_forgets_it():
    ctx = ReadsContext("t", {"type": "object"}, {"name": "t"}, False)
    assert ctx.tool == "t" and not ctx.read_held
    assert ctx.held_schema == {"type": "object"}
    assert ctx.read_held
    assert not ctx.fresh().read_held
    assert ctx.held_tool == {"name": "t"}
    assert ctx.read_held


def test_a_fresh_context_reads_nothing_held_until_asked():
    ctx = ReadsContext("t", {"type": "object"}, None, True)
    assert ctx.stale and ctx.tool == "t"
    assert not ctx.read_held
