"""``mcp-matrix fix`` through the real CLI: each fix kind is proved by the re-run of every profile,
and a loss no schema change removes is explained, never hidden."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mcp_matrix.fix.model import Op
from mcp_matrix.fix.patch import apply
from tests.conftest import read_json, run_cli


def _fix(snapshot: Path, tmp: Path, *extra: str):
    out, patch = tmp / "fixed.json", tmp / "patch.json"
    r = run_cli(
        "fix",
        str(snapshot),
        "-f",
        "json",
        "-o",
        str(out),
        "--patch",
        str(patch),
        *extra,
        timeout=600,
    )
    assert r.returncode in (0, 1), r.stderr
    return r, json.loads(r.stdout), read_json(out), read_json(patch)


@pytest.fixture(scope="module")
def memory_anyof(tmp_path_factory):
    """The bundled memory server with its root anyOf, snapshotted live and fixed once."""
    tmp = tmp_path_factory.mktemp("memory-anyof")
    snap = tmp / "snap.json"
    r = run_cli("snapshot", "--server", "memory --schema anyof", "-o", str(snap), timeout=300)
    assert r.returncode == 0, r.stderr
    return (snap, tmp, *_fix(snap, tmp))


def _tool(doc: dict, name: str) -> dict:
    return next(e["tool"] for e in doc["tools"] if e["tool"]["name"] == name)


def test_the_json_report_follows_its_published_schema(memory_anyof):
    from tests.test_schemas import errors

    assert errors("fix", memory_anyof[3]) == []


def test_a_root_anyof_is_flattened_with_the_rule_in_the_description_and_the_checklist(memory_anyof):
    _snap, _, _, report, fixed, _ = memory_anyof
    tool = _tool(fixed, "memory_reflect")
    assert "anyOf" not in tool["inputSchema"] and tool["inputSchema"]["type"] == "object"
    assert "at least one of: (agent_id) or (agent)" in tool["description"]
    rule = next(i for i in report["checklist"] if i["replaces"].startswith("root anyOf"))
    assert rule["tool"] == "memory_reflect" and "agent_id" in rule["rule"]
    clients = {c["client"]: c for c in report["clients"]}
    for name in ("claude-code-278", "claude-code-legacy", "langchain-anthropic", "zed"):
        assert clients[name]["lost_before"] == 1 and clients[name]["lost_after"] == 0


def test_the_corrected_list_is_a_snapshot_discover_reads_and_every_tool_is_visible_there(
    memory_anyof,
):
    _, tmp, _, _, _fixed, _ = memory_anyof
    r = run_cli(
        "discover", str(tmp / "fixed.json"), "--json", "--client", "claude-code-278", timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert "hidden" not in r.stdout and "memory_reflect" in r.stdout


def test_each_tools_patch_turns_the_tool_as_listed_into_the_corrected_one(memory_anyof):
    snap, _, _, _, fixed, patches = memory_anyof
    before = read_json(snap)
    for name, ops in patches.items():
        assert all(op["reason"] for op in ops)
        made = apply(_tool(before, name), [Op(o["op"], o["path"], o.get("value")) for o in ops])
        assert made == _tool(fixed, made["name"])


def test_a_stripped_keyword_moves_into_the_description_and_a_server_check(memory_anyof):
    _, _, _, report, fixed, _ = memory_anyof
    importance = _tool(fixed, "memory_store")["inputSchema"]["properties"]["importance"]
    assert "minimum" not in importance and "maximum" not in importance
    assert "at least 0" in importance["description"] and "at most 1" in importance["description"]
    rules = [i["rule"] for i in report["checklist"] if i["tool"] == "memory_store"]
    assert any("importance is not at least 0" in r for r in rules)
    assert any("keys other than the ones listed" in r for r in rules)
    loosened = next(c for c in report["costs"] if c["tool"] == "memory_store")
    assert loosened["kind"] == "additional-properties-loosened" and loosened["severity"] == "risky"


def test_a_loss_no_schema_change_removes_is_explained_with_what_was_tried(memory_anyof):
    _, _, r, report, _, _ = memory_anyof
    assert r.returncode == 1  # a required client still loses a tool: exit as check
    left = next(
        u
        for u in report["unfixed"]
        if "checkpoint_save" in u["tools"] and "langchain-genai-schema" in u["why"]
    )
    assert left["tried"]
    google = next(c for c in report["clients"] if c["client"] == "langchain-google")
    assert [s["tool"] for s in google["still_lost"]] == ["checkpoint_save"]


def test_require_names_the_clients_that_must_lose_nothing(memory_anyof):
    snap = memory_anyof[0]
    r = run_cli("fix", str(snap), "--require", "zed", "-f", "json", timeout=600)
    report = json.loads(r.stdout)
    assert report["required"] == ["zed"]
    assert r.returncode == 0  # langchain-google's loss is left, but it is not required here


def test_a_server_whose_every_loss_has_a_fix_exits_0_and_loses_nothing_in_a_required_client(
    tmp_path,
):
    snap = tmp_path / "billing.json"
    assert run_cli("snapshot", "--server", "billing", "-o", str(snap), timeout=300).returncode == 0
    # the clients whose billing losses (stripped keywords) all have a fix, named so a profile
    # added later with a loss no schema change removes does not change what this test measures
    require = ("cline", "codex", "continue-cli", "copilot-cli", "qwen-code", "vscode-copilot")
    r, report, _, _ = _fix(snap, tmp_path, *(x for name in require for x in ("--require", name)))
    assert r.returncode == 0
    assert all(c["lost_after"] == 0 for c in report["clients"] if c["required"])
    assert sum(c["lost_before"] for c in report["clients"] if c["required"]) >= len(require)


def _synthetic(tmp: Path, tools: list[dict]) -> Path:
    """A snapshot of the bundled memory server with its tools replaced by ``tools``."""
    snap = tmp / "base.json"
    assert run_cli("snapshot", "--server", "memory", "-o", str(snap), timeout=300).returncode == 0
    doc = read_json(snap)
    doc["tools"] = [{"page": 0, "tool": t} for t in tools]
    doc["eras"] = copy.deepcopy(doc["eras"])
    doc["eras"]["modern"]["tools"] = doc["tools"]
    doc["eras"]["modern"]["ttlMs"] = None
    doc["eras"]["modern"]["cacheScope"] = None
    out = tmp / "synthetic.json"
    out.write_text(json.dumps(doc))
    return out


LONG = "fetch_the_complete_quarterly_financial_statement_history_for_an_account"
_PRICE = {
    "name": "price",
    "description": "Price an item.",
    "inputSchema": {
        "type": "object",
        "properties": {"size": {"$ref": "#/$defs/Size"}},
        "$defs": {"Size": {"type": "string", "enum": ["small", "large"]}},
    },
}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("synthetic")
    tools = [
        {
            "name": LONG,
            "description": "Fetch statements.",
            "inputSchema": {"type": "object", "properties": {}},
        },
        {
            "name": "tag_notes",
            "description": "Tag notes.",
            "inputSchema": {
                "type": "object",
                "properties": {"tags": {"type": "array", "description": "Tags to add."}},
            },
        },
        {
            "name": "set_owner",
            "description": "Set the owner.",
            "inputSchema": {
                "type": "object",
                "properties": {"owner": {"type": ["string", "null"], "description": "Owner."}},
            },
        },
        {
            "name": "get.env",
            "description": "Read an environment variable.",
            "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}},
        },
        _PRICE,
        {
            "name": "report",
            "description": "Write a report. " + "It explains every step in detail. " * 70,
            "inputSchema": {"type": "object", "properties": {}},
        },
        {"name": "ping", "description": "Ping.", "inputSchema": {"properties": {}}},
    ]
    snap = _synthetic(tmp, tools)
    return _fix(snap, tmp)


def _kinds(report: dict, tool: str) -> set[str]:
    return {e["kind"] for e in report["edits"] if e["tool"] == tool}


def test_a_name_too_long_is_renamed_stably_with_the_rename_guidance_and_an_alias(synthetic):
    _, report, fixed, _ = synthetic
    assert "rename" in _kinds(report, LONG)
    rename = next(r for r in report["renames"] if r["old"] == LONG)
    assert rename["old"] == LONG and len(rename["new"]) < len(LONG)
    assert any("forwards to" in g for g in rename["guidance"])
    assert any(f"alias of {rename['new']!r}" in i["rule"] for i in report["checklist"])
    assert rename["new"] in [e["tool"]["name"] for e in fixed["tools"]]
    cost = next(c for c in report["costs"] if c["tool"] == LONG)  # never silent: diff's price
    assert cost["severity"] == "breaking" and cost["kind"] == "tool-renamed"
    assert any(p.startswith("queued retries") for p in cost["populations"])


def test_an_array_without_items_gets_items_and_the_session_it_broke_works(synthetic):
    _, report, fixed, _ = synthetic
    assert "add-items" in _kinds(report, "tag_notes")
    assert _tool(fixed, "tag_notes")["inputSchema"]["properties"]["tags"]["items"] == {}
    copilot = next(c for c in report["clients"] if c["client"] == "vscode-copilot")
    assert "tag_notes" in copilot["now_visible"]


def test_codex_015s_string_items_have_no_schema_fix_and_say_so(synthetic):
    _, report, _, _ = synthetic
    left = next(u for u in report["unfixed"] if u["code"] == "type-narrowed")
    assert left["tools"] == ["tag_notes"] and left["why"].startswith("no schema change removes it")


def test_a_nullable_type_list_becomes_one_type_and_null_is_left_to_the_handler(synthetic):
    _, report, fixed, _ = synthetic
    assert "drop-null" in _kinds(report, "set_owner")
    assert _tool(fixed, "set_owner")["inputSchema"]["properties"]["owner"]["type"] == "string"
    assert any("null the same as left out" in i["rule"] for i in report["checklist"])


def test_a_character_a_client_does_not_allow_is_replaced_in_a_rename(synthetic):
    _, report, fixed, _ = synthetic
    # '.' (a separator-only rename costs nothing; qwen-code's appended hash does, fixed here)
    rename = next(r for r in report["renames"] if r["old"] == "get.env")
    assert rename["new"] == "get_env" and "get_env" in [e["tool"]["name"] for e in fixed["tools"]]


def test_a_ref_into_defs_is_inlined(tmp_path):
    # Among the clients that cannot follow the $ref (cline, continue-cli): LlamaIndex 0.6 loses
    # more of an inlined enum than of a referenced one, so with every profile fix keeps the $ref
    # and says so (the next test).
    tools = [_PRICE]
    _, report, fixed, _ = _fix(
        _synthetic(tmp_path, tools), tmp_path, "--client", "cline", "--client", "continue-cli"
    )
    assert "inline-refs" in _kinds(report, "price")
    schema = _tool(fixed, "price")["inputSchema"]
    assert "$defs" not in schema and schema["properties"]["size"]["enum"] == ["small", "large"]


def test_an_inlining_that_would_make_another_client_worse_is_tried_and_explained(synthetic):
    _, report, fixed, _ = synthetic
    assert "inline-refs" not in _kinds(report, "price")
    left = next(u for u in report["unfixed"] if u["code"] == "dangling-ref")
    assert any(t.startswith("inline-refs of price: llamaindex") for t in left["tried"])
    assert "$ref" in json.dumps(_tool(fixed, "price")["inputSchema"])


def test_a_description_over_a_clients_cap_is_cut_at_a_sentence_with_the_rest_on_the_checklist(
    synthetic,
):
    _, report, fixed, _ = synthetic
    assert "shorten-description" in _kinds(report, "report")
    short = _tool(fixed, "report")["description"]
    assert short.endswith(".") and len(short) <= 2048
    assert any(i["replaces"] == "the end of the tool description" for i in report["checklist"])


def test_a_root_without_type_object_gets_it(synthetic):
    _, report, fixed, _ = synthetic
    assert "object-root" in _kinds(report, "ping")
    assert _tool(fixed, "ping")["inputSchema"]["type"] == "object"


def test_a_modern_list_without_cache_hints_gets_them_and_a_checklist_item(synthetic):
    _, report, fixed, _ = synthetic
    assert fixed["eras"]["modern"]["ttlMs"] == 0
    assert any("ttlMs" in i["rule"] for i in report["checklist"])


def test_fix_runs_live_on_a_target_and_writes_markdown(tmp_path):
    out = tmp_path / "fixed.json"
    r = run_cli(
        "fix",
        "--server",
        "billing",
        "--require",
        "codex",
        "--timeout-initialize",
        "60",
        "-f",
        "md",
        "-o",
        str(out),
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert (
        r.stdout.startswith("# mcp-matrix fix: billing") and "## Server-side checklist" in r.stdout
    )
    assert read_json(out)["tools"]


def test_an_unknown_required_client_is_an_input_error(tmp_path):
    r = run_cli("fix", "--server", "billing", "--require", "no-such-client", timeout=300)
    assert r.returncode == 2 and "--require" in r.stderr and "Traceback" not in r.stderr
