"""The published JSON Schemas: shipped, complete, and followed by what the real CLI writes.

One real run on a bundled server and one snapshot feed the offline commands (discover, diff,
replay, merge), so every document kind mcp-matrix writes is checked against its schema as
produced, not as a test builds it; the hand-built fixtures under tests/ are checked too.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.schemas import SCHEMAS, load_schema
from mcp_matrix.core.verdicts import SEVERITY
from mcp_matrix.evolution import FORMAT as DIFF_FORMAT
from mcp_matrix.evolution.replay_report import FORMAT as REPLAY_FORMAT
from mcp_matrix.report import discovery_doc, json_report
from mcp_matrix.run.results import read_events
from mcp_matrix.targets.snapshot import load_snapshot
from mcp_matrix.targets.snapshot_file import FORMAT as SNAPSHOT_FORMAT
from mcp_matrix.targets.snapshot_file import READABLE_VERSIONS as SNAPSHOT_VERSIONS
from tests.conftest import REPO, run_cli
from tests.report import events as fixtures

BY_NAME = {s.name: s for s in SCHEMAS}
REGISTRY = (
    Registry().with_resources(  # replay-events.schema.json refers to replay.schema.json by its $id
        (load_schema(s.name)["$id"], Resource.from_contents(load_schema(s.name))) for s in SCHEMAS
    )
)
CORPORA = REPO / "servers" / "billing" / "corpora"


def errors(name: str, document) -> list[str]:
    """Every way ``document`` breaks the schema ``name``, as 'path: message' lines."""
    found = Draft202012Validator(load_schema(name), registry=REGISTRY).iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in found]


# -- the files -------------------------------------------------------------------------------


def test_every_schema_in_the_package_is_listed_and_every_listed_one_ships():
    shipped = {
        p.name
        for p in resources.files("mcp_matrix.core.schemas").iterdir()
        if p.name.endswith(".schema.json")
    }
    assert shipped == {s.file for s in SCHEMAS}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_schema_is_valid_draft_2020_12_with_an_id_and_a_title(name):
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/{name}.schema.json") and schema["title"]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_schema_file_names_each_key_once(name):
    def pairs(items):
        keys = [k for k, _ in items]
        assert len(keys) == len(set(keys)), (
            f"{name}: a key written twice: {sorted(k for k in keys if keys.count(k) > 1)}"
        )
        return dict(items)

    json.loads(
        resources.files("mcp_matrix.core.schemas").joinpath(BY_NAME[name].file).read_text("utf-8"),
        object_pairs_hook=pairs,
    )


@pytest.mark.parametrize(
    "name, fmt, versions",
    [
        ("results", "mcp-matrix.results", (1, 2, 3)),
        ("snapshot", SNAPSHOT_FORMAT, SNAPSHOT_VERSIONS),
        ("discovery", discovery_doc.FORMAT, discovery_doc.READABLE),
        ("report", json_report.FORMAT, json_report.READABLE),
        ("diff", DIFF_FORMAT, (1,)),
        ("replay", REPLAY_FORMAT, (1,)),
    ],
)
def test_a_document_schema_names_the_format_and_every_version_the_reader_takes(name, fmt, versions):
    schema = load_schema(name)
    props = (
        schema["$defs"]["run-started"]["properties"] if name == "results" else schema["properties"]
    )
    assert props["format"]["const"] == fmt == BY_NAME[name].format
    version = props["version"]
    assert (
        set(version.get("enum", [version.get("const")]))
        == set(versions)
        == set(BY_NAME[name].versions)
    )


def test_the_policy_schema_allows_exactly_the_verdicts_of_the_vocabulary():
    schema = load_schema("policy")["properties"]
    assert schema["fail_on"]["items"]["enum"] == list(SEVERITY)
    assert schema["expected_failures"]["items"]["properties"]["verdict"]["enum"] == list(SEVERITY)


def test_the_schemas_are_listed_in_the_docs_with_their_versions():
    page = (REPO / "docs" / "schemas.md").read_text(encoding="utf-8")
    for s in SCHEMAS:
        assert f"`{s.file}`" in page, s.file
    assert "docs/schemas.md" in (REPO / "README.md").read_text(encoding="utf-8")


# -- the fixtures under tests/ -----------------------------------------------------------------


@pytest.mark.parametrize(
    "build", [fixtures.full_run, fixtures.interrupted_run, fixtures.merged_runs]
)
def test_every_hand_built_results_event_follows_the_results_schema(build):
    for event in build():
        assert errors("results", event) == [], event.get("event")


@pytest.mark.parametrize(
    "path", sorted((REPO / "tests" / "report" / "snapshots").glob("*.json")), ids=lambda p: p.name
)
def test_every_stored_json_report_follows_the_report_schema(path):
    assert errors("report", json.loads(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(
    "path", sorted(REPO.glob("servers/*/cases.yaml")), ids=lambda p: p.parent.name
)
def test_every_bundled_cases_file_follows_the_cases_schema(path):
    assert errors("cases", yaml.safe_load(path.read_text(encoding="utf-8"))) == []


# -- readers check input against the same schemas ---------------------------------------------


SNAPSHOT = {
    "format": "mcp-matrix.snapshot",
    "version": 2,
    "target": {"kind": "server", "server": "memory"},
    "eras": {
        "handshake": {"answers": [{"wireError": {"kind": "timeout", "message": "no answer"}}]},
        "modern": {},
    },
    "tools": [{"page": 0, "tool": {"name": "find"}}],
}


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("target", "stdio", "key 'target': 'stdio' is not of type 'object', 'null'"),
        ("eras", {"handshake": 1}, "key 'eras.handshake': 1 is not of type 'object'"),
        ("pages", None, "key 'pages': None is not of type 'array'"),
    ],
)
def test_a_snapshot_with_a_mistyped_key_is_an_input_error_naming_the_key(
    tmp_path, key, value, says
):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**SNAPSHOT, key: value}), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_snapshot(path)
    assert info.value.message == says and info.value.where == str(path)


def test_a_snapshot_written_before_probe_answers_named_their_version_still_loads(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(SNAPSHOT), encoding="utf-8"
    )  # a probe answer with only wireError, as before the fix
    assert [t["name"] for _, t in load_snapshot(path).tools] == ["find"]


# -- what the real CLI writes -------------------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """One live run (billing v3, two clients) and one live snapshot (billing v1); the rest offline."""
    d = tmp_path_factory.mktemp("written")
    r = run_cli(
        "run",
        "--server",
        "billing --version 3",
        "--client",
        "cursor",
        "--client",
        "claude-code",
        "--results",
        str(d / "r.jsonl"),
        "--report",
        f"json:{d / 'report.json'}",
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr
    r = run_cli(
        "snapshot", "--server", "billing --version 1", "-o", str(d / "v1.json"), timeout=300
    )
    assert r.returncode == 0, r.stderr
    snapshot = next(e["snapshot"] for e in read_events(d / "r.jsonl") if e["event"] == "snapshot")
    (d / "v3.json").write_text(json.dumps(snapshot), encoding="utf-8")
    for name, args in (
        ("discover.json", ("discover", str(d / "v1.json"), "--json")),
        ("diff.json", ("diff", str(d / "v1.json"), str(d / "v3.json"), "--format", "json")),
        (
            "replay.json",
            (
                "replay",
                str(CORPORA / "retry.jsonl"),
                str(CORPORA / "transcript.jsonl"),
                "--snapshot",
                str(d / "v3.json"),
                "--baseline",
                str(d / "v1.json"),
                "--json",
                "--results",
                str(d / "replay.jsonl"),
            ),
        ),
    ):
        r = run_cli(*args, timeout=300)
        assert r.returncode in (0, 1), (name, r.stderr)
        (d / name).write_text(r.stdout, encoding="utf-8")
    r = run_cli("merge", str(d / "r.jsonl"), "-o", str(d / "merged.jsonl"), timeout=300)
    assert r.returncode == 0, r.stderr
    return d


@pytest.mark.parametrize("name", ["r.jsonl", "merged.jsonl"])
def test_every_line_a_run_or_merge_writes_follows_the_results_schema(written, name):
    lines = [json.loads(line) for line in (written / name).read_text(encoding="utf-8").splitlines()]
    assert {e.get("event") or next(iter(e)) for e in lines} >= {
        "run-started",
        "snapshot",
        "cell",  # a discovery event, version 3
        "row",
        "called",  # a call event, version 3
        "outcome",
        "run-finished",
    }
    assert [
        (i, e.get("event"), errors("results", e))
        for i, e in enumerate(lines, 1)
        if errors("results", e)
    ] == []


def test_every_line_replay_writes_follows_the_replay_events_schema(written):
    lines = [
        json.loads(line)
        for line in (written / "replay.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [lines[0]["event"], lines[-1]["event"]] == ["replay-started", "replay-finished"]
    assert {e["event"] for e in lines[1:-1]} == {"replay-call"}
    assert [
        (i, errors("replay-events", e))
        for i, e in enumerate(lines, 1)
        if errors("replay-events", e)
    ] == []


@pytest.mark.parametrize(
    "name, schema",
    [
        ("v1.json", "snapshot"),
        ("v3.json", "snapshot"),
        ("report.json", "report"),
        ("discover.json", "discovery"),
        ("diff.json", "diff"),
        ("replay.json", "replay"),
    ],
)
def test_a_document_the_cli_writes_follows_its_schema(written, name, schema):
    assert errors(schema, json.loads((written / name).read_text(encoding="utf-8"))) == []


def test_the_version_1_shape_of_a_discovery_document_follows_the_schema_too(written):
    doc = json.loads((written / "discover.json").read_text(encoding="utf-8"))
    assert errors("discovery", discovery_doc.read_discovery(doc)) == []
