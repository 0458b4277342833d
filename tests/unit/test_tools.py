"""One answer to "may this tool write?", tools by name, and JSON Pointer tokens (mcp_matrix.core.tools),
read by every module that needs them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_matrix.core import tools
from mcp_matrix.core.events import CallCell
from mcp_matrix.report.advice import advice_for
from mcp_matrix.run.cases import Case, plan_cases, repeat_safe
from mcp_matrix.run.classify import Expectation

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_matrix"

# Says both read-only and destructive: the MCP specification gives destructiveHint a meaning only
# for a tool that is not read-only, so the pair contradicts itself.
BOTH = {"name": "purge", "annotations": {"readOnlyHint": True, "destructiveHint": True}}
READ = {"name": "search", "annotations": {"readOnlyHint": True}}
IDEMPOTENT_BOTH = {
    "name": "reset",
    "annotations": {"readOnlyHint": True, "destructiveHint": True, "idempotentHint": True},
}


@pytest.mark.parametrize(
    ("tool", "read_only"),
    [
        (READ, True),
        (BOTH, False),
        ({"name": "x"}, False),
        ({"name": "x", "annotations": "read-only"}, False),
        ({"name": "x", "annotations": {"readOnlyHint": "true"}}, False),
        (None, False),
    ],
)
def test_a_tool_is_read_only_only_when_it_says_so_and_not_destructive(tool, read_only):
    assert tools.read_only(tool) is read_only
    assert tools.may_write(tool) is not read_only


def test_a_tool_both_read_only_and_destructive_may_write_for_every_command():
    """The contradiction is decided once, the safe way: run skips it, a retry of it is unsafe
    unless idempotent, the intact call is not repeated beside a mutated one, the advice is a
    write's, and replay --read-after and the shared sessions read the same function."""
    from mcp_matrix.evolution import replay
    from mcp_matrix.run import sharing

    run, skipped = plan_cases([BOTH, READ], [], allow_writes=False)
    assert [c.tool for c in run] == ["search"]
    assert [(s.tool, "may write (destructiveHint: true)" in s.reason) for s in skipped] == [
        ("purge", True)
    ]
    assert not tools.retry_safe(BOTH) and tools.retry_safe(IDEMPOTENT_BOTH)
    case = Case(tool="purge", name="c", arguments={}, expect=Expectation())
    assert not repeat_safe(BOTH, case) and not repeat_safe(IDEMPOTENT_BOTH, case)
    silent = CallCell(
        profile="p",
        tool="purge",
        case="c",
        verdict="silent-loss",
        behaviours=("strip-unknown-arguments",),
        mutations=({"kind": "removed", "pointer": "/x"},),
        stale=True,
    )
    assert "raw twin" in advice_for(silent, BOTH)
    assert "raw twin" not in advice_for(silent, READ)
    assert sharing.read_only is tools.read_only
    assert replay.read_only is tools.read_only and replay.retry_safe is tools.retry_safe


def test_only_mcp_matrix_tools_reads_the_read_only_hint():
    """Other modules ask ``tools``; reading the hint elsewhere is how three meanings grew. The
    annotation label and the diff of a hint's change compare hints, not safety."""
    allowed = {
        "core/tools.py",
        "targets/features.py",
        "evolution/changes.py",
        "evolution/guidance.py",
    }
    readers = {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if re.search(r"""(==|\.get\()\s*["']readOnlyHint["']""", p.read_text(encoding="utf-8"))
    }
    assert readers <= allowed, readers - allowed


def test_tools_by_name_keeps_the_first_of_a_name_and_only_objects_with_a_string_name():
    first, second = {"name": "a", "n": 1}, {"name": "a", "n": 2}
    listed = [first, "junk", {"name": 3}, second, {"name": "b"}]
    assert tools.tools_by_name(listed) == {"a": first, "b": {"name": "b"}}
    assert tools.every_tool_by_name(listed) == {"a": [first, second], "b": [{"name": "b"}]}


@pytest.mark.parametrize(
    ("key", "token"), [("a/b", "a~1b"), ("~1", "~01"), ("~", "~0"), ("plain", "plain"), (3, "3")]
)
def test_a_pointer_token_escapes_tilde_before_slash_and_reads_back(key, token):
    assert tools.escape(key) == token
    assert tools.unescape(token) == str(key)
    assert tools.pointer("properties", key) == f"/properties/{token}"


def test_the_combinators_are_the_schema_keywords_that_combine_subschemas():
    assert tools.COMBINATORS == ("anyOf", "oneOf", "allOf")
    assert tools.ROOT_COMBINATORS[:3] == tools.COMBINATORS
