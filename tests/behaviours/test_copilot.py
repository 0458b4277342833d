"""GitHub Copilot CLI 1.0.102 (behaviours copilot-tool-name and copilot-schema), through the
copilot-cli profile. Every expected value below is what the real client sent its model on
2026-12-02 (offline BYOK, gpt-4.1 over Chat Completions, server name ``probe``), from tool lists
served through the copilot-cli harness recipe; the probe sets' part is in the calibration record.
"""

from __future__ import annotations

import random

import pytest

from mcp_matrix.behaviours.copilot import punycode
from tests.behaviours.conftest import discover

OBJ = {"type": "object", "properties": {"q": {"type": "string"}}}


def names(*tool_names: str) -> dict[str, str | None]:
    """Raw tool name -> the model-facing name (None: left out)."""
    view = discover(
        "copilot-cli", [{"name": n, "inputSchema": OBJ} for n in tool_names], server="probe"
    )
    return {t.tool: (t.model_name if t.verdict != "hidden" else None) for t in view.tools}


def schema(s: dict) -> dict:
    view = discover("copilot-cli", [{"name": "t", "inputSchema": s}], server="probe")
    return view.tools[0].model_schema


def test_names_are_server_dash_tool_with_invalid_characters_as_dashes():
    assert names(
        "control", "probe.dotted", "a--b", "-lead", "_under", "UPPER.case", "tab\tname"
    ) == {
        "control": "probe-control",
        "probe.dotted": "probe-probe-dotted",
        "a--b": "probe-a--b",
        "-lead": "probe--lead",
        "_under": "probe-_under",
        "UPPER.case": "probe-UPPER-case",
        "tab\tname": "probe-tab-name",
    }
    assert names("a@b#c$", "a  b") == {"a@b#c$": "probe-a-b-c-", "a  b": "probe-a--b"}


def test_non_ascii_labels_are_punycoded_without_case_mapping_or_normalisation():
    got = names(
        "café", "日本語", "emoji😀tool", "ñandú.search", "ÉCOLE", "ﬁle", "x.ü.y", "a\u200db"
    )
    assert got == {
        "café": "probe-xn--caf-dma",
        "日本語": "probe-xn--wgv71a119e",
        "emoji😀tool": "probe-xn--emojitool-kb26h",
        "ñandú.search": "probe-xn--and-6ma2c-search",
        "ÉCOLE": "probe-xn--COLE-pka",
        "ﬁle": "probe-xn--le-1b1n",
        "x.ü.y": "probe-x-xn--tda-y",
        "a\u200db": "probe-xn--ab-m1t",
    }
    # '@' is not a separator (the whole name is one label); U+3002 and U+FF61 are
    assert names("é@ü", "a｡b", "x。y") == {
        "é@ü": "probe-xn----9fa2d",
        "a｡b": "probe-a-b",
        "x。y": "probe-x-y",
    }


def test_long_names_are_cut_at_64_after_punycode():
    got = names("a" * 58, "b" * 59, "é" * 40)
    assert got["a" * 58] == "probe-" + "a" * 58
    assert got["b" * 59] == "probe-" + "b" * 58
    assert got["é" * 40] == ("probe-xn--9ca" + "a" * 39)[:64]


def test_names_that_sanitise_alike_keep_only_the_greatest_raw_name():
    got = names("a b", "a/b", "a:b", "x.y", "x-y", "c.d", "c-d", "c d")
    assert got == {
        "a b": None,
        "a/b": None,
        "a:b": "probe-a-b",
        "x.y": "probe-x-y",
        "x-y": None,
        "c.d": "probe-c-d",
        "c-d": None,
        "c d": None,
    }


def test_names_cut_alike_are_numbered_in_name_order():
    n = "N" * 58
    got = names(n + "C", n + "B", n + "A")
    assert got == {
        n + "A": "probe-" + n,
        n + "B": "probe-" + n[:57] + "2",
        n + "C": "probe-" + n[:57] + "3",
    }


def test_constraint_keywords_move_into_the_description_after_the_old_one():
    got = schema(
        {
            "type": "object",
            "properties": {
                "s": {"type": "string", "description": "S desc.", "minLength": 1, "format": "uri"},
                "n": {
                    "type": "number",
                    "multipleOf": 2,
                    "exclusiveMinimum": 0,
                    "exclusiveMaximum": 9,
                },
                "a": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": 3,
                    "uniqueItems": True,
                },
                "o": {
                    "type": "object",
                    "minProperties": 1,
                    "maxProperties": 2,
                    "patternProperties": {"^x": {"type": "string"}},
                    "propertyNames": {"pattern": "^x"},
                },
                "d": {"type": "string", "default": "x", "enum": ["x"]},
                "x": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
            },
        }
    )
    assert got["properties"] == {
        "s": {"type": "string", "description": 'S desc.\n\n{minLength: 1, format: "uri"}'},
        "n": {
            "type": "number",
            "description": "{multipleOf: 2, exclusiveMinimum: 0, exclusiveMaximum: 9}",
        },
        "a": {
            "type": "array",
            "items": {"type": "string"},
            "description": "{minItems: 1, maxItems: 3, uniqueItems: true}",
        },
        "o": {
            "type": "object",
            "description": '{patternProperties: {"^x":{"type":"string"}}, '
            'propertyNames: {"pattern":"^x"}, minProperties: 1, maxProperties: 2}',
        },
        "d": {"type": "string", "default": "x", "enum": ["x"]},
        "x": {"anyOf": [{"type": "string", "description": "{minLength: 2}"}, {"type": "null"}]},
    }


