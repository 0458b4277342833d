"""Hostile schemas (issue 15, docs/security.md): a ``$ref`` is never fetched or read, a
catastrophic ``pattern`` never hangs validation, a million-value ``enum`` stays within a
memory bound.

Each test runs the real CLI against the faulty server in a mode that carries the attack, with a
real TCP listener standing for a remote schema host and a real file standing for a local secret.
"""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from mcp_matrix.behaviours.validation import validate
from mcp_matrix.run.results import read_events
from tests.conftest import run_cli
from tests.hostile.conftest import assert_no_crash, matrix_run, measured_cli
from tests.hostile.test_interrupt import servers_of

SECRET = "SECRET-FILE-CONTENT-7f3a9c"


class Listener:
    """A TCP listener on 127.0.0.1 that accepts and never answers, counting connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(50)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            self.held.append(conn)  # never answered: a fetch would hang on it

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        for conn in self.held:
            conn.close()
        self.sock.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/schema.json"


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A valid JSON schema whose text a leak would show (a validator that read it would use it)."""
    path = tmp_path / "secret.json"
    doc = {"type": "object", "description": SECRET, "required": [SECRET], "const": {SECRET: SECRET}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def every_output(root: Path, *texts: str) -> str:
    return "\n".join(
        [
            *texts,
            *(
                p.read_text(errors="replace")
                for p in root.iterdir()
                if p.is_file()
                if p.name != "secret.json"
            ),
        ]
    )


def test_a_ref_to_a_listener_or_a_file_is_never_fetched_or_read_during_run(
    tmp_path, listener, secret_file
):
    run = matrix_run(
        tmp_path,
        "--server",
        f"faulty --mode external-ref --ref {listener.url} --ref {secret_file.as_uri()}",
        timeout=150,
    )
    assert_no_crash(run)
    assert run.returncode in (0, 1), run.stderr[-2000:]
    assert listener.connections == 0
    assert SECRET not in every_output(tmp_path, run.stdout, run.stderr)
    # Every profile that listed the tools says the reference was left unresolved; the only ones
    # that did not list them speak 2026-07-28 alone, which this handshake-era server does not.
    for tool in ("ref_0", "ref_1"):
        cells = [e for e in run.of("discovery") if e["tool"] == tool]
        unlisted = [e for e in cells if e["verdict"] == "session-broken"]
        assert all(e["findings"][-1]["code"] == "modern-refused" for e in unlisted), unlisted
        listed = [e for e in cells if e not in unlisted]
        assert len(listed) > 30 and all(
            "external-ref" in {f["code"] for f in e["findings"]} for e in listed
        )
    assert {e["tool"] for e in run.of("call")} >= {"ref_0", "ref_1"}
    assert not run.of("profile-error")


def test_offline_replay_against_a_snapshot_fetches_and_reads_nothing(
    tmp_path, listener, secret_file
):
    snap = tmp_path / "snap.json"
    target = f"faulty --mode external-ref --ref {listener.url} --ref {secret_file.as_uri()}"
    r = run_cli("snapshot", "--server", target, "-o", str(snap))
    assert r.returncode == 0, r.stderr
    calls = tmp_path / "live.jsonl"
    calls.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "tool": t, "arguments": {"doc": {"a": 1}}}) + "\n"
            for i, t in enumerate(["ref_0", "ref_1"])
        ),
        encoding="utf-8",
    )
    r = run_cli(
        "replay", str(calls), "--snapshot", str(snap), "--json", timeout=120
    )  # hung past 500 s
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert listener.connections == 0
    assert SECRET not in r.stdout + r.stderr
    r = run_cli("discover", str(snap), "--json")
    assert r.returncode in (0, 1) and listener.connections == 0 and SECRET not in r.stdout


