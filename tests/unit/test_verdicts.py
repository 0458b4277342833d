"""The verdict table is complete: every verdict the code can produce is a row with everything."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mcp_matrix.core.verdicts import (
    ADVICE_ALWAYS,
    ADVISED,
    BY_NAME,
    CALL_VERDICTS,
    DISCOVERY_VERDICTS,
    FINE,
    INTENDED,
    LOST,
    RELEASE_FAILING,
    REPLAY_CATEGORY,
    REPLAY_MEANING,
    SEVERITY,
    SHOWN,
    SILENT_CHANGE,
    VERDICTS,
    V,
    css_rules,
    is_finding,
    rank,
    worst,
)

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_matrix"


def test_every_verdict_has_a_symbol_a_colour_a_meaning_and_a_phase():
    for v in VERDICTS:
        assert v.symbol and v.colour and v.meaning, v.name
        assert v.phase in ("discovery", "call", "any"), v.name


def test_names_are_unique_and_severity_follows_the_table():
    assert len(BY_NAME) == len(VERDICTS)
    assert SEVERITY == tuple(v.name for v in VERDICTS)
    assert rank("broken") < rank("silent-loss") < rank("hidden") < rank("visible")
    assert worst(["visible", "degraded", "loud"]) == "loud"


def test_every_call_verdict_has_a_replay_category_and_no_discovery_verdict_does():
    assert set(REPLAY_CATEGORY) == set(CALL_VERDICTS)
    assert not set(REPLAY_CATEGORY) & set(DISCOVERY_VERDICTS)


def test_every_replay_category_has_its_meaning():
    assert set(REPLAY_MEANING) == set(REPLAY_CATEGORY.values())
    assert all(REPLAY_MEANING.values())


def test_the_default_release_gate_is_the_design_documents():
    assert set(RELEASE_FAILING) == {
        "broken",
        "silent-corruption",
        "silent-loss",
        "accepted-invalid",
    }


def test_every_verdict_the_classifier_produces_is_in_the_table():
    """Scan the classifier and the discovery simulation for verdict literals they emit."""
    produced: set[str] = set()
    for name in ("run/classify.py", "simulate/discovery.py", "simulate/calls.py", "run/matrix.py"):
        text = (PACKAGE / name).read_text(encoding="utf-8")
        produced |= set(re.findall(r"""\bv\(\s*["']([a-z-]+)["']""", text))
        produced |= set(re.findall(r"""verdict\s*=\s*["']([a-z-]+)["']""", text))
        # the classifier names its rows (``v(V.INTACT, ...)``): their names are what it emits
        produced |= {getattr(V, row).name for row in re.findall(r"\bv\(\s*V\.([A-Z_]+)\b", text)}
    assert produced, "the scan found no verdict literals: the pattern no longer matches the code"
    assert produced <= set(BY_NAME), produced - set(BY_NAME)


def test_each_row_is_named_by_its_constant():
    """``V.SILENT_LOSS`` is the row named ``silent-loss``: the constant cannot name another."""
    for attr, row in vars(V).items():
        if isinstance(row, type(VERDICTS[0])):
            assert attr == row.name.upper().replace("-", "_"), attr


def test_the_verdict_sets_are_the_rows_predicates():
    """Each set other modules read is a column of the table, and the columns agree."""
    assert LOST == ("session-broken", "server-dropped", "hidden")
    assert set(SHOWN) == {"visible", "degraded"}
    assert set(INTENDED) == {"visible", "intact"}
    assert set(FINE) == {"visible", "intact", "tolerated", "skipped"}
    assert set(SILENT_CHANGE) == {"silent-loss", "silent-corruption"}
    assert set(ADVICE_ALWAYS) == set(RELEASE_FAILING)
    for v in VERDICTS:
        assert not v.intended or v.fine, v.name  # as intended is nothing to fix
        assert not (v.fine and v.advice), v.name  # nothing to fix gets no advice
        assert not (v.shown and v.loses), v.name
        assert bool(v.shown or v.loses) == (v.phase == "discovery"), v.name
        assert v.loses in (None, "tool", "server", "session"), v.name
        assert v.advice in (None, "always", "fallback"), v.name
    assert [v for v in SEVERITY if is_finding(v)] == [v for v in SEVERITY if v not in INTENDED]


def test_the_advice_table_has_a_text_for_exactly_the_verdicts_that_ask_for_one():
    from mcp_matrix.report.advice import BY_VERDICT

    assert set(BY_VERDICT) == set(ADVISED)


def test_every_verdict_has_its_colours_in_the_html_page():
    """The page's CSS is generated from the rows: a row without colours cannot reach it."""
    from mcp_matrix.report.html import render_html
    from mcp_matrix.report.model import read_model

    rules = css_rules()
    for v in VERDICTS:
        assert re.fullmatch(r"#[0-9a-f]{3}([0-9a-f]{3})?", v.css[0]), v.name
        assert re.fullmatch(r"#[0-9a-f]{3}([0-9a-f]{3})?", v.css[1]), v.name
        assert re.search(rf"\.v-{v.name}\b[^{{]*\{{ background: {v.css[0]};", rules), v.name
    page = render_html(read_model([]))  # the page of an empty stream
    assert rules in page


def test_the_pages_folding_rule_names_exactly_the_intended_verdicts():
    """The page's script folds a tool whose every cell is as intended: checked against the rows
    (the script is hashed for the page's CSP, so it stays a literal)."""
    template = (PACKAGE / "report" / "templates" / "report.html.j2").read_text(encoding="utf-8")
    rule = re.search(r"var good = grid\.map\(.*?\}\);", template, re.DOTALL)
    assert rule, "the folding rule is gone from the template"
    assert set(re.findall(r'v === "([a-z-]+)"', rule.group(0))) == set(INTENDED)


# Every enum of a published schema that lists verdicts, and the rows it must list.
SCHEMA_ENUMS = {
    ("results", "/$defs/discovery/properties/verdict"): DISCOVERY_VERDICTS,
    ("results", "/$defs/call/properties/verdict"): CALL_VERDICTS,
    ("discovery", "/$defs/verdict"): DISCOVERY_VERDICTS,
    ("policy", "/properties/fail_on/items"): SEVERITY,
    ("policy", "/properties/expected_failures/items/properties/verdict"): SEVERITY,
}
# Enums that share a word with the verdicts but list something else (how a client's list ended;
# a replay category).
NOT_VERDICTS = {
    ("discovery", "/$defs/version-1/properties/profiles/items/properties/outcome"),
    ("discovery", "/$defs/version-2/properties/profiles/items/properties/outcome"),
    ("discovery", "/$defs/version-3/properties/profiles/items/properties/outcome"),
    ("discovery", "/$defs/version-4/properties/profiles/items/properties/outcome"),
    ("replay-events", "/$defs/replay-call/properties/category"),
}


def _enums(value, pointer=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "enum" and isinstance(item, list):
                yield pointer, item
            yield from _enums(item, f"{pointer}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _enums(item, f"{pointer}/{i}")


def test_the_published_schemas_list_exactly_the_tables_verdicts():
    """A new row reaches every schema enum, or this names the one left behind."""
    found = {}
    for path in sorted((PACKAGE / "core" / "schemas").glob("*.schema.json")):
        name = path.name.removesuffix(".schema.json")
        for pointer, enum in _enums(json.loads(path.read_text(encoding="utf-8"))):
            if len(set(enum) & set(BY_NAME)) >= 2 and (name, pointer) not in NOT_VERDICTS:
                found[(name, pointer)] = enum
    assert set(found) == set(SCHEMA_ENUMS)
    for where, enum in found.items():
        assert sorted(enum) == sorted(SCHEMA_ENUMS[where]), where
