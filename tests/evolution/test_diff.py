"""``diff`` on snapshots of the real reference servers (billing, gateway, memory).

Each snapshot is taken once a test run from a real server subprocess (``shared_work``); the fabricated
variants (a deprecation that does not steer, an annotation flip, a one-to-one ``_v2`` tool)
are copies of those snapshots with one thing changed.
"""

from __future__ import annotations

import copy
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mcp_matrix.commands.cli import main
from mcp_matrix.evolution import KINDS, Change, Diff, diff_snapshots
from mcp_matrix.evolution.schema import steers
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.targets.snapshot import Snapshot, write_snapshot

SERVERS = {
    "billing-1": "billing --version 1",
    "billing-2": "billing --version 2",
    "billing-3": "billing --version 3",
    "billing-v2tool": "billing --version v2tool",
    "gateway-1": "gateway --version 1",
    "gateway-2": "gateway --version 2",
    "memory-flat": "memory",
    "memory-anyof": "memory --schema anyof",
}
RICH_WRITES = {
    "memory_write": "source",
    "dispatch_record": "priority",
    "context_feedback": "labels",
}


@pytest.fixture(scope="module")
def docs(shared_work) -> dict[str, dict]:
    """Every snapshot taken once a test run (replay and check use some of the same), from real
    server subprocesses started side by side."""
    with ThreadPoolExecutor(max_workers=len(SERVERS)) as pool:
        return dict(zip(SERVERS, pool.map(shared_work.snapshot, SERVERS.values())))


@pytest.fixture(scope="module")
def files(docs, shared_work) -> dict[str, str]:
    """The snapshot files ``docs`` were read from (written once a test run: read, never changed)."""
    return {key: str(shared_work.snapshot_file(spec)) for key, spec in SERVERS.items()}


@pytest.fixture(scope="module")
def profiles():
    return select_profiles(load_profiles(), [])


@pytest.fixture(scope="module")
def diff(docs, profiles):
    def run(old: dict | str, new: dict | str) -> Diff:
        a = docs[old] if isinstance(old, str) else old
        b = docs[new] if isinstance(new, str) else new
        return diff_snapshots(Snapshot(a, source="old"), Snapshot(b, source="new"), profiles)

    return run


def tool(doc: dict, name: str) -> dict:
    return next(e["tool"] for e in doc["tools"] if e["tool"]["name"] == name)


def only(result: Diff, kind: str, tool_name: str | None = None) -> Change:
    found = [
        c for c in result.changes if c.kind == kind and (tool_name is None or c.tool == tool_name)
    ]
    assert len(found) == 1, [(c.kind, c.tool) for c in result.changes]
    return found[0]


def effects(change: Change) -> dict[str, list]:
    out: dict[str, list] = {}
    for e in change.clients:
        out.setdefault(e.profile, []).append(e)
    return out


def population(change: Change, name: str):
    return next(p for p in change.populations if p.population == name)