@pytest.mark.parametrize("dialect", ["draft-07", "2020-12"])
@pytest.mark.parametrize(
    "shape",
    [
        lambda ref: {"type": "object", "properties": {"x": {"$ref": ref}}},
        lambda ref: {"$ref": ref},
        # a relative reference made remote by $id
        lambda ref: {
            "$id": ref.rsplit("/", 1)[0] + "/",
            "type": "object",
            "properties": {"x": {"$ref": "other.json"}},
        },
        # one made remote by a draft-04 style id (fastjsonschema honours it)
        lambda ref: {"id": ref.rsplit("/", 1)[0] + "/", "properties": {"x": {"$ref": "o.json"}}},
    ],
)
def test_no_validator_path_fetches_a_reference(listener, secret_file, dialect, shape):
    for ref in (listener.url, secret_file.as_uri()):
        result = validate(shape(ref), {"x": {"a": 1}}, dialect)
        assert SECRET not in repr(result)
    assert listener.connections == 0


def test_a_local_reference_still_validates():
    schema = {
        "type": "object",
        "properties": {"x": {"$ref": "#/definitions/a"}},
        "definitions": {"a": {"type": "string"}},
    }
    assert validate(schema, {"x": 1}).errors
    assert not validate(schema, {"x": "ok"}).errors
    assert validate({**schema, "$defs": schema["definitions"]}, {"x": 1}, "2020-12").errors


def test_a_catastrophic_pattern_is_bounded_and_reported_not_hung(tmp_path):
    run = matrix_run(
        tmp_path, "--server", "faulty --mode redos", clients=["gemini-cli"], timeout=120
    )
    assert_no_crash(run)
    assert run.returncode in (0, 1)
    calls = {e["tool"]: e for e in run.of("call")}
    # The issue's ^(a+)+$ on 40 a's and a '!': decided (the regex engine does not backtrack on it).
    assert "does not match" in calls["redos"]["reason"]
    # ^(a|aa)+$ on 60 a's and a '!': runs out of the budget, is not checked, and says so.
    assert calls["redos_budget"]["verdict"] == "intact"
    assert any("did not finish within" in n for n in calls["redos_budget"]["notes"])


def test_many_strings_against_a_costly_pattern_stay_within_a_bound():
    """Once a pattern ran out of budget it is not run again in the same validation."""
    schema = {"type": "array", "items": {"type": "string", "pattern": "^(a|aa)+$"}}
    # One budget, not ten thousand (2,000 s, far past this test's timeout).
    result = validate(schema, ["a" * 60 + "!"] * 10_000)
    assert len(result.unchecked) == 1 and not result.errors


ENUM_MEMORY_BOUND_MB = 1024  # docs/security.md; measured 282 MB here (7 GB before the cap)


@pytest.mark.timeout(900)
def test_a_million_value_enum_is_reported_not_compiled_and_memory_stays_bounded(tmp_path):
    record = tmp_path / "calls.jsonl"
    results = tmp_path / "r.jsonl"
    # gemini-cli validates arguments (fastjsonschema compiled the enum into 7 GB of code);
    # openai-agents-strict copies the schema for its strict rewrite.
    r, peak_mb = measured_cli(
        tmp_path,
        "run",
        "--server",
        f"faulty --mode huge-enum --record {record}",
        "--client",
        "gemini-cli",
        "--client",
        "openai-agents-strict",
        "--results",
        str(results),
        "--timeout-list",
        "300",
        "--timeout-call",
        "300",
    )
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 0, r.stderr[-2000:]  # a long enum is reported, not a loss
    events = read_events(results)
    assert events[-1]["event"] == "run-finished" and events[-1]["measured"] is True
    for cell in (e for e in events if e["event"] == "discovery" and e["tool"] == "huge_enum"):
        found = [f for f in cell["findings"] if f["code"] == "enum-over-cap"]
        assert found and "1,000,000 values" in found[0]["message"], cell["profile"]
        assert [e["level"] for e in found[0]["evidence"]] == ["assumed"]
    calls = [e for e in events if e["event"] == "call" and e["tool"] == "huge_enum"]
    gemini = [e for e in calls if e["profile"] == "gemini-cli"]
    assert gemini and any("it was not checked" in n for n in gemini[0]["notes"])
    assert gemini[0]["verdict"] == "intact"  # the call was made and answered
    assert peak_mb < ENUM_MEMORY_BOUND_MB, f"peak {peak_mb:.0f} MB"
    assert servers_of(record) == []
