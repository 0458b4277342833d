"""The reference billing server: the customer_id -> account_id rename, its adapter,
its four versions, and the recorded-call corpora replayed against each of them."""

from __future__ import annotations

import itertools
import json
import queue
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from matrix_servers.billing import recorded
from matrix_servers.billing.adapter import (
    LEGACY_ALIASES,
    Normalised,
    Rejected,
    normalise_arguments,
)
from matrix_servers.billing.backend import SEED_CUSTOMERS, BillingBackend
from matrix_servers.billing.schemas import (
    ACCOUNT_ID_DESCRIPTION,
    DEPRECATED_CUSTOMER_ID_DESCRIPTION,
    VERSIONS,
    tool_definitions,
)
from matrix_servers.billing.server import HANDLERS, build_server, call_tool
from mcp import Client, MCPError, StdioServerParameters

from tests.servers.conftest import RAW_HANDSHAKE

CALL_TIMEOUT = 60.0  # a bound on a failure only (a stdio reader at load 18 waited over 30 s)
STARTUP_TIMEOUT = 90.0  # a bound on a failure only: a Python server at load 18 took over 30 s
SESSION_TIMEOUT = 90.0
LISTENING_LINE = re.compile(r"^MCP_MATRIX_LISTENING (http://127\.0\.0\.1:(\d+)/mcp)$")
CUSTOMER_EXPLANATION = "that is a customer id, not an account id"
EXPECTED_TOOLS = {
    "1": ["update_account", "get_account", "billing_metrics"],
    "2": ["update_account", "get_account", "billing_metrics"],
    "3": ["update_account", "get_account", "billing_metrics"],
    "v2tool": ["update_account", "update_account_v2", "get_account", "billing_metrics"],
}
DATA_CALLS = {"get_account", "update_account", "customer_accounts"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def definitions(version: str) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tool_definitions(version)}


class Spy:
    """Wraps a real BillingBackend and records every method called on it."""

    def __init__(self, inner: BillingBackend) -> None:
        self.inner = inner
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)

        def recorded_call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args))
            return attr(*args, **kwargs)

        return recorded_call

    def data_calls(self) -> list[tuple[str, tuple[Any, ...]]]:
        return [call for call in self.calls if call[0] in DATA_CALLS]


@pytest.fixture
def spy(tmp_path: Path) -> Iterator[Spy]:
    backend = BillingBackend(tmp_path / "spy.db")
    yield Spy(backend)
    backend.close()


def run(version: str, backend: Any, name: str, arguments: dict[str, Any] | None) -> Any:
    return call_tool(version, definitions(version), backend, name, arguments)