def cli(*args: str, capsys) -> tuple[int, str, str]:
    code = main(["diff", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- the billing rename ---------------------------------------------------------------------------


def test_an_in_place_rename_breaks_every_frozen_caller_and_advises_an_additive_alias(diff):
    result = diff("billing-1", "billing-3")
    change = only(result, "param-renamed", "update_account")
    assert change.severity == "breaking"
    assert (change.param, change.detail["to"]) == ("customer_id", "account_id")
    assert population(change, "live").effect == "recovers"
    assert population(change, "retry").effect == "permanent-loss"
    assert "retry budget" in population(change, "retry").message
    assert population(change, "transcript").effect == "diverges"
    assert "false negative" in population(change, "transcript").message
    advice = " ".join(change.advice)
    assert "deprecated alias of account_id" in advice
    assert "Do not use; pass account_id instead" in advice
    assert "account_id wins" in advice


def test_after_an_in_place_rename_a_caching_client_keeps_sending_the_old_name_until_a_new_session(
    diff,
):
    change = only(diff("billing-1", "billing-3"), "param-renamed")
    (stale,) = effects(change)["stale-cache"]
    assert stale.effect == "loud" and stale.stale and stale.shape == "old"
    assert "until a new session" in stale.message
    assert "customer_id is unknown" in stale.message


def test_an_additive_alias_breaks_only_the_client_that_sends_absent_keys_as_null(
    diff, docs, profiles
):
    # mcp-use sends every optional key the model left out as null (observed: 1.7.1's record), so
    # a frozen call with customer_id alone arrives with account_id: null, which the server's
    # schema refuses: the one client the additive alias breaks.
    result = diff("billing-1", "billing-2")
    change = only(result, "alias-added", "update_account")
    assert (change.param, change.detail["of"]) == ("customer_id", "account_id")
    assert change.detail["steers"] is True
    assert (change.severity, change.reasons) == (
        "breaking",
        ("frozen calls are refused in mcp-use",),
    )
    use = next(e for e in change.clients if e.profile == "mcp-use" and e.shape == "old")
    assert (use.effect, use.refused_by_client) == ("loud", False)
    assert "account_id: None is not of type 'string'" in use.message
    # Every other client: the alias breaks nobody.
    others = [p for p in profiles if p.name != "mcp-use"]
    rest = diff_snapshots(
        Snapshot(docs["billing-1"], source="old"), Snapshot(docs["billing-2"], source="new"), others
    )
    change = only(rest, "alias-added", "update_account")
    assert change.severity != "breaking"
    assert rest.worst() != "breaking"
    assert not [c for c in rest.changes if c.kind == "alias-not-steering"]
    assert {p.effect for p in change.populations} == {"unaffected"}
    assert any("new name wins on conflict" in a for a in change.advice)


def test_a_frozen_call_the_client_refuses_is_risky_and_one_the_server_refuses_stays_breaking(
    diff, docs, profiles, files, capsys
):
    # billing 1 -> 2: smolagents requires every property, so the frozen call (customer_id only)
    # is refused by the client itself, before sending: the model is told in the same turn.
    # (mcp-use, which sends the absent account_id as null to the server, is left out here: the
    # test above.)
    others = [p for p in profiles if p.name != "mcp-use"]
    old, new = Snapshot(docs["billing-1"], source="old"), Snapshot(docs["billing-2"], source="new")
    added = only(diff_snapshots(old, new, others), "alias-added", "update_account")
    smol = next(e for e in added.clients if e.profile == "smolagents" and e.shape == "old")
    assert (smol.effect, smol.refused_by_client) == ("loud", True)
    assert added.severity == "risky"
    reason = next(
        r for r in added.reasons if r.startswith("frozen calls are refused by the client")
    )
    assert reason.startswith("frozen calls are refused by the client (the model is told) in ")
    assert "smolagents" in reason
    assert any("no schema avoids it" in a for a in added.advice)
    # The same reason and flag in the JSON report.
    picked = [arg for p in others for arg in ("--client", p.name)]
    _, out, _ = cli(
        files["billing-1"], files["billing-2"], *picked, "--format", "json", capsys=capsys
    )
    doc = next(c for c in json.loads(out)["changes"] if c["kind"] == "alias-added")
    assert reason in doc["why"]
    assert {"profile": "smolagents", "refused_by_client": True, "call": "old"}.items() <= next(
        c for c in doc["clients"] if c["profile"] == "smolagents" and c["call"] == "old"
    ).items()
    # billing 1 -> 3: the server refuses the frozen call: queued retries fail there.
    renamed = only(diff("billing-1", "billing-3"), "param-renamed", "update_account")
    assert renamed.severity == "breaking"
    assert population(renamed, "retry").effect == "permanent-loss"
    assert any(
        r.startswith("frozen calls are refused in ") and "python-sdk" in r for r in renamed.reasons
    )


def test_a_deprecation_that_only_announces_removal_is_flagged_as_not_steering(docs, diff):
    variant = copy.deepcopy(docs["billing-2"])
    prop = tool(variant, "update_account")["inputSchema"]["properties"]["customer_id"]
    prop["description"] = "Deprecated alias for account_id; will be removed in a future release."
    result = diff("billing-1", variant)
    assert only(result, "alias-added").detail["steers"] is False
    flag = only(result, "alias-not-steering", "update_account")
    assert flag.severity == "risky" and flag.param == "customer_id"
    assert "Do not use; pass account_id instead" in " ".join(flag.advice)


def test_every_change_kind_is_documented():
    text = (Path(__file__).resolve().parents[2] / "docs" / "evolution.md").read_text()
    assert [k for k in KINDS if f"| `{k}` |" not in text] == []


def test_the_descriptions_that_steer_are_instructions_not_roadmap_facts():
    assert steers(
        "Deprecated alias for account_id. Do not use; pass account_id instead.", "account_id"
    )
    assert steers("Deprecated: use account_id.", "account_id")
    assert not steers(
        "Deprecated alias for account_id; will be removed in a future release.", "account_id"
    )
    assert not steers("Deprecated.", "account_id")


def test_retiring_the_alias_breaks_the_frozen_callers_that_still_send_it(diff):
    change = only(diff("billing-2", "billing-3"), "alias-removed", "update_account")
    assert change.severity == "breaking"
    assert change.detail["target_now_required"] is True
    assert population(change, "retry").effect == "permanent-loss"
    assert population(change, "transcript").effect == "diverges"
    assert any("frozen callers are quiet" in a for a in change.advice)


def test_a_parallel_v2_tool_fits_only_because_its_mapping_is_not_total(diff):
    result = diff("billing-1", "billing-v2tool")
    change = only(result, "tool-parallel", "update_account_v2")
    assert change.detail["parallel_to"] == "update_account"
    assert change.detail["total"] is False
    assert any("fields (object)" in r for r in change.detail["not_mapped"])
    assert change.severity != "breaking"
    assert "A parallel tool fits here" in change.advice[0]
    assert not [c for c in result.changes if c.tool == "update_account"]


def test_a_v2_tool_that_maps_one_to_one_is_a_rename_in_disguise(docs, diff):
    variant = copy.deepcopy(docs["billing-1"])
    twin = copy.deepcopy(tool(docs["billing-3"], "update_account"))
    twin["name"] = "update_account_v2"
    variant["tools"].append({"page": 0, "tool": twin})
    change = only(diff("billing-1", variant), "tool-parallel")
    assert change.detail["total"] is True
    assert change.severity == "risky"
    assert "prefer an additive alias" in change.advice[0]


# -- the gateway's new optional fields -----------------------------------------------------------


def test_a_new_optional_field_is_risky_and_a_silent_loss_where_a_cache_strips_it(diff):
    result = diff("gateway-1", "gateway-2")
    assert "stale-cache" in result.caching
    for rich, field in RICH_WRITES.items():
        change = only(result, "param-added-optional", rich)
        assert change.param == field and change.severity == "risky"
        by = effects(change)
        assert [e.effect for e in by["stale-cache"]] == ["silent-loss"]
        assert by["stale-cache"][0].stale
        for name in result.caching:  # every caching client loses the field one way or another
            assert any(e.stale and e.effect in ("silent-loss", "degraded") for e in by[name]), name
        if "claude-code" in result.caching:
            assert any(e.stale for e in by["claude-code"])
        assert "cursor" in change.unaffected
        assert {p.effect for p in change.populations} == {"unaffected"}


def test_the_raw_twins_are_immune_to_the_new_fields(diff):
    result = diff("gateway-1", "gateway-2")
    for rich in RICH_WRITES:
        twin = f"{rich}_raw"
        assert {c.severity for c in result.changes if c.tool == twin} <= {"safe"}
        assert not [c for c in result.changes if c.tool == twin and c.kind.startswith("param-")]
        change = only(result, "param-added-optional", rich)
        assert change.detail["raw_twin"] == twin
        assert f"raw twin {twin}" in change.advice[0]


def test_without_a_raw_twin_the_advice_is_to_add_one_and_adding_one_is_safe(docs, diff):
    def without_twins(doc: dict) -> dict:
        out = copy.deepcopy(doc)
        out["tools"] = [e for e in out["tools"] if not e["tool"]["name"].endswith("_raw")]
        return out

    change = only(
        diff(without_twins(docs["gateway-1"]), without_twins(docs["gateway-2"])),
        "param-added-optional",
        "memory_write",
    )
    assert "Give memory_write a raw twin" in change.advice[0]
    added = diff(without_twins(docs["gateway-1"]), "gateway-1")
    twins = [c for c in added.changes if c.kind == "raw-twin-added"]
    assert sorted(c.detail["twin_of"] for c in twins) == sorted(RICH_WRITES)
    assert {c.severity for c in twins} == {"safe"}


# -- memory's root combinator, annotations -----------------------------------------------------


def test_a_root_anyof_hides_the_tool_in_claude_code_278_and_breaks_live_conversations_there(diff):
    change = only(diff("memory-flat", "memory-anyof"), "root-combinator-added", "memory_reflect")
    assert change.severity == "breaking"
    assert [e.effect for e in effects(change)["claude-code-278"]] == ["hidden"]
    assert population(change, "live").effect == "blocked"
    assert "claude-code-278" in population(change, "live").message
    assert any("Flatten the root" in a for a in change.advice)


def test_flattening_the_root_again_brings_the_tool_back(diff):
    change = only(diff("memory-anyof", "memory-flat"), "root-combinator-removed", "memory_reflect")
    assert change.severity == "safe"
    assert [e.effect for e in effects(change)["claude-code-278"]] == ["visible"]


def test_a_read_only_tool_that_turns_destructive_is_breaking(docs, diff):
    variant = copy.deepcopy(docs["billing-1"])
    hints = tool(variant, "get_account")["annotations"]
    hints.update(readOnlyHint=False, destructiveHint=True)
    result = diff("billing-1", variant)
    flips = {c.detail["hint"]: c for c in result.changes if c.kind == "annotation-changed"}
    assert flips["readOnlyHint"].severity == "breaking"
    assert flips["destructiveHint"].severity == "breaking"
    assert population(flips["readOnlyHint"], "retry").effect == "blocked"


def test_a_removed_tool_is_breaking_and_a_cached_list_still_offers_it(docs, diff):
    variant = copy.deepcopy(docs["billing-1"])
    variant["tools"] = [e for e in variant["tools"] if e["tool"]["name"] != "billing_metrics"]
    change = only(diff("billing-1", variant), "tool-removed", "billing_metrics")
    assert change.severity == "breaking"
    assert effects(change)["stale-cache"][0].effect == "loud"
    assert population(change, "retry").effect == "permanent-loss"


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "fail_on", "code"),
    [
        ("billing-1", "billing-3", "breaking", 1),
        ("billing-1", "billing-3", "none", 0),
        ("billing-1", "billing-2", "breaking", 1),  # mcp-use: the test of the additive alias
        ("billing-1", "billing-2", "none", 0),
        ("billing-1", "billing-2", "risky", 1),
        ("billing-1", "billing-1", "any", 0),
        ("gateway-1", "gateway-2", "any", 1),
    ],
)
def test_fail_on_decides_the_exit_code(files, capsys, old, new, fail_on, code):
    got, out, _ = cli(
        files[old], files[new], "--fail-on", fail_on, "--format", "json", capsys=capsys
    )
    assert got == code
    assert json.loads(out)["summary"]["passed"] is (code == 0)


