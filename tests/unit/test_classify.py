"""Classification: mutations + answer + expectation -> verdict, exactly as docs/design.md#verdicts defines it."""

from __future__ import annotations

import pytest

from mcp_matrix.core.model import Finding
from mcp_matrix.core.verdicts import RELEASE_FAILING
from mcp_matrix.run.classify import Answer, Expectation, classify
from mcp_matrix.simulate.calls import mutations

OK = Answer(
    result={"content": [{"type": "text", "text": "stored"}], "structuredContent": {"id": 1}}
)
OTHER = Answer(result={"content": [{"type": "text", "text": "stored differently"}]})
TOOL_ERROR = Answer(
    result={"content": [{"type": "text", "text": "tags: expected array"}], "isError": True}
)
RPC_ERROR = Answer(error={"code": -32602, "message": "bad params", "data": None})
CRASH = Answer(
    wire_error={"kind": "server-exited", "message": "the server closed stdout (exit code 3)"}
)
SUCCESS, ERROR = Expectation("success"), Expectation("error")


def test_mutations_name_removed_stringified_nulled_and_retyped_values_by_json_pointer():
    intended = {"a": [1, 2], "b": True, "c": "x", "d": {"e": 1}, "f": 5}
    wire = {"a": "[1, 2]", "b": "true", "d": {"e": None}, "f": "five"}
    found = {(m.kind, m.pointer) for m in mutations(intended, wire)}
    assert found == {
        ("stringified", "/a"),
        ("stringified", "/b"),
        ("removed", "/c"),
        ("nulled", "/d/e"),
        ("retyped", "/f"),
    }


def test_no_mutation_and_the_expected_success_is_intact():
    assert classify(expect=SUCCESS, mutations=(), answer=OK).verdict == "intact"


def test_a_removed_field_with_a_reported_success_is_silent_loss():
    m = mutations({"a": 1, "tags": ["x"]}, {"a": 1})
    assert classify(expect=SUCCESS, mutations=m, answer=OK).verdict == "silent-loss"


def test_a_stringified_value_with_success_and_no_safe_reference_is_silent_corruption():
    m = mutations({"tags": ["x"]}, {"tags": '["x"]'})
    v = classify(expect=SUCCESS, mutations=m, answer=OK)
    assert v.verdict == "silent-corruption" and "could not be checked" in v.reason


def test_a_mutated_call_with_the_same_result_as_the_intact_call_is_tolerated():
    m = mutations({"tags": ["x"]}, {"tags": '["x"]'})
    assert classify(expect=SUCCESS, mutations=m, answer=OK, reference=OK).verdict == "tolerated"


def test_a_mutated_call_with_a_different_result_than_the_intact_call_is_silent_corruption():
    m = mutations({"tags": ["x"]}, {"tags": '["x"]'})
    assert (
        classify(expect=SUCCESS, mutations=m, answer=OTHER, reference=OK).verdict
        == "silent-corruption"
    )


@pytest.mark.parametrize("removed", [False, True], ids=["changed", "removed"])
def test_a_difference_the_servers_changing_answers_may_explain_is_unverified_and_passes(removed):
    """The intact call's answer differs, but so did the mutated call's own answer when sent
    again: the state (or the answer) changed between calls, so no silent-* is claimed."""
    m = (
        mutations({"a": 1, "tags": ["x"]}, {"a": 1})
        if removed
        else mutations({"tags": ["x"]}, {"tags": '["x"]'})
    )
    why = "the mutated call, sent again, got another answer"
    v = classify(expect=SUCCESS, mutations=m, answer=OK, reference=OTHER, unsteady=why)
    assert v.verdict == "unverified" and "could not be shown" in v.reason and why in v.reason
    assert v.verdict not in RELEASE_FAILING
    # the same answer as the intact call's still settles it
    same = classify(expect=SUCCESS, mutations=m, answer=OK, reference=OK, unsteady=None)
    assert same.verdict == "tolerated"


