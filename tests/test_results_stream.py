"""The results stream, version 3: each distinct value one entry line, every reader sees full events."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mcp_matrix.core.errors import InputError
from mcp_matrix.core.events import CallCell, DiscoveryCell, SnapshotTaken, typed_events
from mcp_matrix.core.schema_nodes import MAX_DEPTH
from mcp_matrix.run import results_tables
from mcp_matrix.run.results import (
    FORMAT,
    VERSION,
    ResultsWriter,
    iter_events,
    read_events,
    read_typed,
)
from tests.conftest import run_cli_in_process
from tests.report import events as report_events

SCHEMA = {"type": "object", "properties": {"q": {"type": "string", "description": "what to find"}}}

CALL = {
    "event": "call",
    "tool": "find",
    "case": "auto",
    "verdict": "intact",
    "answer": {"isError": False, "text": "found"},
    "evidence": [{"level": "observed", "source": "clients/calibrations/x.yaml"}],
}


def _events() -> list[dict]:
    start = {"event": "run-started", "format": FORMAT, "version": VERSION, "run_id": "r1"}
    cells = [
        {
            "event": "discovery",
            "profile": p,
            "tool": t,
            "index": i,
            "verdict": "visible",
            "model_name": t,
            "model_schema": dict(SCHEMA) if t != "other" else {"type": "object"},
            "findings": [],
            "weakest_evidence": None,
        }
        for p in ("claude-code", "cursor", "zed")
        for i, t in enumerate(("find", "find2", "other"))
    ]
    hidden = {
        "event": "discovery",
        "profile": "zed",
        "tool": "gone",
        "index": 3,
        "verdict": "hidden",
        "model_name": None,
        "model_schema": None,
        "findings": [],
        "weakest_evidence": None,
    }
    return [start, *cells, hidden, {"event": "run-finished", "measured": True}]


def _write(events, path, secrets=(), version=VERSION):
    with path.open("w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle, secrets=secrets, version=version)
        for e in events:
            writer(e)
    return path, writer


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _label(line: dict) -> str:
    return line.get("event") or next(iter(line))


def test_each_distinct_value_is_one_entry_written_before_the_first_line_naming_it(tmp_path):
    path, _ = _write(_events(), tmp_path / "r.jsonl")
    lines = _lines(path)
    nodes = [e["node"] for e in lines if "node" in e]
    # 10 cells, 2 distinct schemas: the property's sub-schema, then the roots
    assert nodes == [
        SCHEMA["properties"]["q"],
        {"type": "object", "properties": {"q": 0}},
        {"type": "object"},
    ]
    assert len([e for e in lines if "cell" in e]) == 10
    assert len([e for e in lines if "row" in e]) == 4  # find, find2, other, gone: any profile
    defined: dict[str, int] = {}
    refers = {"cell": ("text", "row"), "row": ("text", None, None, "text", "node")}
    for line in lines:
        label = _label(line)
        for table, ref in zip(refers.get(label, ()), line.get(label, ())):
            assert table is None or ref is None or ref < defined.get(table, 0), line
        defined[label] = defined.get(label, 0) + 1


def test_reading_gives_back_exactly_the_events_the_run_emitted(tmp_path):
    events = _events()
    path, writer = _write(events, tmp_path / "r.jsonl")
    assert read_events(path) == events == writer.events


def _same_through_versions_2_and_3(events, tmp_path) -> None:
    v2, _ = _write(events, tmp_path / "v2.jsonl", version=2)
    v3, _ = _write(events, tmp_path / "v3.jsonl")
    two, three = read_events(v2), read_events(v3)
    assert [e.pop("version", None) for e in two if e["event"] == "run-started"] == [2] * len(
        [e for e in three if e["event"] == "run-started"]
    )
    assert {e.pop("version") for e in three if e["event"] == "run-started"} == {3}
    assert three == two
    assert v3.stat().st_size < v2.stat().st_size


def test_versions_2_and_3_of_a_hand_built_run_read_back_the_same(tmp_path):
    _same_through_versions_2_and_3(typed_events(report_events.merged_runs()), tmp_path)


def test_versions_2_and_3_of_a_real_runs_events_read_back_the_same(shared_work, tmp_path):
    """A real run (the bundled gateway through two profiles holding an older list), its file
    written by the CLI: its events through both writers read back equal."""
    answer, results = shared_work.stale_clients_on_gateway_v2()
    assert answer.returncode in (0, 1), answer.stderr
    assert json.loads(results.read_text(encoding="utf-8").splitlines()[0])["version"] == 3
    events = read_typed(results)
    assert any(isinstance(e, DiscoveryCell) for e in events)
    assert any(isinstance(e, CallCell) for e in events)
    _same_through_versions_2_and_3(events, tmp_path)


def test_versions_1_and_2_are_still_read(tmp_path):
    events = [{**e, "version": 1} if e["event"] == "run-started" else e for e in _events()]
    path = tmp_path / "v1.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert read_events(path) == events
    events[0]["version"] = 2
    path, _ = _write(events, tmp_path / "v2.jsonl", version=2)
    assert {"event": "schema", "id": 0, "schema": SCHEMA} in _lines(path)
    assert read_events(path) == events


def test_secrets_are_scrubbed_in_entry_lines_too(tmp_path):
    events = _events()
    events[1]["model_schema"] = {"type": "object", "description": "token hunter2 inside"}
    events[2]["model_name"] = "hunter2_find"
    path, _ = _write(events, tmp_path / "r.jsonl", secrets=["hunter2"])
    assert "hunter2" not in path.read_text(encoding="utf-8")
    back = read_events(path)
    assert back[1]["model_schema"]["description"] == "token *** inside"
    assert back[2]["model_name"] == "***_find"


@pytest.mark.parametrize("version", [2, VERSION])
def test_a_secret_that_is_a_word_of_the_format_leaves_the_file_readable(tmp_path, version):
    """``--env LOG_FORMAT=text`` or ``--env RUNTIME=node`` makes ``text`` and ``node`` secrets:
    masked in every string, but not as a key the format itself writes (the file would not read
    back: a ``{"***": ...}`` entry, a call answer without ``text``)."""
    call = {
        **CALL,
        "profile": "zed",
        "answer": {"isError": False, "text": "plain text from a node"},
    }
    events = _events()
    events.insert(-1, call)
    string = {"type": "string"}
    events[1]["model_schema"] = {
        "type": "object",
        "properties": {"text": string, "node_id": string},
    }
    path, writer = _write(
        typed_events(events), tmp_path / "r.jsonl", secrets=["text", "node", "row"], version=version
    )
    back = read_events(path)
    assert back == writer.events
    assert back[-2]["answer"] == {"isError": False, "text": "plain *** from a ***"}
    # a key that is the word whole is in the file anyway (the format's); any other is masked
    assert back[1]["model_schema"]["properties"] == {"text": string, "***_id": string}


# words the formats write themselves: a key of the snapshot, a keyword whose values are node
# numbers, fixed values (a verdict, the format's name, an evidence level), JSON Schema's words
FORMAT_WORDS = ["tools", "properties", "inputSchema", "visible", "mcp-matrix.results", "observed"]
FORMAT_WORDS += ["string", "description"]


def test_a_secret_that_is_a_key_or_a_fixed_value_of_a_format_leaves_the_file_whole(tmp_path):
    """A secret equal to a snapshot key (``tools``), a schema keyword whose values are node
    numbers (``properties``) or a fixed value (a verdict, the format's name) broke the file:
    ``{"***": [...]}`` lost the snapshot's tools, nodes came back as numbers, and a ``***``
    verdict or format did not read. A string that is such a word whole is kept; every other
    string holding the secret is masked."""
    snapshot = {"format": "mcp-matrix.snapshot", "version": 1, "tools": []}
    snapshot["tools"] = [{"page": 0, "tool": {"name": "find", "inputSchema": dict(SCHEMA)}}]
    events = _events()
    events[1:1] = [SnapshotTaken(snapshot=snapshot).to_json()]
    events[-1:-1] = [{**CALL, "profile": "zed", "answer": {"text": "visible tools here"}}]
    path, writer = _write(typed_events(events), tmp_path / "r.jsonl", secrets=FORMAT_WORDS)
    back = read_events(path)
    assert back == writer.events
    assert back[1]["snapshot"]["tools"][0]["tool"]["inputSchema"] == SCHEMA
    assert back[2]["model_schema"] == SCHEMA and back[2]["verdict"] == "visible"
    assert back[-2]["answer"] == {"text": "*** *** here"}  # inside a longer string: masked


def test_a_real_run_with_secrets_that_are_words_of_the_formats_reads_back_whole(tmp_path):
    """``--env X=tools --env Y=visible --env Z=properties``: before, the snapshot line lost its
    ``tools`` (``{"***": [...]}``), a cell's schema came back as node numbers, a ``***`` verdict
    made ``report`` exit 2, and ``discover --json`` wrote ``{"***": ...}`` keys. Now every
    format reads whole, and the values themselves are masked where they were given."""
    env = ("--env", "X=tools", "--env", "Y=visible", "--env", "Z=properties")
    results = tmp_path / "r.jsonl"
    target = ("--server", "memory", "--client", "claude-code", *env)
    done = run_cli_in_process("run", *target, "--results", str(results), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    report = run_cli_in_process("report", str(results), "--format", "json")
    assert report.returncode == 0, report.stderr
    events = read_events(results)
    tools = events[1]["snapshot"]["tools"]
    assert events[1]["snapshot"]["target"]["env"] == {"X": "***", "Y": "***", "Z": "***"}
    assert all("properties" in t["tool"]["inputSchema"] for t in tools)
    visible = [e for e in events if e["event"] == "discovery" and e["verdict"] == "visible"]
    assert visible and all("properties" in e["model_schema"] for e in visible)
    found = run_cli_in_process("discover", *target, "--json")
    assert found.returncode == 0, found.stderr
    assert '"***":' not in found.stdout and '"***":' not in results.read_text(encoding="utf-8")


def test_an_interrupted_run_keeps_every_line_before_the_cut(tmp_path):
    path, _ = _write(_events(), tmp_path / "r.jsonl")
    text = path.read_text(encoding="utf-8")
    cut = text.rindex('{"cell"')  # the last cell, half written
    path.write_text(text[: cut + 5], encoding="utf-8")
    assert read_events(path) == _events()[:-2]  # all but the cut cell and run-finished


def test_a_run_cut_inside_a_character_keeps_every_line_before_the_cut(tmp_path):
    """A write interrupted inside a multi-byte character leaves a last line that is not UTF-8:
    an interrupted line like any other, not an error (every prefix of a real file read so)."""
    events = _events()
    events[-2]["tool"] = "größe"  # the last cell names a new text: its entry line ends the cut
    path, _ = _write(events, tmp_path / "r.jsonl")
    data = path.read_bytes()
    cut = data.index("ö".encode()) + 1
    path.write_bytes(data[:cut])
    assert read_events(path) == events[:-2]


def test_a_line_that_is_not_utf8_is_named_by_its_line(tmp_path):
    path, _ = _write(_events(), tmp_path / "r.jsonl")
    data = path.read_bytes()
    line = data[: data.index(b'"find"')].count(b"\n") + 1  # the text entry "find"
    data = data.replace(b'"find"', b'"f\xffnd"', 1)
    path.write_bytes(data)
    with pytest.raises(InputError, match="not UTF-8 text") as info:
        read_events(path)
    assert info.value.where.endswith(f"r.jsonl:{line}") and line > 1
    byte = data.index(b"\xff") - (data[: data.index(b"\xff")].rfind(b"\n") + 1)
    said = f"not UTF-8 text (invalid start byte at byte {byte} of the line); expected JSON lines"
    assert str(info.value).endswith(said), str(info.value)


def test_every_prefix_of_a_file_reads_as_the_events_before_the_cut(tmp_path):
    """A run interrupted at any byte: its file reads to a prefix of its events (cells, calls,
    a snapshot and multi-byte names, each cut at every byte); cut inside its first line, it
    holds no run at all and says so."""
    snapshot = {"format": "mcp-matrix.snapshot", "version": 1, "tools": []}
    snapshot["tools"] = [{"page": 0, "tool": {"name": "find", "inputSchema": dict(SCHEMA)}}]
    events = _events()
    events[2]["tool"] = events[2]["model_name"] = "größe→"
    events[1:1] = [SnapshotTaken(snapshot=snapshot).to_json()]
    events[-1:-1] = [{**CALL, "profile": p} for p in ("zed", "cursor")]
    path, _ = _write(typed_events(events), tmp_path / "r.jsonl")
    data, whole = path.read_bytes(), read_events(path)
    cut = tmp_path / "cut.jsonl"
    first = data.index(b"\n")  # the first line whole, its newline not yet written, reads
    for size in range(1, len(data) + 1):
        cut.write_bytes(data[:size])
        if size < first:
            with pytest.raises(InputError, match="only line is cut short"):
                read_events(cut)
            continue
        back = read_events(cut)
        assert back == whole[: len(back)], size
    assert back == whole


def test_a_file_whose_only_line_is_cut_is_bad_input_not_an_empty_run(tmp_path):
    """Before, a run killed as it began left a file that `report` showed as an empty grid,
    exit 0: a results file with no run in it is an input error (exit 2), named."""
    path, _ = _write(_events(), tmp_path / "r.jsonl")
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"\n") // 2])
    done = run_cli_in_process("report", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "r.jsonl:1" in done.stderr and "only line is cut short" in done.stderr
    assert "Traceback" not in done.stderr


def test_runs_written_one_after_another_read_as_each_was(tmp_path):
    """Each run numbers its entries from its run-started line: files joined end to end read as
    the runs they hold."""
    first, _ = _write(_events(), tmp_path / "a.jsonl")
    other = [{**e, "tool": "x" + e["tool"]} if "tool" in e else e for e in _events()]
    second, _ = _write(other, tmp_path / "b.jsonl")
    joined = tmp_path / "ab.jsonl"
    joined.write_text(first.read_text() + second.read_text(), encoding="utf-8")
    assert read_events(joined) == _events() + other


def test_files_of_versions_2_and_3_joined_end_to_end_read_as_each_run_was(tmp_path):
    """Each run-started line says its run's version: a version-3 run after a version-2 one
    (``cat`` of an old and a new file) reads its entries, and the other way round."""
    events = _events()
    v2, _ = _write(events, tmp_path / "v2.jsonl", version=2)
    v3, _ = _write(events, tmp_path / "v3.jsonl")
    for first, second in ((v2, v3), (v3, v2)):
        joined = tmp_path / "joined.jsonl"
        joined.write_text(first.read_text() + second.read_text(), encoding="utf-8")
        assert read_events(joined) == read_events(first) + read_events(second)


def test_merge_numbers_each_runs_entries_anew_from_its_run_started_line(tmp_path):
    first, _ = _write(_events(), tmp_path / "a.jsonl")
    other = [{**e, "tool": "x" + e["tool"]} if "tool" in e else e for e in _events()]
    second, _ = _write(other, tmp_path / "b.jsonl")
    merged = tmp_path / "m.jsonl"
    r = run_cli_in_process("merge", str(first), str(second), "-o", str(merged))
    assert r.returncode == 0, r.stderr
    assert read_typed(merged) == read_typed(first) + read_typed(second)
    # each run numbers its own entries from its run-started line, as it did in its own file
    assert [_label(line) for line in _lines(merged)] == [
        _label(line) for line in _lines(first) + _lines(second)
    ]


def test_merge_writes_a_lone_surrogate_as_its_escape(tmp_path):
    """A server's name with a lone surrogate (valid JSON, ``"\\ud800"``) is written by ``run``
    as its escape; ``merge -o`` raised UnicodeEncodeError on it (a traceback)."""
    events = _events()
    events[1]["tool"] = "lone\ud800surrogate"
    path = tmp_path / "r.jsonl"
    with path.open("w", encoding="utf-8", errors="backslashreplace") as handle:
        writer = ResultsWriter(handle)
        for e in events:
            writer(e)
    merged = tmp_path / "m.jsonl"
    r = run_cli_in_process("merge", str(path), "-o", str(merged))
    assert r.returncode == 0, r.stderr
    assert read_events(merged)[1]["tool"] == "lone\ud800surrogate"


def test_each_entry_is_checked_once_not_once_per_line_that_names_it(tmp_path, monkeypatch):
    events = _events()
    many = [{**events[1], "profile": f"p{i}"} for i in range(50)]  # 50 cells, one row
    path, _ = _write([events[0], *many, events[-1]], tmp_path / "r.jsonl")
    checked: list[dict] = []
    real = results_tables.check_event
    monkeypatch.setattr(results_tables, "check_event", lambda e: checked.append(e) or real(e))
    assert len(read_events(path)) == 52
    assert len(checked) == 1


@pytest.mark.parametrize(
    "line, says",
    [
        ('{"cell": [0, 7]}', "cell: row: expected the number of a row entry defined before"),
        ('{"cell": [5, 0]}', "cell: profile: expected the number of a text entry defined before"),
        ('{"node": {"properties": {"q": 3}}}', "node: 3 is not an entry of the table"),
        ('{"node": {"not": 0}}', "node: 0 is not an entry of the table (0 entries)"),  # itself
        ('{"finding": [0, "m", "/p"]}', "finding: kind: expected the number of a kind entry"),
        ('{"row": [0, 1]}', "row: expected 'row': a row of ['tool', 'index', 'verdict'"),
        ('{"kind": ["c", true, null, null, null, [9], null]}', "kind: evidence: expected"),
        ('{"evidence": {"note": "x"}}', "evidence: level: missing key 'level'"),
        ('{"text": 5}', "text: expected a string"),
        ('{"called": [0, 4]}', "called: outcome: expected the number of an outcome entry"),
        (
            '{"outcome": {"tool": "t", "case": "c", "verdict": "intact", "answer": 3, "evidence": []}}',
            "outcome: answer: expected the number of an answer entry defined before this line",
        ),
        ('{"outcome": {"profile": "p"}}', "outcome: expected a call event but its 'event' and"),
        ('{"shape": {}}', "unknown entry 'shape'; expected one of node, text"),
        ('{"node": {}, "text": "x"}', "expected an event or one entry"),
        ('{"row": [0, 1, "seen", null, null, [], null]}', "row: key 'verdict': 'seen' is not one"),
        ('{"row": [0, 1, "visible", null, null, [[0]], null]}', "row: findings: expected the"),
        ('{"row": [0, 1, "visible", null, null, [{}], null]}', "row: findings: expected the"),
    ],
)
def test_a_broken_entry_or_reference_is_an_input_error_naming_the_line(tmp_path, line, says):
    path = tmp_path / "bad.jsonl"
    start = json.dumps({"event": "run-started", "format": FORMAT, "version": VERSION})
    path.write_text(start + '\n{"text": "t"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_events(path)
    assert says in info.value.message
    assert info.value.where.endswith(":3")


@pytest.mark.parametrize(
    "line, says",
    [
        (
            '{"event": "discovery", "model_schema_ref": 7}',
            "model_schema_ref 7 names no schema event before it",
        ),
        ('{"event": "schema", "id": "x", "schema": {}}', "a schema event needs an integer 'id'"),
    ],
)
def test_a_broken_version_2_reference_is_an_input_error_naming_the_line(tmp_path, line, says):
    path = tmp_path / "bad.jsonl"
    start = json.dumps({"event": "run-started", "format": FORMAT, "version": 2})
    path.write_text(start + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=says) as info:
        read_events(path)
    assert info.value.where.endswith(":2")


def _v2_with_schema_line_again(tmp_path, schema):
    """A version-2 file whose schema 0 is defined again, before the last cell, in the same run."""
    path, _ = _write(_events(), tmp_path / "v2.jsonl", version=2)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    again = json.dumps({"event": "schema", "id": 0, "schema": schema}) + "\n"
    lines.insert(len(lines) - 2, again)
    path.write_text("".join(lines), encoding="utf-8")
    return path, len(lines) - 2


def test_a_version_2_schema_id_defined_again_differently_in_one_run_is_an_input_error(tmp_path):
    """No release wrote an id twice in one run (each writer numbered its schemas once, from 0;
    merge rewrote every run through one writer): a second, different schema under the same id
    would silently give the cells after it another schema. Exit 2 naming both lines."""
    path, line = _v2_with_schema_line_again(tmp_path, {"type": "object", "title": "other"})
    done = run_cli_in_process("report", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"v2.jsonl:{line}" in done.stderr and "Traceback" not in done.stderr
    assert "schema id 0 is defined again with a different schema" in done.stderr
    assert "first at line 2" in done.stderr


def test_a_version_2_schema_id_again_reads_when_identical_or_in_a_later_run(tmp_path):
    """The same schema under the same id again changes nothing; a later run (version-2 files
    joined end to end: each numbered from 0) defines its own ids; version 2's merge wrote every
    run through one writer, so a later run names schemas an earlier one defined."""
    once, _ = _write(_events(), tmp_path / "once.jsonl", version=2)
    path, _ = _v2_with_schema_line_again(tmp_path, SCHEMA)
    assert read_events(path) == read_events(once)
    first, _ = _write(_events(), tmp_path / "a.jsonl", version=2)
    other = [
        {**e, "model_schema": {"type": "array"}} if "model_schema" in e else e for e in _events()
    ]
    other[-2]["model_schema"] = None  # the hidden tool's
    second, _ = _write(other, tmp_path / "b.jsonl", version=2)
    joined = tmp_path / "ab.jsonl"
    joined.write_text(first.read_text() + second.read_text(), encoding="utf-8")
    assert read_events(joined) == read_events(first) + read_events(second)
    assert read_events(joined)[-3]["model_schema"] == {"type": "array"}  # b's schema 0
    merged, _ = _write(_events() + _events(), tmp_path / "m.jsonl", version=2)  # one writer
    assert sum(1 for line in _lines(merged) if line.get("event") == "schema") == 2
    assert read_events(merged) == read_events(once) + read_events(once)


@pytest.mark.parametrize("version", [1, VERSION])
def test_a_schema_event_outside_a_version_2_run_is_an_input_error(tmp_path, version):
    path, _ = _write(_events(), tmp_path / "r.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), "version": version}) + "\n"
    lines.insert(1, json.dumps({"event": "schema", "id": 0, "schema": SCHEMA}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError, match=f"only version 2 writes; this run is version {version}"):
        read_events(path)


def _node_chain(tmp_path, levels: int):
    """A version-3 file whose cell's schema is ``levels`` node lines, each naming the one before
    (``{"not": n}``): every line shallow, the schema they make ``levels + 1`` levels deep."""
    lines = [{"event": "run-started", "format": FORMAT, "version": VERSION, "run_id": "r"}]
    lines += [{"node": {"type": "string"}}, *({"node": {"not": n}} for n in range(levels))]
    lines += [{"text": "t"}, {"text": "zed"}, {"row": [0, 0, "visible", 0, levels, [], None]}]
    lines += [{"cell": [1, 0]}, {"event": "run-finished", "measured": True}]
    path = tmp_path / "deep.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_node_lines_nested_deeper_than_a_line_of_json_can_hold_are_an_input_error(tmp_path):
    """Each node line is shallow, but 3,000 of them naming the one before made a schema no line
    of version 1 or 2 could hold: ``report -f json`` and ``merge`` ended in RecursionError (a
    traceback). Now the node past the limit is exit 2, named by its line."""
    path = _node_chain(tmp_path, 3000)
    for args in (("report", str(path), "--format", "json"), ("merge", str(path))):
        done = run_cli_in_process(*args)
        assert done.returncode == 2, done.stderr[-300:]
        assert f"deep.jsonl:{MAX_DEPTH + 2}: node {MAX_DEPTH}: nested {MAX_DEPTH + 1} levels" in (
            done.stderr
        )
        assert "Traceback" not in done.stderr
    path = _node_chain(tmp_path, MAX_DEPTH - 1)  # as deep as the limit: every report is written
    done = run_cli_in_process("report", str(path), "--format", "json")
    assert done.returncode == 0, done.stderr[-300:]


def test_a_version_3_line_in_a_run_of_another_version_says_so(tmp_path):
    """A version-3 file whose run-started line was edited (or a version-2 run-started joined
    before version-3 lines) said only 'expected an object with an event key', and its
    snapshot, its schemas node numbers, read as a snapshot of numbers."""
    path, _ = _write(_events(), tmp_path / "r.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), "version": 2}) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(
        InputError, match="a 'node' line is one only version 3 writes; this run is version 2"
    ) as info:
        read_events(path)
    assert info.value.where.endswith("r.jsonl:2")
    snapshot = SnapshotTaken(snapshot={"tools": [{"tool": {"name": "f", "inputSchema": {}}}]})
    path, _ = _write([_events()[0], snapshot], tmp_path / "s.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = json.dumps({**json.loads(lines[0]), "version": 2}) + "\n"
    path.write_text("".join(lines[:1] + lines[2:]), encoding="utf-8")  # the node line left out
    with pytest.raises(InputError, match="node numbers .* this run is version 2") as info:
        read_events(path)  # before: read, each tool's inputSchema a number
    assert info.value.where.endswith("s.jsonl:2")


def test_a_call_the_profiles_treat_alike_is_one_outcome_and_its_answer_one_entry(tmp_path):
    call = CALL
    events = _events()
    calls = [{**call, "profile": p} for p in ("claude-code", "cursor", "zed")]
    calls.append({**call, "profile": "zed", "case": "other"})  # the same answer, another case
    path, _ = _write(typed_events([*events[:-1], *calls, events[-1]]), tmp_path / "r.jsonl")
    lines = _lines(path)
    assert [_label(line) for line in lines].count("called") == 4
    assert [line["outcome"]["case"] for line in lines if "outcome" in line] == ["auto", "other"]
    assert [line["answer"] for line in lines if "answer" in line] == [call["answer"]]
    assert len([line for line in lines if "evidence" in line]) == 1
    back = [e for e in read_events(path) if e["event"] == "call"]
    assert back == [e.to_json() for e in typed_events(calls)]


def _with_snapshot(tmp_path) -> tuple[dict, list[dict], Path]:
    """A results file whose run took a snapshot of one tool: the snapshot, events, path."""
    snapshot = {"format": "mcp-matrix.snapshot", "version": 1, "tools": []}
    snapshot["tools"] = [{"page": 0, "tool": {"name": "find", "inputSchema": dict(SCHEMA)}}]
    events = _events()
    events.insert(1, SnapshotTaken(snapshot=snapshot).to_json())
    path, _ = _write(events, tmp_path / "r.jsonl")
    return snapshot, events, path


def test_the_snapshots_tool_schemas_are_nodes_the_cells_share(tmp_path):
    snapshot, events, path = _with_snapshot(tmp_path)
    lines = _lines(path)
    assert [e["node"] for e in lines if "node" in e][:2] == [
        SCHEMA["properties"]["q"],
        {"type": "object", "properties": {"q": 0}},
    ]
    written = next(e for e in lines if e.get("event") == "snapshot")
    assert written["nodes"] is True and written["snapshot"]["tools"][0]["tool"]["inputSchema"] == 1
    assert read_events(path) == events
    assert list(iter_events(path))[1]["snapshot"] == snapshot


def test_an_in_memory_writer_keeps_full_events():
    writer = ResultsWriter(io.StringIO())
    for e in _events():
        writer(e)
    assert writer.events[1]["model_schema"] == SCHEMA


def test_a_run_writes_its_own_reports_without_checking_again_a_line_it_wrote(tmp_path, monkeypatch):
    """The run's reports read the typed events its writer kept (``ResultsWriter.typed``), not
    its file: no event it made is checked against the schema again, in the stream or after."""
    from mcp_matrix import api
    from mcp_matrix.core import events as core_events
    from mcp_matrix.run import results

    checked: list[dict] = []
    real = core_events.check_event
    for module in (core_events, results, results_tables):  # every caller of the check
        monkeypatch.setattr(module, "check_event", lambda e: checked.append(e) or real(e))
    outcome = api.run(
        api.target(server="memory"),
        profiles=api.profiles(["claude-code", "cursor"]),
        timeouts=api.Timeouts(initialize=60, list=60, call=60),
        results=tmp_path / "r.jsonl",
        reports=[("json", tmp_path / "r.json"), ("html", tmp_path / "r.html")],
    )
    assert outcome.measured and (tmp_path / "r.json").stat().st_size > 0
    assert checked == []
    assert read_typed(tmp_path / "r.jsonl") == list(outcome.events)  # the file says the same
    assert checked  # reading a file checks its lines (this check is real)


def test_the_writer_keeps_no_copy_it_made_only_to_number_a_value():
    """A schema node as written (its sub-schemas numbers) and a row, kind or finding entry are
    made afresh for one look-up: numbered by their text, not held by identity (a 1,000-tool run
    through 36 profiles held 29 MiB of such copies, traced)."""
    writer = ResultsWriter(io.StringIO())
    finding = {"code": "c", "message": "m", "pointer": "/p", "lost": True}
    for e in _events():
        writer({**e, "findings": [finding]} if e["event"] == "discovery" else e)
    tables = writer._tables
    assert len(tables.nodes.table) == 3 and len(tables.rows) == 4 and len(tables.findings) == 1
    for table in (tables.nodes.table, tables.rows, tables.kinds, tables.findings):
        assert table._held == [] and table._by_id == {}


@pytest.mark.parametrize("tools", [5, "find", None, {"find": 1}])
def test_a_snapshot_whose_tools_are_not_a_list_is_read_not_a_traceback(tmp_path, tools):
    """A damaged version-3 snapshot line (``"tools": 5``): putting its schemas back iterated the
    number, a TypeError and a traceback from ``report``; there is no schema to put back."""
    snapshot, _, path = _with_snapshot(tmp_path)
    lines = _lines(path)
    for line in lines:
        if line.get("event") == "snapshot":
            line["snapshot"]["tools"] = tools
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert next(e for e in read_events(path) if e["event"] == "snapshot")["snapshot"] == {
        **snapshot,
        "tools": tools,
    }
    r = run_cli_in_process("report", str(path))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