def test_the_json_report_has_the_documented_shape(files, capsys):
    code, out, _ = cli(files["billing-1"], files["billing-3"], "--format", "json", capsys=capsys)
    doc = json.loads(out)
    assert (doc["format"], doc["version"], code) == ("mcp-matrix.diff", 1, 1)
    assert set(doc["summary"]) >= {
        "changes",
        "breaking",
        "risky",
        "safe",
        "worst",
        "failing",
        "passed",
    }
    change = doc["changes"][0]
    assert set(change) >= {
        "id",
        "kind",
        "severity",
        "tool",
        "param",
        "pointer",
        "message",
        "why",
        "clients",
        "unaffected_clients",
        "populations",
        "advice",
        "calls",
    }
    assert change["kind"] == "param-renamed"
    assert change["calls"][0]["arguments"]["customer_id"]
    assert {p["population"] for p in change["populations"]} == {"live", "retry", "transcript"}


def test_the_terminal_report_says_who_breaks_and_what_to_do_instead(files, capsys):
    code, out, _ = cli(files["billing-1"], files["billing-3"], capsys=capsys)
    assert code == 1
    assert "BREAKING" in out and "update_account" in out
    assert "queued retries: permanent loss" in out
    assert "stale-cache" in out
    assert "Rename additively" in out
    assert "--fail-on breaking: FAIL" in out
    assert not [line for line in out.splitlines() if line.endswith(" ")]


