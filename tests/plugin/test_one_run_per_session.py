"""One run per test session, whatever pytest-xdist does: the matrix's calls reach the server once,
the policy is judged over every client's cells at once, and the report pytest writes is valid.

One server (the bundled faulty server, ``--mode ok``, started by a shell that logs each start and
records each ``tools/call`` at the server) is tested through claude-code and cursor with a policy
that requires both, three times: without workers, with 2 (``--dist load``) and with 4
(``--dist loadgroup``, the mode docs/ci.md used to recommend). The three inner sessions are made
once a test run (``shared_work``) and read by every test below.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections import Counter
from pathlib import Path

import pytest
import xmlschema

from mcp_matrix.run.results import read_events
from tests.plugin.inner import inner_pytest

REPO = Path(__file__).resolve().parents[2]
CLIENTS = ("claude-code", "cursor")
WORKERS = {
    "n0": ("-n", "0"),
    "n2": ("-n", "2", "--dist", "load"),
    "n4": ("-n", "4", "--dist", "loadgroup"),
}


def _session(directory: Path, workers: tuple[str, ...]) -> None:
    log, calls = directory / "starts.log", directory / "calls.jsonl"
    (directory / "server.sh").write_text(
        f"echo started >> {shlex.quote(str(log))}\n"
        f"exec {shlex.quote(sys.executable)} -m matrix_servers.faulty --mode ok "
        f"--record {shlex.quote(str(calls))}\n"
    )
    (directory / "policy.yaml").write_text(f"required_clients: [{', '.join(CLIENTS)}]\n")
    r = inner_pytest(
        directory,
        "--mcp-stdio",
        f"/bin/sh {directory / 'server.sh'}",
        *(a for c in CLIENTS for a in ("--mcp-client", c)),
        "--mcp-policy",
        "policy.yaml",
        "--mcp-results",
        "results.jsonl",
        "--mcp-timeout-initialize",
        "60",  # a Python server on 2 loaded cores
        "--junitxml",
        "junit.xml",
        "-v",
        "-p",
        "no:cacheprovider",
        *workers,
    )
    (directory / "answer.json").write_text(json.dumps({"rc": r.returncode, "out": r.stdout}))


@pytest.fixture
def sessions(shared_work) -> dict[str, Path]:
    """The directory of each inner session (``answer.json``: exit code and output; the server's
    ``starts.log`` and ``calls.jsonl``; ``results.jsonl``, ``junit.xml``), by worker setting."""

    def build(directory: Path) -> None:
        for name, workers in WORKERS.items():
            (directory / name).mkdir()
            _session(directory / name, workers)

    root = shared_work.directory("plugin: one run per session under -n 0, 2, 4", build)
    return {name: root / name for name in WORKERS}


def answer(directory: Path) -> dict:
    return json.loads((directory / "answer.json").read_text())


def calls_at_the_server(directory: Path) -> Counter:
    lines = (directory / "calls.jsonl").read_text().splitlines()
    return Counter(json.dumps(json.loads(line), sort_keys=True) for line in lines)


def cells(directory: Path) -> list[tuple]:
    return [
        (e["event"], e["profile"], e["tool"], e.get("case"))
        for e in read_events(directory / "results.jsonl")
        if e["event"] in ("discovery", "call")
    ]


@pytest.mark.timeout(600)  # three inner sessions, each bounded by 300 s
def test_each_clients_calls_reach_the_server_once_whatever_the_worker_count(sessions):
    alone = sessions["n0"]
    starts = len((alone / "starts.log").read_text().splitlines())
    calls = calls_at_the_server(alone)
    assert calls, answer(alone)["out"][-3000:]  # the read-only tools' automatic cases
    for name in ("n2", "n4"):
        directory = sessions[name]
        assert len((directory / "starts.log").read_text().splitlines()) == starts, name
        assert calls_at_the_server(directory) == calls, name
        # one results stream: every client's cells, each once
        assert Counter(cells(directory)) == Counter(cells(alone)), name
    assert {c[1] for c in cells(alone)} == set(CLIENTS)
    assert max(Counter(cells(alone)).values()) == 1


@pytest.mark.timeout(600)
def test_the_policy_is_judged_over_every_clients_cells_at_once(sessions):
    for name, directory in sessions.items():
        out = answer(directory)["out"]
        assert answer(directory)["rc"] == 0, (name, out[-3000:])
        assert "no results for" not in out, name
        assert re.search(r"mcp-matrix::policy PASSED|PASSED mcp-matrix::policy", out), name


@pytest.mark.timeout(600)
def test_the_collected_count_is_the_number_of_items_that_run(sessions):
    items = len(cells(sessions["n0"])) + 1  # every cell and the policy
    assert f"collected {items} items" in answer(sessions["n0"])["out"]
    assert f"[{items} items]" in answer(sessions["n2"])["out"]


@pytest.mark.timeout(600)
def test_the_junit_xml_is_valid_and_names_a_class(sessions):
    schema = xmlschema.XMLSchema(str(REPO / "tests" / "report" / "data" / "junit-10.xsd"))
    for name in ("n0", "n4"):  # the controller writes it under xdist
        report = sessions[name] / "junit.xml"
        errors = list(schema.iter_errors(str(report)))
        assert not errors, (name, [str(e)[:300] for e in errors[:3]])
        classnames = set(re.findall(r'classname="([^"]*)"', report.read_text()))
        assert classnames == {"mcp-matrix"}, name
