"""Materiality: how much a discovery finding matters, derived from what was lost."""

from __future__ import annotations

import pytest

from mcp_matrix.core.materiality import derive, is_material, keyword_at, materiality_of
from mcp_matrix.core.model import Finding


@pytest.mark.parametrize(
    "pointer, level",
    [
        ("/inputSchema/$schema", "none"),
        ("/inputSchema/title", "none"),
        ("/inputSchema/properties/q/title", "none"),
        ("/inputSchema/properties/q/examples/0", "none"),
        ("/inputSchema/$comment", "none"),
        ("/inputSchema/properties/q/x-order", "none"),
        ("/inputSchema/$defs/Item", "none"),  # a dangling $ref is its own finding
        ("/inputSchema/properties/q/description", "guidance"),
        ("/inputSchema/properties/q/default", "guidance"),
        ("/inputSchema/properties/q/format", "constraint"),
        ("/inputSchema/properties/q/enum/2", "constraint"),
        ("/inputSchema/additionalProperties", "constraint"),
        ("/inputSchema/properties/n/maximum", "constraint"),
        ("/inputSchema/properties/when/anyOf", "constraint"),
        ("/inputSchema/required/0", "constraint"),
        # a property called "title" is a property, not the annotation
        ("/inputSchema/properties/title", "constraint"),
        ("/inputSchema/properties/a~1b/default", "guidance"),
    ],
)
def test_a_removed_keyword_matters_as_much_as_what_it_said(pointer, level):
    assert materiality_of("removed-by-client", pointer, True) == level


def test_a_property_named_like_a_keyword_is_read_as_a_property():
    assert keyword_at("/inputSchema/properties/title") == ("properties", True)
    assert keyword_at("/inputSchema/properties/title/title") == ("title", False)


def test_a_forced_stricter_schema_is_its_own_finding_not_a_loss():
    forced = Finding(
        "additional-properties-forced", "additionalProperties: false added", "/inputSchema"
    )
    assert materiality_of(forced.code, forced.pointer, forced.lost) == "stricter"
    assert not is_material(forced)


def test_a_required_list_changed_by_making_properties_required_is_stricter_not_lost():
    made = Finding("made-required", "optional made required", "/inputSchema/required", lost=True)
    changed = Finding("changed-by-client", "/required changed", "/inputSchema/required", lost=True)
    assert [f.materiality for f in derive((made, changed))] == ["stricter", "stricter"]
    # on its own, a changed required list is a lost constraint
    assert [f.materiality for f in derive((changed,))] == ["constraint"]


def test_a_finding_that_is_not_about_a_keyword_keeps_its_lost_flag():
    assert materiality_of("dangling-ref", "/inputSchema/properties/a/$ref", True) == "constraint"
    assert materiality_of("no-parameters", "/inputSchema", False) == "none"
    assert materiality_of("name-shortened", "", True) == "guidance"