def test_the_markdown_report_escapes_what_the_server_sent(docs, tmp_path, capsys):
    variant = copy.deepcopy(docs["billing-1"])
    tool(variant, "get_account")["description"] = "Reads | <script>alert(1)</script> `x`"
    tool(variant, "get_account")["annotations"]["readOnlyHint"] = False
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    write_snapshot(docs["billing-1"], old)
    write_snapshot(variant, new)
    code, out, _ = cli(
        str(old), str(new), "--format", "md", "-o", str(tmp_path / "r.md"), capsys=capsys
    )
    text = (tmp_path / "r.md").read_text()
    assert code == 1 and out == ""
    assert text.startswith("# mcp-matrix diff")
    assert "<script>" not in text
    assert "| breaking | get\\_account |" not in text  # an underscore between letters stays bare
    assert "| breaking | get_account |" in text


def test_a_live_side_is_measured_with_the_same_result_as_its_snapshot(files, capsys):
    code, out, err = cli(
        files["billing-2"],
        "server:billing --version 3",
        "--format",
        "json",
        "--timeout-initialize",
        "40",
        "--timeout-list",
        "30",
        capsys=capsys,
    )
    assert code == 1, err
    assert "taking the NEW snapshot" in err
    kinds = [c["kind"] for c in json.loads(out)["changes"]]
    assert "alias-removed" in kinds


