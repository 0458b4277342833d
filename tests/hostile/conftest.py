"""Helpers of the hostile tests: a run of the real CLI with every report format, and checks that
every output survived what the server sent."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from mcp_matrix.run.results import read_events
from tests.conftest import LOADED_MACHINE_BOUNDS, NEUTRAL_CWD, run_cli

TINY_SERVER = Path(__file__).with_name("tiny_server.py")
PEAK_RSS = Path(__file__).with_name("peak_rss.py")
FORMATS = {
    "md": "r.md",
    "html": "r.html",
    "json": "r.json",
    "junit": "r.xml",
    "sarif": "r.sarif",
    "summary": "r.summary.md",
    "github": "r.github.txt",
}
# Bounds of every hostile run: short, so a hang shows as a timeout verdict, not a stuck test.
TIMEOUTS = ("--timeout-call", "3", "--timeout-initialize", "5", "--timeout-list", "5")


@dataclass
class Run:
    """One finished CLI run: its exit code, output, results and report files."""

    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    dir: Path
    events: list[dict] = field(default_factory=list)

    def of(self, kind: str) -> list[dict]:
        return [e for e in self.events if e.get("event") == kind]

    @property
    def finished(self) -> dict:
        return self.of("run-finished")[-1]

    @property
    def snapshot(self) -> dict:
        return self.of("snapshot")[0]["snapshot"]

    def discovery(self) -> dict[tuple[str, str], dict]:
        return {(e["profile"], e["tool"]): e for e in self.of("discovery")}

    def calls(self) -> dict[tuple[str, str, str], dict]:
        return {(e["profile"], e["tool"], e["case"]): e for e in self.of("call")}

    def report(self, fmt: str) -> str:
        return (self.dir / FORMATS[fmt]).read_text(encoding="utf-8")


def matrix_run(tmp_path: Path, *target: str, clients=(), extra=(), timeout: float = 90) -> Run:
    """``mcp-matrix run`` on ``target`` with a results file and every report format, bounded."""
    results = tmp_path / "r.jsonl"
    args = ["run", *target, "--results", str(results), *TIMEOUTS, *extra]
    for client in clients:
        args += ["--client", client]
    for fmt, name in FORMATS.items():
        args += ["--report", f"{fmt}:{tmp_path / name}"]
    started = time.monotonic()
    r = run_cli(*args, timeout=timeout)
    run = Run(r.returncode, r.stdout, r.stderr, time.monotonic() - started, tmp_path)
    if results.exists() and results.stat().st_size:
        run.events = read_events(results)
    return run


def measured_cli(
    tmp_path: Path, *args: str, timeout: float = 600
) -> tuple[subprocess.CompletedProcess, float]:
    """The real CLI as ``run_cli`` runs it, and the peak memory (MB) of its largest process
    (mcp-matrix itself or a server it started), read by tests/hostile/peak_rss.py."""
    if args and args[0] in LOADED_MACHINE_BOUNDS:
        args = (args[0], *LOADED_MACHINE_BOUNDS[args[0]], *args[1:])
    peak = tmp_path / "peak-mb.txt"
    r = subprocess.run(
        [sys.executable, str(PEAK_RSS), str(peak), sys.executable, "-m", "mcp_matrix", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=NEUTRAL_CWD,
        check=False,
    )
    return r, float(peak.read_text())


def tiny_server(tmp_path: Path, config: dict, *args: str) -> str:
    """The ``--stdio`` command of a tiny stdlib server (tests/hostile/tiny_server.py) with ``config``."""
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return " ".join([sys.executable, str(TINY_SERVER), str(path), *args])


def assert_no_crash(run: Run) -> None:
    """Nothing of mcp-matrix itself broke: no traceback, no runaway recursion."""
    for text in (run.stderr, run.stdout):
        assert "Traceback" not in text and "RecursionError" not in text, text[-3000:]


def assert_reports_render(run: Run) -> None:
    """Every format was written and is well-formed; untrusted text never became markup."""
    doc = json.loads(run.report("json"))
    assert doc["format"] == "mcp-matrix.report"
    assert doc["counts"]["cells"] == len(run.of("discovery")) + len(run.of("call"))
    ET.fromstring(run.report("junit"))  # parses: no raw control characters, no broken markup
    sarif = json.loads(run.report("sarif"))
    assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 1
    # Workflow commands: every line is one annotation of ours, so a name holding a newline and
    # "::error::" (or "::stop-commands::") cannot start a command of its own.
    for line in run.report("github").splitlines():
        assert re.match(r"::(error|warning|notice)( [^:]*)?::", line), line
    html = run.report("html")
    # The page's own two script elements and no other; its JSON data holds no raw "<".
    assert re.findall(r"<script\b[^>]*>", html) == [
        '<script type="application/json" id="report-data">',
        "<script>",
    ]
    data = html.split('<script type="application/json" id="report-data">', 1)[1].split(
        "</script>", 1
    )[0]
    assert "<" not in data
    assert "<img" not in html and "javascript:alert" not in html.replace("javascript:alert(1)", "")
    assert_markdown_tables_intact(run.report("md"))
    # The terminal shows control characters as escapes, never raw.
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout


def assert_markdown_tables_intact(text: str) -> None:
    """Every row of every table has as many cells as its header (no cell broken by a ``|``)."""
    assert "<script" not in text
    table: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table}
            assert len(widths) == 1, "a table row has the wrong number of cells:\n" + "\n".join(
                table[:5]
            )
            table = []


def assert_every_cell_kept(run: Run, clients) -> None:
    """Every listed tool has a discovery cell per client; every planned call a cell per client."""
    named = [
        t["tool"].get("name") for t in run.snapshot["tools"] if isinstance(t.get("tool"), dict)
    ]
    discovery = run.discovery()
    for client in clients:
        assert {tool for p, tool in discovery if p == client} == {
            str(n) for n in named if n is not None
        }
    calls = run.calls()
    per_client = [{(tool, case) for p, tool, case in calls if p == client} for client in clients]
    assert all(cells == per_client[0] for cells in per_client), "a client lost some call cells"
    assert not run.of("profile-error"), run.of("profile-error")
    assert run.finished["interrupted"] is False