def test_root_combinators_are_flattened():
    anyof = schema(
        {
            "type": "object",
            "description": "Root desc.",
            "properties": {"s": {"type": "string"}},
            "anyOf": [{"required": ["s"]}, {"required": ["n"]}],
        }
    )
    assert anyof == {
        "type": "object",
        "description": 'Root desc.\n\n{anyOf: [{"required":["s"]},{"required":["n"]}]}',
        "properties": {"s": {"type": "string"}},
    }
    allof = schema(
        {
            "type": "object",
            "properties": {"p": {"type": "string"}},
            "allOf": [{"properties": {"q": {"type": "integer"}}, "required": ["q"]}],
            "required": ["p"],
        }
    )
    assert allof == {
        "type": "object",
        "properties": {"p": {"type": "string"}, "q": {"type": "integer"}},
        "required": ["p", "q"],
    }


def test_a_root_that_is_not_an_object_is_replaced_and_arrays_get_items():
    assert schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert schema({"properties": {"q": {"type": "string"}}}) == {"type": "object", **OBJ}
    assert schema({"type": "object", "properties": {"l": {"type": "array"}}}) == {
        "type": "object",
        "properties": {"l": {"type": "array", "items": {}}},
    }
    assert schema(
        {"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "string"}]}}}
    ) == {
        "type": "object",
        "properties": {"p": {"type": "array", "items": {"anyOf": [{"type": "string"}]}}},
    }


def test_many_keywords_on_one_node_are_written_in_the_clients_order():
    got = schema(
        {
            "type": "object",
            "properties": {
                "m": {
                    "type": ["string", "array", "object", "number"],
                    "maxProperties": 3,
                    "uniqueItems": True,
                    "maximum": 5,
                    "format": "date",
                    "minItems": 1,
                    "exclusiveMaximum": 9,
                    "pattern": "^a",
                    "propertyNames": {"minLength": 1},
                    "minLength": 2,
                    "multipleOf": 1,
                    "minimum": 0,
                    "maxItems": 4,
                    "patternProperties": {"^z": {}},
                    "minProperties": 1,
                    "exclusiveMinimum": -1,
                    "maxLength": 7,
                },
                "a": {
                    "type": "string",
                    "not": {"const": "x"},
                    "minLength": 1,
                    "maxLength": 5,
                    "contentEncoding": "base64",
                    "contentMediaType": "text/plain",
                    "title": "T",
                },
                "c": {
                    "type": "object",
                    "if": {"required": ["x"]},
                    "then": {"required": ["y"]},
                    "else": {"required": ["z"]},
                    "dependentRequired": {"x": ["y"]},
                    "unevaluatedProperties": False,
                    "minProperties": 1,
                },
                "nt": {"not": {"type": "string", "minLength": 3}},
                "b": {"type": "array", "items": {"type": "integer"}, "additionalItems": False},
                "ap": {
                    "type": "object",
                    "additionalProperties": {"type": "string", "minLength": 3},
                },
                "p": {"$ref": "#/$defs/P"},
            },
            "$defs": {"P": {"type": "string", "minLength": 4}},
        }
    )
    props = got["properties"]
    assert props["m"]["description"] == (
        '{minLength: 2, maxLength: 7, pattern: "^a", format: "date", minimum: 0, maximum: 5, '
        "multipleOf: 1, exclusiveMinimum: -1, exclusiveMaximum: 9, "
        'patternProperties: {"^z":{}}, minItems: 1, maxItems: 4, uniqueItems: true, '
        'propertyNames: {"minLength":1}, minProperties: 1, maxProperties: 3}'
    )
    assert props["a"] == {
        "type": "string",
        "title": "T",
        "description": '{contentEncoding: "base64", contentMediaType: "text/plain", '
        'not: {"const":"x"}, minLength: 1, maxLength: 5}',
    }
    assert props["c"]["description"] == (
        "{unevaluatedProperties: false, minProperties: 1, "
        'if: {"required":["x"]}, then: {"required":["y"]}, else: {"required":["z"]}, '
        'dependentRequired: {"x":["y"]}}'
    )
    assert props["nt"] == {"description": '{not: {"minLength":3,"type":"string"}}'}
    assert props["b"]["additionalItems"] == {"description": "{schema: false}"}
    assert props["ap"]["additionalProperties"] == {
        "type": "string",
        "description": "{minLength: 3}",
    }
    assert got["$defs"] == {"P": {"type": "string", "description": "{minLength: 4}"}}


def test_punycode_is_rfc_3492_as_pythons_codec_writes_it():
    rng = random.Random(3492)
    pool = "abc-_.éüñ日本語😀\ud800\ue000\uffffÉ"
    for _ in range(2000):
        label = "".join(rng.choice(pool) for _ in range(rng.randrange(1, 24)))
        if not label.isascii():
            assert punycode(label) == label.encode("punycode").decode("ascii"), repr(label)


@pytest.mark.timeout(120)  # the codec's rescans took minutes for such a name; this takes ~0.5 s
def test_a_hostile_20000_character_name_is_named_without_rescanning_it_per_code_point():
    rng = random.Random(0)
    name = "".join(chr(0x4E00 + rng.randrange(20000)) for _ in range(20000))
    got = names(name)[name]
    assert got.startswith("probe-xn--") and len(got) == 64
