"""The pieces of ``fix`` that need no client: stable names, patches, and each kind's edit."""

from __future__ import annotations

from mcp_matrix.fix import names, prose, roots
from mcp_matrix.fix.patch import apply, diff


def test_a_stable_name_is_the_same_every_time_and_fits_the_limit():
    long = "x" * 80
    once, twice = names.stable_name(long, 32), names.stable_name(long, 32)
    assert once == twice and len(once) <= 32 and once.startswith("xxx")
    assert names.stable_name("get.env", 64) == "get_env"
    assert names.stable_name("get-env", 64, also="-") == "get_env"
    assert names.stable_name("9lives", 64).startswith("t_")


def test_the_banned_characters_are_read_from_the_finding():
    message = "model-facing name 'mcp__s__a-b' has characters the client does not allow ('-', '.')"
    assert names.banned(message) == "-."


def test_a_patch_of_two_tools_turns_one_into_the_other_with_escaped_pointers():
    before = {"name": "t", "inputSchema": {"properties": {"a/b": {"type": "string", "x~": 1}}}}
    after = {"name": "u", "inputSchema": {"properties": {"a/b": {"type": "integer"}}}, "n": [1]}
    ops = diff(before, after, "why")
    assert all(op.reason == "why" for op in ops)
    assert any(op.path == "/inputSchema/properties/a~1b/x~0" for op in ops)
    assert apply(before, ops) == after and before["name"] == "t"


def test_flattening_an_allof_of_required_lists_merges_them_with_no_rule_left():
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "allOf": [{"required": ["a"]}, {"required": ["b"]}],
        },
    }
    edit = roots.flatten_root(tool)
    assert edit is not None and edit.items == ()
    assert edit.after["inputSchema"]["required"] == ["a", "b"]


def test_a_oneof_becomes_an_exactly_one_rule_checked_by_the_handler():
    tool = {
        "name": "t",
        "description": "Do it.",
        "inputSchema": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    }
    edit = roots.flatten_root(tool)
    assert edit is not None and "exactly one of: (a) or (b)" in edit.after["description"]
    (item,) = edit.items
    assert item.check == {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}


def test_a_recursive_ref_is_not_inlined():
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        },
    }
    assert roots.inline_refs(tool) is None


def test_a_description_over_a_cap_is_cut_at_a_sentence_end():
    tool = {"name": "t", "description": "First sentence. Second sentence is long. Third."}
    (edit,) = prose.shorter_descriptions(tool, "the tool description (47 characters) is cut to 30")
    assert edit.after["description"] == "First sentence."
    assert "Second sentence" in edit.items[0].rule