def ok(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error is True
    assert result.structured_content is None
    return result.content[0].text


def metrics(version: str, backend: Any) -> dict[str, Any]:
    return ok(run(version, backend, "billing_metrics", {}))


# --- normalise_arguments, the adapter, as a pure function


def test_account_id_alone_passes_through_unchanged():
    args = {"account_id": "acct_8Q2R", "fields": {"plan": "growth"}}
    assert normalise_arguments("update_account", args) == Normalised(args)


def test_customer_id_alone_is_mapped_onto_account_id():
    outcome = normalise_arguments("update_account", {"customer_id": "acct_3K9P", "fields": {}})
    assert outcome == Normalised({"account_id": "acct_3K9P", "fields": {}}, alias_used=True)


def test_both_names_with_equal_values_are_not_a_conflict():
    outcome = normalise_arguments(
        "update_account", {"account_id": "acct_3K9P", "customer_id": "acct_3K9P", "fields": {}}
    )
    assert outcome == Normalised({"account_id": "acct_3K9P", "fields": {}}, alias_used=True)


def test_on_conflict_the_new_name_wins_and_the_conflict_is_reported():
    outcome = normalise_arguments(
        "update_account", {"account_id": "acct_3K9P", "customer_id": "acct_8Q2R", "fields": {}}
    )
    assert outcome == Normalised(
        {"account_id": "acct_3K9P", "fields": {}}, alias_used=True, conflict=True
    )


def test_neither_name_is_a_legible_rejection():
    outcome = normalise_arguments("update_account", {"fields": {"plan": "growth"}})
    assert isinstance(outcome, Rejected)
    assert outcome.reason == "missing_id"
    assert "pass account_id" in outcome.message
    assert "not the customer" in outcome.message
    assert "Nothing was changed" in outcome.message


@pytest.mark.parametrize(
    ("args", "argument"),
    [
        ({"account_id": "cust_A1"}, "account_id"),
        ({"customer_id": "cust_A1"}, "customer_id"),
        ({"account_id": "acct_8Q2R", "customer_id": "cust_A1"}, "customer_id"),
        ({"account_id": "cust_A1", "customer_id": "acct_8Q2R"}, "account_id"),
        ({"account_id": "CUST_A1"}, "account_id"),
        ({"customer_id": " cust_A1"}, "customer_id"),
    ],
    ids=["account_id", "customer_id", "discarded-legacy", "winning-new", "upper", "padded"],
)
def test_a_customer_id_in_either_field_is_rejected_with_the_difference_explained(args, argument):
    outcome = normalise_arguments("update_account", {**args, "fields": {"plan": "growth"}})
    assert isinstance(outcome, Rejected)
    assert outcome.reason == "customer_id_value"
    assert outcome.argument == argument
    assert CUSTOMER_EXPLANATION in outcome.message
    assert "may hold several billing accounts" in outcome.message
    assert "acts on exactly one account" in outcome.message
    assert "Nothing was changed" in outcome.message


def test_a_rejected_hybrid_call_still_reports_its_conflict():
    outcome = normalise_arguments(
        "update_account", {"account_id": "acct_4F8J", "customer_id": "cust_D9", "fields": {}}
    )
    assert isinstance(outcome, Rejected)
    assert outcome.alias_used is True
    assert outcome.conflict is True


@pytest.mark.parametrize("bad", ["", "   ", 5, None, ["acct_8Q2R"]], ids=repr)
@pytest.mark.parametrize("argument", ["account_id", "customer_id"])
def test_a_malformed_id_is_rejected_rather_than_replaced(argument, bad):
    other = "customer_id" if argument == "account_id" else "account_id"
    outcome = normalise_arguments("update_account", {argument: bad, other: "acct_8Q2R"})
    assert isinstance(outcome, Rejected)
    assert outcome.reason == "malformed_id"
    assert outcome.argument == argument


def test_without_aliases_customer_id_is_not_mapped():
    outcome = normalise_arguments("update_account", {"customer_id": "acct_8Q2R"}, aliases={})
    assert isinstance(outcome, Rejected)
    assert outcome.reason == "missing_id"
    assert outcome.alias_used is False


def test_the_adapter_never_mutates_its_input_and_is_deterministic():
    args = {"account_id": "acct_3K9P", "customer_id": "acct_8Q2R", "fields": {"plan": "growth"}}
    snapshot = json.loads(json.dumps(args))
    first = normalise_arguments("update_account", args)
    assert args == snapshot
    assert normalise_arguments("update_account", args) == first


def test_tools_without_an_id_pass_through():
    assert normalise_arguments("billing_metrics", {"x": 1}) == Normalised({"x": 1})


def _chapter_normalise(tool_name: str, args: dict, conflicts: list[str]) -> dict:
    """The chapter's reference adapter, verbatim apart from the metrics call."""
    args = dict(args)
    for old, new in LEGACY_ALIASES.get(tool_name, {}).items():
        if old not in args:
            continue
        legacy_value = args.pop(old)
        if new in args and args[new] != legacy_value:
            conflicts.append(tool_name)
            continue
        args.setdefault(new, legacy_value)
    return args


@pytest.mark.parametrize(
    ("account_id", "customer_id"),
    list(itertools.product([None, "acct_8Q2R", "acct_3K9P"], repeat=2)),
)
def test_the_adapter_agrees_with_the_chapters_reference_on_account_ids(account_id, customer_id):
    args: dict[str, Any] = {"fields": {"plan": "growth"}}
    if account_id is not None:
        args["account_id"] = account_id
    if customer_id is not None:
        args["customer_id"] = customer_id
    conflicts: list[str] = []
    expected = _chapter_normalise("update_account", args, conflicts)
    outcome = normalise_arguments("update_account", args)
    if "account_id" not in expected:
        assert isinstance(outcome, Rejected)
        return
    assert outcome == Normalised(
        expected, alias_used=customer_id is not None, conflict=bool(conflicts)
    )


# --- tool definitions per version


@pytest.mark.parametrize("version", VERSIONS)
def test_each_version_lists_its_tools_in_a_fixed_order(version):
    assert [t["name"] for t in tool_definitions(version)] == EXPECTED_TOOLS[version]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_schema_is_a_valid_flat_object_schema(version):
    for tool in tool_definitions(version):
        for key in ("inputSchema", "outputSchema"):
            schema = tool[key]
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["type"] == "object"
            assert not {"anyOf", "oneOf", "allOf", "$ref", "$defs"} & schema.keys()


def test_v1_update_account_takes_customer_id_only():
    schema = definitions("1")["update_account"]["inputSchema"]
    assert list(schema["properties"]) == ["customer_id", "fields"]
    assert schema["required"] == ["customer_id", "fields"]
    assert schema["additionalProperties"] is False


def test_v2_update_account_is_flat_with_both_ids_optional():
    tool = definitions("2")["update_account"]
    schema = tool["inputSchema"]
    assert schema["type"] == "object"
    assert not {"anyOf", "oneOf", "allOf"} & schema.keys()
    assert list(schema["properties"]) == ["account_id", "customer_id", "fields"]
    assert schema["required"] == ["fields"]
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["account_id"] == {"type": "string", "description": ACCOUNT_ID_DESCRIPTION}
    assert props["customer_id"] == {
        "type": "string",
        "description": DEPRECATED_CUSTOMER_ID_DESCRIPTION,
    }
    assert (
        "A customer may hold several accounts; this is the specific one, not the customer."
        in (props["account_id"]["description"])
    )
    assert props["customer_id"]["description"] == (
        "Deprecated alias for account_id, accepted only for compatibility with earlier calls. "
        "Do not use; pass account_id instead."
    )
    assert tool["description"].startswith(
        "Update fields on a single billing account. Identify the account by account_id."
    )
    # Flat: a call with neither id passes the published schema; the runtime rejects it.
    jsonschema.validate({"fields": {"plan": "growth"}}, schema)


def test_v3_update_account_takes_account_id_only():
    schema = definitions("3")["update_account"]["inputSchema"]
    assert list(schema["properties"]) == ["account_id", "fields"]
    assert schema["required"] == ["account_id", "fields"]
    assert schema["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"customer_id": "acct_8Q2R", "fields": {"plan": "growth"}}, schema)


def test_v2tool_keeps_v1_unchanged_and_adds_a_parallel_tool_of_another_shape():
    tools = definitions("v2tool")
    assert tools["update_account"] == definitions("1")["update_account"]
    schema = tools["update_account_v2"]["inputSchema"]
    assert schema["required"] == ["account_id", "changes"]
    assert "fields" not in schema["properties"]
    assert "customer_id" not in schema["properties"]
    item = schema["properties"]["changes"]["items"]
    assert item["required"] == ["field", "value"]
    assert schema["properties"]["changes"]["type"] == "array"


@pytest.mark.parametrize("version", VERSIONS)
def test_annotations_mark_reads_read_only_and_updates_idempotent_writes(version):
    tools = definitions(version)
    for name in ("get_account", "billing_metrics"):
        assert tools[name]["annotations"]["readOnlyHint"] is True
    for name in [n for n in tools if n.startswith("update_account")]:
        assert tools[name]["annotations"]["readOnlyHint"] is False
        assert tools[name]["annotations"]["idempotentHint"] is True


def test_unknown_version_is_refused():
    with pytest.raises(ValueError):
        tool_definitions("4")


# --- call handling in process: the adapter sits before the handler


def test_v2_account_id_alone_updates_that_account(spy):
    result = ok(
        run("2", spy, "update_account", {"account_id": "acct_3K9P", "fields": {"plan": "growth"}})
    )
    assert result["account_id"] == "acct_3K9P"
    assert result["fields"]["plan"] == "growth"
    assert result["fields"]["currency"] == "EUR"
    jsonschema.validate(result, definitions("2")["update_account"]["outputSchema"])
    assert metrics("2", spy)["alias_uses"] == 0


def test_v2_customer_id_alone_is_the_alias_and_is_counted(spy):
    result = ok(
        run("2", spy, "update_account", {"customer_id": "acct_3K9P", "fields": {"plan": "growth"}})
    )
    assert result["account_id"] == "acct_3K9P"
    assert ("update_account", ("acct_3K9P", {"plan": "growth"})) in spy.calls
    counters = metrics("2", spy)
    assert counters["alias_uses"] == 1
    assert counters["alias_conflicts"] == 0


def test_v2_both_equal_is_not_a_conflict(spy):
    args = {"account_id": "acct_5T1M", "customer_id": "acct_5T1M", "fields": {"status": "paused"}}
    assert ok(run("2", spy, "update_account", args))["account_id"] == "acct_5T1M"
    counters = metrics("2", spy)
    assert counters["alias_uses"] == 1
    assert counters["alias_conflicts"] == 0


def test_v2_both_different_account_id_wins_and_the_conflict_is_counted(spy):
    args = {"account_id": "acct_3K9P", "customer_id": "acct_8Q2R", "fields": {"plan": "enterprise"}}
    assert ok(run("2", spy, "update_account", args))["account_id"] == "acct_3K9P"
    writes = [c for c in spy.calls if c[0] == "update_account"]
    assert writes == [("update_account", ("acct_3K9P", {"plan": "enterprise"}))]
    assert (
        ok(run("2", spy, "get_account", {"account_id": "acct_8Q2R"}))["fields"]["plan"] == "growth"
    )
    counters = metrics("2", spy)
    assert counters["alias_conflicts"] == 1
    assert counters["alias_uses"] == 1


def test_v2_neither_id_is_a_legible_error_before_any_data_access(spy):
    text = error_text(run("2", spy, "update_account", {"fields": {"plan": "growth"}}))
    assert "pass account_id" in text
    assert spy.data_calls() == []
    assert metrics("2", spy)["errors"]["update_account"] == 1


@pytest.mark.parametrize(
    "args",
    [
        {"account_id": "cust_A1"},
        {"customer_id": "cust_A1"},
        {"account_id": "acct_3K9P", "customer_id": "cust_A1"},
    ],
    ids=["account_id", "customer_id", "hybrid"],
)
def test_v2_customer_prefix_in_either_field_is_rejected_and_nothing_is_written(spy, args):
    text = error_text(run("2", spy, "update_account", {**args, "fields": {"plan": "growth"}}))
    assert CUSTOMER_EXPLANATION in text
    assert "Customer cust_A1 holds 2 accounts: acct_8Q2R, acct_3K9P" in text
    assert not [c for c in spy.calls if c[0] in ("update_account", "get_account")]
    assert metrics("2", spy)["cust_prefix_rejections"] == 1


def test_the_handler_sees_only_account_id_whatever_the_caller_sent(spy, monkeypatch):
    seen: list[dict[str, Any]] = []
    original = HANDLERS["update_account"]

    def recording(backend, version, args):
        seen.append(dict(args))
        return original(backend, version, args)

    monkeypatch.setitem(HANDLERS, "update_account", recording)
    for args in (
        {"account_id": "acct_9X4D"},
        {"customer_id": "acct_9X4D"},
        {"account_id": "acct_9X4D", "customer_id": "acct_2H6W"},
    ):
        ok(run("2", spy, "update_account", {**args, "fields": {"currency": "USD"}}))
    error_text(
        run("2", spy, "update_account", {"customer_id": "cust_C3", "fields": {"currency": "USD"}})
    )
    error_text(run("2", spy, "update_account", {"fields": {"currency": "USD"}}))
    assert seen == [{"account_id": "acct_9X4D", "fields": {"currency": "USD"}}] * 3


def test_schema_violations_are_tool_errors_without_data_access(spy):
    text = error_text(
        run("2", spy, "update_account", {"account_id": "acct_8Q2R", "fields": {"plan": "gold"}})
    )
    assert text.startswith("Invalid arguments for update_account")
    assert "fields/plan: 'gold' is not one of" in text
    for args in (
        {"account_id": "acct_8Q2R"},
        {"account_id": "acct_8Q2R", "fields": {}},
        {"account_id": "acct_8Q2R", "fields": {"colour": "red"}},
        {"account_id": 7, "fields": {"plan": "growth"}},
        {"account_id": "acct_8Q2R", "fields": {"plan": "growth"}, "note": "x"},
    ):
        assert error_text(run("2", spy, "update_account", args)).startswith("Invalid arguments")
    assert spy.data_calls() == []


def test_unknown_account_is_a_tool_error(spy):
    text = error_text(
        run("2", spy, "update_account", {"account_id": "acct_0000", "fields": {"plan": "growth"}})
    )
    assert 'no billing account "acct_0000" exists' in text


def test_update_is_idempotent(spy):
    args = {"account_id": "acct_1Z7B", "fields": {"plan": "growth", "po_number": "PO-1"}}
    first = ok(run("2", spy, "update_account", args))
    assert ok(run("2", spy, "update_account", args)) == first
    assert (
        ok(run("2", spy, "get_account", {"account_id": "acct_1Z7B"}))["fields"] == first["fields"]
    )


def test_v1_accepts_customer_id_and_silently_resolves_a_customer_to_its_primary_account(spy):
    result = ok(
        run("1", spy, "update_account", {"customer_id": "acct_3K9P", "fields": {"plan": "growth"}})
    )
    assert result["account_id"] == "acct_3K9P"
    wrong = ok(
        run("1", spy, "update_account", {"customer_id": "cust_A1", "fields": {"po_number": "PO-9"}})
    )
    assert wrong["account_id"] == "acct_8Q2R"  # the wrong-entity bug the alias preserves
    counters = metrics("1", spy)
    assert counters["customer_fallbacks"] == 1
    assert counters["alias_uses"] == 2
    assert counters["cust_prefix_rejections"] == 0
    text = error_text(
        run("1", spy, "update_account", {"account_id": "acct_3K9P", "fields": {"plan": "growth"}})
    )
    assert "'account_id' was unexpected" in text


def test_v3_rejects_customer_id_loudly(spy):
    for value in ("acct_3K9P", "cust_A1"):
        text = error_text(
            run("3", spy, "update_account", {"customer_id": value, "fields": {"plan": "growth"}})
        )
        assert text.startswith("Unknown parameter customer_id")
        assert "renamed to account_id" in text
        assert "alias has been retired" in text
        assert "'customer_id' was unexpected" in text
    hybrid = {"account_id": "acct_3K9P", "customer_id": "acct_3K9P", "fields": {"plan": "growth"}}
    assert error_text(run("3", spy, "update_account", hybrid)).startswith("Unknown parameter")
    assert spy.data_calls() == []
    assert ok(
        run("3", spy, "update_account", {"account_id": "acct_3K9P", "fields": {"plan": "growth"}})
    )
    assert CUSTOMER_EXPLANATION in error_text(
        run("3", spy, "update_account", {"account_id": "cust_A1", "fields": {"plan": "growth"}})
    )
    counters = metrics("3", spy)
    assert counters["alias_uses"] == 3
    assert counters["errors"]["update_account"] == 4


def test_v2tool_update_account_v2_applies_a_list_of_changes(spy):
    result = ok(
        run(
            "v2tool",
            spy,
            "update_account_v2",
            {
                "account_id": "acct_6L2C",
                "changes": [
                    {"field": "plan", "value": "growth"},
                    {"field": "po_number", "value": "PO-7"},
                ],
            },
        )
    )
    assert result["account_id"] == "acct_6L2C"
    assert result["fields"]["plan"] == "growth"
    assert result["fields"]["po_number"] == "PO-7"
    duplicate = {
        "account_id": "acct_6L2C",
        "changes": [{"field": "plan", "value": "growth"}, {"field": "plan", "value": "starter"}],
    }
    assert "appears more than once" in error_text(
        run("v2tool", spy, "update_account_v2", duplicate)
    )
    invalid = {"account_id": "acct_6L2C", "changes": [{"field": "plan", "value": "gold"}]}
    assert "plan: 'gold' is not one of" in error_text(
        run("v2tool", spy, "update_account_v2", invalid)
    )
    customer = {"account_id": "cust_D9", "changes": [{"field": "plan", "value": "growth"}]}
    assert CUSTOMER_EXPLANATION in error_text(run("v2tool", spy, "update_account_v2", customer))
    old = ok(
        run(
            "v2tool",
            spy,
            "update_account",
            {"customer_id": "cust_D9", "fields": {"plan": "growth"}},
        )
    )
    assert old["account_id"] == "acct_4F8J"
    counters = metrics("v2tool", spy)
    assert counters["calls"]["update_account_v2"] == 4
    assert counters["customer_fallbacks"] == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_get_account_reads_back_and_refuses_a_customer_id(spy, version):
    account = ok(run(version, spy, "get_account", {"account_id": "acct_7N3V"}))
    assert account == {
        "account_id": "acct_7N3V",
        "customer_id": "cust_C3",
        "fields": SEED_CUSTOMERS["cust_C3"]["acct_7N3V"],
    }
    text = error_text(run(version, spy, "get_account", {"account_id": "cust_C3"}))
    assert CUSTOMER_EXPLANATION in text
    assert "acct_9X4D, acct_2H6W, acct_7N3V" in text
    assert metrics(version, spy)["cust_prefix_rejections"] == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_billing_metrics_counts_calls_per_tool_and_matches_its_output_schema(spy, version):
    run(version, spy, "get_account", {"account_id": "acct_7N3V"})
    run(version, spy, "get_account", {"account_id": "acct_none"})
    counters = metrics(version, spy)
    jsonschema.validate(counters, definitions(version)["billing_metrics"]["outputSchema"])
    assert counters["version"] == version
    assert counters["calls"]["get_account"] == 2
    assert counters["errors"]["get_account"] == 1
    assert counters["calls"]["billing_metrics"] == 1  # counted on receipt, itself included
    assert set(counters["calls"]) == set(EXPECTED_TOOLS[version])


def test_an_unknown_tool_is_a_json_rpc_invalid_params_error(spy):
    with pytest.raises(MCPError) as caught:
        run("1", spy, "update_account_v2", {})
    assert caught.value.code == -32602
    assert spy.calls == []


def test_the_database_is_seeded_once_and_counters_persist(tmp_path):
    db = tmp_path / "persist.db"
    backend = BillingBackend(db)
    ok(
        run(
            "2",
            backend,
            "update_account",
            {"customer_id": "acct_8Q2R", "fields": {"plan": "starter"}},
        )
    )
    backend.close()
    backend = BillingBackend(db)
    assert backend.get_account("acct_8Q2R")["fields"]["plan"] == "starter"
    assert metrics("2", backend)["alias_uses"] == 1
    backend.close()
    with sqlite3.connect(db) as connection:
        (count,) = connection.execute("SELECT COUNT(*) FROM accounts").fetchone()
    assert count == sum(len(accounts) for accounts in SEED_CUSTOMERS.values())


# --- the corpora: shape, freshness, and the README's expected outcomes


def account_of(arguments: dict[str, Any]) -> str:
    value = arguments.get("account_id", arguments.get("customer_id"))
    for customer, accounts in SEED_CUSTOMERS.items():
        if value == customer:
            return next(iter(accounts))
    return value


@pytest.mark.parametrize("name", list(recorded.CORPORA))
def test_corpus_records_have_the_documented_shape(name):
    records = recorded.load(name)
    assert len({r["id"] for r in records}) == len(records)
    for record in records:
        assert re.fullmatch(r"2026-09-\d\dT\d\d:\d\d:\d\dZ", record["timestamp"])
        assert record["tool"] in ("update_account", "get_account")
        assert ("result" in record) == (name not in recorded.UNANSWERED)
        if "result" in record:
            assert set(record["result"]) <= {"content", "structuredContent", "isError"}
        if name != "hybrid" and record["tool"] == "update_account":
            assert set(record["arguments"]) == {"customer_id", "fields"}


def test_corpus_sizes_and_mix_match_the_brief():
    live, retry, transcript, hybrid = (recorded.load(n) for n in recorded.CORPORA)
    assert (len(live), len(retry), len(transcript)) == (40, 20, 40)
    customers = [r for r in live if r["arguments"]["customer_id"].startswith("cust_")]
    assert len(customers) == 1  # one call in forty: 2.5%
    both = [r for r in hybrid if {"account_id", "customer_id"} <= r["arguments"].keys()]
    differ = [r for r in both if r["arguments"]["account_id"] != r["arguments"]["customer_id"]]
    assert (len(hybrid), len(both), len(differ)) == (10, 7, 4)
    for group in recorded.groups("transcript", transcript):
        assert len({r["transcript"] for r in group}) == 1
        turns = [r["turn"] for r in group]
        assert turns == sorted(turns) and len(set(turns)) == len(turns)


def test_transcripts_touch_disjoint_accounts():
    """So replaying the whole file on one server equals one fresh server per transcript."""
    touched = [
        {account_of(r["arguments"]) for r in group}
        for group in recorded.groups("transcript", recorded.load("transcript"))
    ]
    for first, second in itertools.combinations(touched, 2):
        assert not first & second


@pytest.mark.parametrize("name", list(recorded.CORPORA))
def test_recorded_results_are_what_the_recording_version_answers(name):
    assert recorded.record_results(name) == recorded.load(name)


def test_expected_json_and_readme_tables_are_up_to_date():
    expected = recorded.expected_outcomes()
    assert json.loads(recorded.EXPECTED_PATH.read_text()) == expected
    readme = (recorded.CORPORA_DIR / "README.md").read_text()
    section = readme.split("<!-- expected-outcomes:begin -->\n")[1].split(
        "<!-- expected-outcomes:end -->"
    )[0]
    assert section == recorded.markdown_tables(expected)


def readme_outcomes() -> dict[tuple[str, str], tuple[int, int]]:
    """(file, version) -> (ok, error), parsed from the README's first table."""
    readme = (recorded.CORPORA_DIR / "README.md").read_text()
    rows: dict[tuple[str, str], tuple[int, int]] = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0].endswith(".jsonl") and "/" in cells[2]:
            for version, cell in zip(VERSIONS, cells[2:]):
                good, bad = cell.split("/")
                rows[(cells[0], version)] = (int(good), int(bad))
    return rows


def test_the_readme_states_outcomes_for_every_file_and_version():
    rows = readme_outcomes()
    assert set(rows) == {(f"{n}.jsonl", v) for n in recorded.CORPORA for v in VERSIONS}
    assert rows[("live.jsonl", "2")] == (39, 1)
    assert rows[("live.jsonl", "3")] == (0, 40)


# --- end to end: real subprocesses, official SDK client


def stdio_client(version: str, db: Path) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "matrix_servers.billing", "--version", version, "--db", str(db)],
    )
    return Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)


