"""``mcp-matrix report`` as a user runs it: a subprocess, real files, exit codes."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from mcp_matrix.commands.report import FORMATS, write_report
from mcp_matrix.report.json_read import read_report
from tests.conftest import REPO, run_cli
from tests.report import events as ev
from tests.report.conftest import DATA, dump_dom

SOURCE = REPO / "servers" / "memory" / "schemas.py"  # where the memory server names its tools


def test_the_default_is_the_terminal_grid_on_stdout(results_file):
    r = run_cli("report", str(results_file))
    assert r.returncode == 0, r.stderr
    assert "demo-server (demo-server 1.2.0) · 6 tools · 3 clients" in r.stdout
    assert "Problems to fix, worst first" in r.stdout and "fix: Flatten the root" in r.stdout


def test_json_on_stdout_is_the_document_alone(results_file):
    r = run_cli("report", str(results_file), "--format", "json")
    assert r.returncode == 0 and r.stderr == ""
    doc = json.loads(r.stdout)
    assert doc["format"] == "mcp-matrix.report" and doc["counts"]["cells"] == 30


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "terminal"])
def test_each_format_can_be_written_to_a_file(results_file, tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    r = run_cli("report", str(results_file), "-f", fmt, "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert out.stat().st_size > 500


def test_several_results_files_are_merged_in_order(tmp_path):
    a = ev.write_jsonl(ev.full_run(), tmp_path / "a.jsonl")
    b = ev.write_jsonl(ev.merged_runs()[len(ev.full_run()) :], tmp_path / "b.jsonl")
    r = run_cli("report", str(a), str(b), "-f", "json")
    assert r.returncode == 0, r.stderr
    assert [x["run_id"] for x in json.loads(r.stdout)["runs"]] == ["run000000001", "run000000002"]


def test_a_results_file_with_a_bad_line_exits_2_naming_the_file_and_line(results_file):
    lines = results_file.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = "{not json\n"
    results_file.write_text("".join(lines), encoding="utf-8")
    r = run_cli("report", str(results_file), "-f", "md")
    assert r.returncode == 2
    assert f"{results_file}:4" in r.stderr and r.stdout == ""


def test_a_file_that_is_not_a_results_stream_exits_2(tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"event": "call"}\n', encoding="utf-8")
    r = run_cli("report", str(bad))
    assert r.returncode == 2 and f"{bad}:1" in r.stderr
    r = run_cli("report", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "missing.jsonl" in r.stderr


def test_an_unknown_format_or_verdict_is_a_usage_error(results_file):
    assert run_cli("report", str(results_file), "-f", "pdf").returncode == 2
    r = run_cli("report", str(results_file), "--fail-on", "silent-los")
    assert r.returncode == 2 and "silent-los" in r.stderr


def test_fail_on_sets_which_verdicts_are_junit_failures(results_file):
    r = run_cli("report", str(results_file), "-f", "junit", "--fail-on", "none")
    assert r.returncode == 0
    assert ET.fromstring(r.stdout).get("failures") == "0"


def test_an_interrupted_file_with_a_truncated_last_line_is_reported(tmp_path):
    path = ev.write_jsonl(ev.interrupted_run(), tmp_path / "cut.jsonl")
    path.write_text(path.read_text(encoding="utf-8") + '{"event": "call", "prof', encoding="utf-8")
    r = run_cli("report", str(path), "-f", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["complete"] is False


def test_write_report_takes_a_stream_or_a_path_and_refuses_unknown_formats(tmp_path, full_events):
    buf = io.StringIO()
    write_report(full_events, "terminal", buf)
    assert "memory_store" in buf.getvalue() and "\x1b[" not in buf.getvalue()
    write_report(full_events, "md", tmp_path / "r.md")
    assert (
        (tmp_path / "r.md")
        .read_text(encoding="utf-8")
        .startswith("# mcp-matrix report: demo-server 1.2.0")
    )
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        write_report(full_events, "pdf", buf)


def test_a_lone_surrogate_from_a_hostile_server_does_not_stop_a_file_report(tmp_path):
    events = ev.full_run()
    events[2]["tool"] = "bad\ud800name"
    for fmt in ("md", "json", "html", "junit", "sarif"):
        write_report(events, fmt, tmp_path / f"r.{fmt}")
    assert "bad\\\\ud800name" in (tmp_path / "r.md").read_text(
        encoding="utf-8"
    )  # shown as an escape
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))  # written as a JSON escape
    assert "bad\ud800name" in doc["tools"]


# A live run and five reports (one in headless Chromium): over pytest's 180 s default on a loaded
# 2-core machine (172 s measured at load 21); its own subprocess bounds still end it.
@pytest.mark.timeout(900)
def test_a_real_run_of_the_memory_server_reports_consistently_in_every_format(tmp_path):
    """End to end: `run --results`, then `report` in each format; the formats agree on the counts."""
    results = tmp_path / "results.jsonl"
    r = run_cli(
        "run",
        "--server",
        "memory --schema anyof",
        "--client",
        "claude-code-278",
        "--client",
        "claude-code-legacy",
        "--client",
        "cursor",
        "--results",
        str(results),
        "--quiet",
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr + r.stdout
    out = {}
    for fmt in ("json", "junit", "sarif", "html", "md"):
        out[fmt] = tmp_path / f"report.{fmt}"
        source = ["--sarif-source", str(SOURCE)] if fmt == "sarif" else []
        done = run_cli("report", str(results), "-f", fmt, "-o", str(out[fmt]), *source)
        assert done.returncode == 0, done.stderr
    doc = read_report(json.loads(out["json"].read_text(encoding="utf-8")))  # every cell in full
    assert doc["server"]["name"] == "matrix-memory" and doc["complete"]
    hidden = [
        c
        for c in doc["cells"]
        if (c["profile"], c["tool"], c["kind"])
        == ("claude-code-278", "memory_reflect", "discovery")
    ]
    assert (
        hidden[0]["verdict"] == "hidden"
        and "docs/design.md#flatten-the-root" in hidden[0]["advice"]
    )
    assert hidden[0]["pointer"].endswith("/tool/inputSchema/anyOf")
    junit = ET.parse(out["junit"]).getroot()
    assert int(junit.get("failures")) == doc["counts"]["release_failing"]
    log = json.loads(out["sarif"].read_text(encoding="utf-8"))
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert sum(len(r["properties"]["profiles"]) for r in results) == doc["counts"]["findings"]
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    for r in results:  # each location is the line where the server's source names its tool
        line = r["locations"][0]["physicalLocation"]["region"]["startLine"]
        assert json.dumps(r["properties"]["tool"]) in lines[line - 1]
    dom = dump_dom(out["html"], tmp_path / "chromium")
    assert f'data-rendered="{len(doc["tools"]) * len(doc["grid"]["profiles"])}"' in dom