@pytest.mark.parametrize("answer", [TOOL_ERROR, RPC_ERROR])
def test_a_mutated_call_the_server_refuses_is_loud(answer):
    m = mutations({"tags": ["x"]}, {"tags": '["x"]'})
    assert classify(expect=SUCCESS, mutations=m, answer=answer).verdict == "loud"


def test_a_client_that_refuses_to_send_is_loud_and_never_reaches_the_server():
    refused = Finding("client-refused", "the client's own validation refused the call")
    v = classify(expect=SUCCESS, mutations=(), answer=None, refused=refused)
    assert v.verdict == "loud" and v.answer == {}


def test_an_expected_error_that_the_server_accepts_is_accepted_invalid():
    assert classify(expect=ERROR, mutations=(), answer=OK).verdict == "accepted-invalid"


def test_an_expected_error_that_arrives_is_intact():
    assert classify(expect=ERROR, mutations=(), answer=TOOL_ERROR).verdict == "intact"


def test_an_intact_valid_call_the_server_rejects_is_failed():
    assert classify(expect=SUCCESS, mutations=(), answer=TOOL_ERROR).verdict == "failed"


def test_a_result_that_misses_the_cases_check_is_failed():
    v = classify(expect=Expectation("success", structured={"id": 2}), mutations=(), answer=OK)
    assert v.verdict == "failed" and "/id" in v.reason


def test_a_crash_is_broken_with_its_reason():
    v = classify(expect=SUCCESS, mutations=(), answer=CRASH)
    assert v.verdict == "broken" and "exit code 3" in v.reason


def test_a_tool_the_client_does_not_show_is_unreachable():
    assert (
        classify(expect=SUCCESS, mutations=(), answer=None, hidden_reason="hidden").verdict
        == "unreachable"
    )


def test_a_client_side_result_failure_after_the_server_did_the_work_is_failed():
    failure = Finding("missing-structured-content", "the client throws")
    v = classify(expect=SUCCESS, mutations=(), answer=OK, client_failure=failure)
    assert v.verdict == "failed" and "the server did the work" in v.reason


def test_stripping_the_invalid_field_so_the_server_accepts_the_rest_is_silent_loss():
    m = mutations({"a": 1, "bad": "x"}, {"a": 1})
    assert classify(expect=ERROR, mutations=m, answer=OK).verdict == "silent-loss"


def test_an_automatic_example_the_server_rejects_still_arrived_intact():
    v = classify(expect=Expectation("any"), mutations=(), answer=TOOL_ERROR)
    assert v.verdict == "intact" and "automatic example" in v.reason


def test_an_automatic_example_mangled_and_refused_is_loud():
    m = mutations({"tags": ["x"]}, {"tags": '["x"]'})
    assert classify(expect=Expectation("any"), mutations=m, answer=TOOL_ERROR).verdict == "loud"


def test_an_unmutated_call_refused_is_failed_only_when_the_listed_schema_accepts_it():
    from mcp_matrix.behaviours.validation import validate

    schema = {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 100}}}
    invalid = validate(schema, {"limit": 500}, "2020-12").errors
    assert classify(expect=SUCCESS, mutations=(), answer=RPC_ERROR).verdict == "failed"
    v = classify(expect=SUCCESS, mutations=(), answer=RPC_ERROR, invalid=invalid)
    assert v.verdict == "loud" and "inputSchema" in v.reason
    assert [(e.validator, e.path, e.instance) for e in v.violations] == [
        ("maximum", ("limit",), 500)
    ]


def test_an_accepted_key_the_server_never_read_is_silent_loss_and_a_read_one_stays_intact():
    assert (
        classify(expect=SUCCESS, mutations=(), answer=OK, unread=("/note",)).verdict
        == "silent-loss"
    )
    assert classify(expect=SUCCESS, mutations=(), answer=OK).verdict == "intact"