def http_client(url: str) -> Client:
    return Client(url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)


class HttpServer:
    def __init__(self, proc: subprocess.Popen[str], url: str, line: str) -> None:
        self.proc = proc
        self.url = url
        self.line = line


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.fixture
def billing_http(tmp_path: Path) -> Iterator[Callable[..., HttpServer]]:
    """Factory: ``billing_http("--version", "3")`` starts a server on a free port."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> HttpServer:
        stderr_path = tmp_path / f"billing-http-{len(started)}.stderr"
        db = tmp_path / f"billing-http-{len(started)}.db"
        with stderr_path.open("w") as stderr:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "matrix_servers.billing",
                    "--transport",
                    "http",
                    "--port",
                    "0",
                    "--db",
                    str(db),
                    *args,
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        started.append(proc)
        lines: queue.Queue[str] = queue.Queue()
        stdout = proc.stdout
        assert stdout is not None
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=STARTUP_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no listening line within {STARTUP_TIMEOUT}s: {stderr_path.read_text()}")
        match = LISTENING_LINE.match(line.rstrip("\n"))
        if match is None:
            pytest.fail(f"unexpected stdout line {line!r}; stderr: {stderr_path.read_text()}")
        return HttpServer(proc, match.group(1), line)

    yield start
    for proc in started:
        _stop(proc)


async def check_listing(client: Client, version: str) -> None:
    listed = (await client.list_tools(cache_mode="bypass")).tools
    assert [t.name for t in listed] == EXPECTED_TOOLS[version]
    expected = definitions(version)
    for tool in listed:
        assert tool.input_schema == expected[tool.name]["inputSchema"]
        assert tool.output_schema == expected[tool.name]["outputSchema"]
        assert tool.annotations.read_only_hint is (not tool.name.startswith("update_account"))
    update = next(t for t in listed if t.name == "update_account").input_schema
    assert not {"anyOf", "oneOf", "allOf"} & update.keys()
    if version == "2":
        assert update["required"] == ["fields"]
        assert {"account_id", "customer_id"} <= update["properties"].keys()


async def check_v2_behaviour(client: Client) -> None:
    async def update(**arguments: Any) -> Any:
        return await client.call_tool("update_account", {**arguments, "fields": {"plan": "growth"}})

    only_new = await update(account_id="acct_3K9P")
    assert only_new.is_error is False
    assert only_new.structured_content["account_id"] == "acct_3K9P"
    only_old = await update(customer_id="acct_5T1M")
    assert only_old.structured_content["account_id"] == "acct_5T1M"
    equal = await update(account_id="acct_4F8J", customer_id="acct_4F8J")
    assert equal.structured_content["account_id"] == "acct_4F8J"
    differ = await update(account_id="acct_6L2C", customer_id="acct_1Z7B")
    assert differ.structured_content["account_id"] == "acct_6L2C"
    untouched = await client.call_tool("get_account", {"account_id": "acct_1Z7B"})
    assert untouched.structured_content["fields"]["plan"] == "starter"
    neither = await update()
    assert neither.is_error is True
    assert "pass account_id" in neither.content[0].text
    for arguments in ({"account_id": "cust_A1"}, {"customer_id": "cust_A1"}):
        rejected = await update(**arguments)
        assert rejected.is_error is True
        assert CUSTOMER_EXPLANATION in rejected.content[0].text
    counters = (await client.call_tool("billing_metrics", {})).structured_content
    assert counters["alias_uses"] == 4  # only_old, equal, differ, and the cust_ alias
    assert counters["alias_conflicts"] == 1
    assert counters["cust_prefix_rejections"] == 2
    assert counters["calls"]["update_account"] == 7
    assert counters["errors"]["update_account"] == 3
    with pytest.raises(MCPError) as caught:
        await client.call_tool("update_account_v2", {})
    assert caught.value.code == -32602


async def check_v1_and_v3(client: Client, version: str) -> None:
    legacy = await client.call_tool(
        "update_account", {"customer_id": "acct_8Q2R", "fields": {"status": "paused"}}
    )
    if version == "3":
        assert legacy.is_error is True
        assert legacy.content[0].text.startswith("Unknown parameter customer_id")
    else:
        assert legacy.is_error is False
        assert legacy.structured_content["account_id"] == "acct_8Q2R"
        assert legacy.structured_content["fields"]["status"] == "paused"


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_stdio_server_lists_each_versions_schemas(tmp_path, version):
    with anyio.fail_after(SESSION_TIMEOUT):
        async with stdio_client(version, tmp_path / "s.db") as client:
            assert client.server_info.name == "matrix-billing"
            await check_listing(client, version)
            if version in ("1", "3"):
                await check_v1_and_v3(client, version)


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_http_server_lists_each_versions_schemas(billing_http, version):
    server = billing_http("--version", version)
    with anyio.fail_after(SESSION_TIMEOUT):
        async with http_client(server.url) as client:
            await check_listing(client, version)
            if version in ("1", "3"):
                await check_v1_and_v3(client, version)


@pytest.mark.anyio
async def test_stdio_v2_aliases_conflicts_and_rejections(tmp_path):
    with anyio.fail_after(SESSION_TIMEOUT):
        async with stdio_client("2", tmp_path / "v2.db") as client:
            await check_v2_behaviour(client)


@pytest.mark.anyio
async def test_http_v2_aliases_conflicts_and_rejections(billing_http):
    server = billing_http("--version", "2")
    with anyio.fail_after(SESSION_TIMEOUT):
        async with http_client(server.url) as client:
            await check_v2_behaviour(client)


def test_http_server_prints_exactly_the_listening_line_with_its_real_port(billing_http):
    server = billing_http()
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    assert port > 0
    assert server.line == f"MCP_MATRIX_LISTENING http://127.0.0.1:{port}/mcp\n"


@pytest.mark.anyio
async def test_an_injected_backend_sees_no_data_access_for_a_rejected_sdk_call(spy):
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(build_server(spy, version="2"), mode="legacy") as client:
            result = await client.call_tool(
                "update_account", {"customer_id": "cust_B7", "fields": {"plan": "growth"}}
            )
    assert result.is_error is True
    assert "Customer cust_B7 holds 1 account: acct_5T1M" in result.content[0].text
    assert not [c for c in spy.calls if c[0] in ("update_account", "get_account")]


async def replay_over(client: Client, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = []
    for record in records:
        result = await client.call_tool(record["tool"], record["arguments"])
        results.append(recorded.wire_result(result))
    return results


async def read_metrics(client: Client) -> dict[str, int]:
    counters = (await client.call_tool("billing_metrics", {})).structured_content
    return {key: counters[key] for key in recorded.METRIC_KEYS}


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_stdio_replay_of_every_corpus_matches_the_expected_outcomes(tmp_path, version):
    """One fresh server per file (transcripts touch disjoint accounts, see above)."""
    expected = json.loads(recorded.EXPECTED_PATH.read_text())["corpora"]
    readme = readme_outcomes()
    for name in recorded.CORPORA:
        records = recorded.load(name)
        with anyio.fail_after(SESSION_TIMEOUT):
            async with stdio_client(version, tmp_path / f"{name}.db") as client:
                results = await replay_over(client, records)
                counters = await read_metrics(client)
        summary = recorded.Replay(name, version, results, counters).summary(records)
        assert summary == expected[name]["versions"][version], name
        assert (summary["ok"], summary["error"]) == readme[(f"{name}.jsonl", version)]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "version", ["2"]
)  # stdio replays every version above; HTTP proves the transport once
async def test_http_replay_of_every_corpus_matches_the_readme_counts(billing_http, version):
    """Success and failure depend on the arguments alone, so one server takes every file."""
    readme = readme_outcomes()
    server = billing_http("--version", version)
    with anyio.fail_after(SESSION_TIMEOUT):
        async with http_client(server.url) as client:
            for name in recorded.CORPORA:
                results = await replay_over(client, recorded.load(name))
                good = sum(1 for r in results if not r["isError"])
                assert (good, len(results) - good) == readme[(f"{name}.jsonl", version)], name


@pytest.mark.parametrize("version", VERSIONS)
def test_stdio_stdout_carries_only_protocol_and_the_tools_verbatim(tmp_path, version):
    messages = [
        *RAW_HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "matrix_servers.billing",
            "--version",
            version,
            "--db",
            str(tmp_path / "raw.db"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout
    threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True).start()
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        answers = [json.loads(lines.get(timeout=CALL_TIMEOUT)) for _ in range(2)]
        proc.stdin.close()
        proc.wait(timeout=CALL_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["result"]["serverInfo"]["name"] == "matrix-billing"
    assert by_id[2]["result"]["tools"] == tool_definitions(version)
    rest = []
    while not lines.empty():
        rest.append(lines.get_nowait())
    assert rest == []
