"""Fix advice: keyed by finding code, then behaviour, then verdict, drawn from the seed decisions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.core.events import CallCell, DiscoveryCell
from mcp_matrix.report.advice import BY_BEHAVIOUR, BY_CODE, BY_VERDICT, advice_for

BEHAVIOURS = Path(__file__).resolve().parents[2] / "mcp_matrix" / "behaviours"
WRITE_TOOL = {"name": "memory_store", "annotations": {"readOnlyHint": False}}
POLICIES = {"drop-tool", "session-broken", "server-dropped", "keep"}
READ_TOOL = {"name": "search", "annotations": {"readOnlyHint": True}}


def discovery(verdict, *codes, behaviour=""):
    return DiscoveryCell(
        profile="p",
        tool="t",
        verdict=verdict,
        findings=tuple(
            {"code": c, "message": "", "lost": True, "behaviour": behaviour} for c in codes
        ),
    )


def call(verdict, behaviours=(), kinds=(), stale=False):
    return CallCell(
        profile="p",
        tool="t",
        case="c",
        verdict=verdict,
        behaviours=tuple(behaviours),
        stale=stale,
        mutations=tuple({"kind": k, "pointer": "/x"} for k in kinds),
    )


def test_a_root_combinator_is_flattened_with_the_rule_checked_at_runtime():
    text = advice_for(discovery("hidden", "root-combinator"))
    assert "Flatten the root" in text and "at-least-one rule in the handler" in text
    assert "docs/design.md#flatten-the-root" in text


def test_a_stale_cache_losing_a_field_of_a_write_tool_gets_a_raw_twin():
    text = advice_for(
        call("silent-loss", ["strip-unknown-arguments", "cache-tools"], ["removed"], stale=True),
        WRITE_TOOL,
    )
    assert (
        "raw twin" in text
        and "one field, a JSON payload string" in text
        and "validates it server-side" in text
    )


def test_a_read_only_tool_gets_no_raw_twin():
    text = advice_for(
        call("silent-loss", ["strip-unknown-arguments"], ["removed"], stale=True), READ_TOOL
    )
    assert "raw twin" not in text and "Refuse a call that lost data" in text


def test_a_stale_caller_refused_for_an_old_parameter_name_gets_the_additive_alias():
    text = advice_for(call("loud", stale=True))
    assert "deprecated alias" in text and "new name wins on conflict" in text
    assert '"Do not use; pass <new name> instead"' in text
    assert advice_for(discovery("degraded", "parameter-renamed")).startswith("Rename additively")


@pytest.mark.parametrize(
    ("code", "phrase"),
    [
        ("array-without-items", "items schema"),
        ("name-too-long", "64 characters minus the prefix"),
        ("dangling-ref", "Inline $defs"),
        ("ref-unresolved", "Inline $defs"),
        ("removed-by-client", "enforce it server-side"),
    ],
)
def test_each_schema_problem_has_its_fix(code, phrase):
    assert phrase in advice_for(discovery("hidden", code))


def test_stringified_values_are_validated_strictly_so_the_call_is_loud():
    corrupt = advice_for(call("silent-corruption", ["stringify-arguments"], ["stringified"]))
    assert "never coerce silently" in corrupt and "so the call is loud" in corrupt
    loud = advice_for(call("loud", ["stringify-arguments"], ["stringified"]))
    assert loud.startswith("This is loud, the safe outcome")


def test_an_unknown_code_falls_back_to_its_behaviour_then_to_the_verdict():
    assert (
        advice_for(discovery("hidden", "brand-new-code", behaviour="max-tools"))
        == BY_BEHAVIOUR["max-tools"]
    )
    assert advice_for(discovery("hidden", "brand-new-code")) == BY_VERDICT["hidden"]
    assert advice_for(call("broken")) == BY_VERDICT["broken"]


def test_cells_that_need_nothing_get_no_advice():
    for verdict in ("visible", "intact", "tolerated"):
        assert advice_for(call(verdict, ["cache-tools"])) is None


def test_the_deciding_finding_comes_first_for_a_hidden_tool():
    event = discovery("hidden", "items-added", "name-too-long")
    assert advice_for(event).startswith("Keep tool names short")


def _call_literals(text: str, start: int) -> list[str]:
    """The code-like string literals among the arguments of the call whose "(" ends at ``start``
    (a fixed window read "hash-suffix", a policy value 400 characters on, as a code)."""
    depth, end = 1, start
    while depth and end < len(text):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    return re.findall(r'"([a-z]+(?:-[a-z]+)+)"', text[start:end])


def spelled_codes(text: str) -> set[str]:
    """The literal finding codes one module's source spells."""
    codes = set(re.findall(r'\bcode="([a-z][a-z-]*)"', text))
    codes |= set(re.findall(r'\bFinding\(\s*"([a-z][a-z-]*)"', text))
    codes |= set(re.findall(r'\bnote\(\s*"([a-z][a-z-]*)"', text))
    codes |= set(re.findall(r'\brefuse\(\s*(?:"[a-z-]+"|[a-z_]+),\s*"([a-z][a-z-]*)"', text))
    codes |= set(re.findall(r'\(\s*"refuse",\s*[a-z_]+,\s*"([a-z][a-z-]*)"', text))
    for m in re.finditer(r"\brefuse_tool\(", text):  # its code: the call's first non-policy literal
        literals = _call_literals(text, m.end())
        codes |= {next((x for x in literals if x not in POLICIES), "")} - {""}
    return codes


def finding_codes() -> set[str]:
    """Every literal finding code the behaviours can produce (f-string codes end in -by-client)."""
    codes: set[str] = set()
    for path in BEHAVIOURS.glob("*.py"):
        codes |= spelled_codes(path.read_text(encoding="utf-8"))
    return codes


def test_every_finding_code_the_behaviours_produce_has_advice():
    codes = finding_codes()
    assert {"root-combinator", "array-without-items", "stale-cache", "name-too-long"} <= codes
    missing = sorted(c for c in codes if c not in BY_CODE and not c.endswith("-by-client"))
    assert not missing, (
        f"finding codes without advice in mcp_matrix/report/advice.py BY_CODE: {missing}"
    )


def test_a_cut_description_is_told_to_put_the_instruction_first_not_to_restate_keywords():
    text = advice_for(
        discovery("degraded", "description-truncated", behaviour="truncate-tool-description")
    )
    assert text.startswith("Put the essential instruction at the start of the description")
    assert "keyword" not in text


def test_every_advised_behaviour_exists_in_the_registry():
    names = set(registry.load_all())
    assert not sorted(set(BY_BEHAVIOUR) - names)


def test_a_rounded_big_integer_is_fixed_by_taking_ids_as_strings_not_by_validating():
    text = advice_for(call("silent-corruption", ["round-big-integers"], ["changed"]))
    assert "as strings" in text and "2^53" in text
    assert "Validate arguments strictly" not in text  # a rounded id is still a valid integer


def test_a_call_that_timed_out_is_told_to_answer_in_time_not_how_the_client_opens_sessions():
    # A session-per-call client's call that got no answer: the session advice is not the fix.
    timed_out = CallCell(
        profile="p",
        tool="t",
        case="c",
        verdict="broken",
        behaviours=("new-session-per-call",),
        answer={"kind": "timeout", "message": "tools/call got no answer within 30.0s"},
    )
    text = advice_for(timed_out, READ_TOOL)
    assert "within the timeout" in text and "Keep no state" not in text
    # the same client's broken call with an answer keeps its session advice
    assert "Keep no state" in advice_for(call("broken", ["new-session-per-call"]), READ_TOOL)