def test_a_live_side_that_cannot_be_measured_exits_3(files, capsys):
    dead = f'stdio:{sys.executable} -c "pass"'
    code, out, err = cli(files["billing-1"], dead, capsys=capsys)
    assert code == 3 and out == ""
    assert "the NEW side could not be measured" in err


def test_a_missing_file_exits_2_and_says_what_a_side_may_be(files, tmp_path, capsys):
    code, out, err = cli(str(tmp_path / "nope.json"), files["billing-1"], capsys=capsys)
    assert code == 2 and out == ""
    assert "OLD" in err and "no such snapshot file" in err and "server:NAME" in err


def test_a_file_that_is_not_a_snapshot_exits_2_with_a_clear_message(files, tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text('{"tools": []}')
    code, _, err = cli(files["billing-1"], str(other), capsys=capsys)
    assert code == 2
    assert "NEW" in err and "not an mcp-matrix snapshot" in err
    garbage = tmp_path / "garbage.json"
    garbage.write_text("not json")
    code, _, err = cli(str(garbage), files["billing-1"], capsys=capsys)
    assert code == 2 and "not valid JSON" in err


def test_a_new_tool_whose_name_breaks_the_session_is_breaking_for_the_tools_already_there(
    docs, diff
):
    """A tool added with a name a provider refuses takes every existing tool of the server down
    in that client: breaking, not merely risky because the tool is new."""
    new = copy.deepcopy(docs["memory-flat"])
    name = "search_" + "x" * 70  # over every provider's 64-character limit
    added = {**copy.deepcopy(tool(new, "memory_recall")), "name": name}
    new["tools"].append({"page": 0, "tool": added})
    change = only(diff("memory-flat", new), "tool-added", name)
    broken = [e.profile for e in change.clients if e.effect == "session-broken"]
    assert broken, [(e.profile, e.effect) for e in change.clients]
    assert change.severity == "breaking"
