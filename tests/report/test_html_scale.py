"""The HTML report of a large server: paged, folded, details on click, each text stored once.

The page is built from a generated snapshot (``benchmarks/synthetic.py``, as the benchmarks
do): plain tools every client sees, mixed with synthetic ones that a client degrades, through
five clients; then opened in headless Chromium, with ``--dump-dom`` (a page or a cell named in
the URL) and driven over the DevTools pipe (clicks, as a user pages and opens a cell).
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.core.events import FORMAT
from mcp_matrix.core.verdicts import SYMBOL
from mcp_matrix.profiles.loader import load_profiles, select_profiles
from mcp_matrix.report.html import PAGE_ROWS
from mcp_matrix.report.json_report import build_report
from mcp_matrix.report.writers import write_report
from mcp_matrix.run.discovery import discover_all, discovery_events
from mcp_matrix.targets.snapshot import Snapshot
from tests.report.conftest import CHROMIUM_TIMEOUT, chromium, dump_dom

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import snapshot_doc, tool_list

CLIENTS = ["claude-code", "codex", "gemini-cli", "python-sdk", "zed"]


def _plain(i: int) -> dict:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    return {"name": f"lookup_{i}", "description": "Looks a record up.", "inputSchema": schema}


def _events() -> list[dict]:
    registry.load_all()
    odd = [
        t for t in tool_list(300) if len(t["name"]) < 40 and "anyOf" not in t["inputSchema"]
    ]  # no tool that breaks a whole session: each row has its own verdicts
    tools = [x for pair in zip((_plain(i) for i in range(len(odd))), odd) for x in pair]
    snap = Snapshot(snapshot_doc(tools))
    profiles = select_profiles(load_profiles(), CLIENTS)
    return discovery_events(snap, discover_all(snap, profiles), profiles)


def _html(events: list[dict]) -> str:
    buf = io.StringIO()
    write_report(events, "html", buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> tuple[Path, dict]:
    events = _events()
    path = tmp_path_factory.mktemp("large") / "report.html"
    path.write_text(_html(events), encoding="utf-8")
    return path, build_report(events)


def _listed(doc: dict) -> tuple[list[int], list[int]]:
    """The rows the page lists (some cell not visible) and those it folds, in grid order."""
    rows = doc["grid"]["rows"]
    good = [all(v == "visible" for v in r["cells"]) for r in rows]
    return [i for i, g in enumerate(good) if not g], [i for i, g in enumerate(good) if g]


def _drawn_rows(dom: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr class="row" data-tool="(\d+)"', dom)]


def test_the_first_page_lists_a_page_of_rows_and_folds_the_tools_visible_everywhere(
    large, tmp_path
):
    path, doc = large
    listed, folded = _listed(doc)
    assert len(listed) > 2 * PAGE_ROWS and len(folded) > PAGE_ROWS  # the scale this test needs
    dom = dump_dom(path, tmp_path / "chromium")
    assert _drawn_rows(dom) == listed[:PAGE_ROWS]
    assert f'data-rendered="{PAGE_ROWS * len(CLIENTS)}"' in dom
    assert f'data-pages="{-(-len(listed) // PAGE_ROWS)}"' in dom
    assert f"{len(folded)} tools visible in every client, not listed" in dom
    assert f"tools 1–{PAGE_ROWS} of {len(listed)} · page 1 of" in dom


def test_a_page_in_the_url_draws_that_page(large, tmp_path):
    path, doc = large
    listed, _ = _listed(doc)
    last = -(-len(listed) // PAGE_ROWS)
    dom = dump_dom(path, tmp_path / "chromium", f"#page={last}")
    assert f'data-page="{last}"' in dom
    assert _drawn_rows(dom) == listed[(last - 1) * PAGE_ROWS :]


def test_a_cell_on_a_later_page_opens_its_page_and_shows_its_details(large, tmp_path):
    path, doc = large
    listed, _ = _listed(doc)
    codex = doc["grid"]["profiles"].index("codex")
    row = next(
        i for i in listed[PAGE_ROWS : 2 * PAGE_ROWS] if doc["grid"]["rows"][i]["cells"][codex]
    )
    tool = doc["grid"]["rows"][row]["tool"]
    cell = next(c for c in doc["cells"] if c["tool"] == tool and c["profile"] == "codex")
    assert cell["verdict"] == "degraded" and cell["findings"] and cell["advice"]
    dom = dump_dom(path, tmp_path / "chromium", f"#cell={row},{codex}")
    assert 'data-page="2"' in dom
    assert f'<tr class="row" data-tool="{row}"><th class="tool"' in dom
    assert re.search(rf'data-tool="{row}">.*?<td class="cell v-degraded selected"', dom)
    details = dom.split('<aside id="details"', 1)[1].split("</aside>", 1)[0]
    assert f'<h2>codex</h2><p class="mono">{tool}</p>' in details
    assert "degraded · discovery" in details
    finding = cell["findings"][0]
    assert f"<code>{finding['code']}</code>" in details
    assert f"<code>{finding['snapshot_pointer']}</code>" in details
    assert "<strong>Fix: </strong>" + cell["advice"].replace("<", "&lt;").replace(
        ">", "&gt;"
    ) in details.replace("&amp;", "&")


def test_a_cell_of_a_folded_tool_lists_the_folded_tools_and_shows_the_cell(large, tmp_path):
    path, doc = large
    _, folded = _listed(doc)
    row = folded[-1]
    dom = dump_dom(path, tmp_path / "chromium", f"#cell={row},0")
    assert f"{len(folded)} tools visible in every client (listed)" in dom
    assert f'<tr class="row" data-tool="{row}">' in dom
    details = dom.split('<aside id="details"', 1)[1].split("</aside>", 1)[0]
    assert f"<h2>{CLIENTS[0]}</h2>" in details and "visible · discovery" in details


def _same_finding_events(tools: int) -> list[dict]:
    """``tools`` tools that one client degrades with the same finding, evidence and advice."""
    finding = {
        "code": "keyword-dropped",
        "message": "the client removes 'default' from every property before the model sees it",
        "pointer": "/inputSchema/properties/q/default",
        "lost": True,
        "blast_radius": "tool",
        "behaviour": "strip-defaults",
        "evidence": [
            {
                "level": "code",
                "source": "https://example.org/client/source.ts",
                "note": "defaults are deleted from the schema the model is shown",
            }
        ],
    }
    events: list[dict] = [
        {"event": "run-started", "format": FORMAT, "version": 2, "profiles": [{"name": "client-a"}]}
    ]
    for i in range(tools):
        events.append(
            {
                "event": "discovery",
                "profile": "client-a",
                "tool": f"t{i}",
                "verdict": "degraded",
                "findings": [finding],
            }
        )
    return events + [{"event": "run-finished", "measured": True}]


def test_the_same_finding_on_1000_cells_is_written_once():
    small, big = _html(_same_finding_events(500)), _html(_same_finding_events(1000))
    message = "removes &#39;default&#39; from every property"
    data = big.split('id="report-data">', 1)[1]
    assert data.count("removes 'default' from every property") == 1
    assert data.count("defaults are deleted from the schema") == 1
    assert big.count(message) <= 1  # the problems list names the cause once (not per cell)
    # 500 more cells cost their own references (a name, a grid entry, a row of numbers), far
    # less than one copy of the finding, its evidence and its advice each.
    per_cell = (len(big) - len(small)) / 500
    assert per_cell < 40, per_cell


# Chromium reads its DevTools pipe on fd 3 and writes it on fd 4: move the pipe there, then exec.
_EXEC_WITH_PIPE = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
    "os.execv(sys.argv[3], sys.argv[3:])"
)


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """The pipe's ends moved to fds 10 and up, clear of the 3 and 4 they are moved to."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved


def _chromium_binary() -> str:
    """Debian's /usr/bin/chromium is a shell launcher; the pipe reaches the browser it starts."""
    real = Path("/usr/lib/chromium/chromium")
    return str(real) if real.exists() else chromium()


class _DevToolsError(Exception):
    pass


class _Browser:
    """Headless Chromium driven over its DevTools pipe (fds 3 and 4, NUL-separated JSON), so a
    test can click as a user does: ``--dump-dom`` only loads a page."""

    def __init__(self, url: str, profile_dir: Path) -> None:
        to_chrome, self._in = _high(os.pipe())
        self._out, from_chrome = _high(os.pipe())
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _EXEC_WITH_PIPE,
                str(to_chrome),
                str(from_chrome),
                _chromium_binary(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                f"--user-data-dir={profile_dir}",
                "--remote-debugging-pipe",
                url,
            ],
            pass_fds=(to_chrome, from_chrome),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome)
        os.close(from_chrome)
        self._buffer = b""
        self._id = 0
        page = next(
            t
            for t in self.call("Target.getTargets")["targetInfos"]
            if t["type"] == "page" and t["url"].startswith("file:")
        )
        attached = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)
        self.session = attached["sessionId"]

    def call(self, method: str, session: str | None = None, **params) -> dict:
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._in, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + CHROMIUM_TIMEOUT
        while True:
            while b"\0" in self._buffer:
                line, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(line)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise _DevToolsError(reply["error"].get("message", ""))
                    return reply["result"]
            ready, _, _ = select.select([self._out], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer to {method} in {CHROMIUM_TIMEOUT} s"
            chunk = os.read(self._out, 1 << 16)
            assert chunk, "chromium closed its DevTools pipe"
            self._buffer += chunk

    def run(self, script: str) -> object:
        """The value of ``script`` in the page."""
        result = self.call(
            "Runtime.evaluate", session=self.session, expression=script, returnByValue=True
        )
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def wait_drawn(self) -> None:
        """Until the page's script has drawn the grid (the file replaces the blank page Chromium
        opens first: an evaluation can meet either, or the moment between)."""
        deadline = time.monotonic() + CHROMIUM_TIMEOUT
        while time.monotonic() < deadline:
            try:
                if self.run('document.documentElement.hasAttribute("data-drawn-ms")') is True:
                    return
            except (_DevToolsError, AssertionError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"the page was not drawn in {CHROMIUM_TIMEOUT} s")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=CHROMIUM_TIMEOUT)
        os.close(self._in)
        os.close(self._out)


def test_clicks_page_through_the_grid_list_the_folded_tools_and_open_a_cell(large, tmp_path):
    path, doc = large
    listed, folded = _listed(doc)
    rows = 'Array.from(document.querySelectorAll("#grid tr.row"), r => Number(r.dataset.tool))'
    browser = _Browser(path.resolve().as_uri(), tmp_path / "chromium")
    try:
        browser.wait_drawn()
        assert browser.run(rows) == listed[:PAGE_ROWS]
        browser.run('document.getElementById("page-next").click()')
        assert browser.run(rows) == listed[PAGE_ROWS : 2 * PAGE_ROWS]
        browser.run('document.getElementById("folded-toggle").click()')
        assert browser.run('document.getElementById("folded-text").textContent') == (
            f"{len(folded)} tools visible in every client (listed)"
        )
        assert browser.run(rows) == sorted(listed + folded)[PAGE_ROWS : 2 * PAGE_ROWS]
        codex = doc["grid"]["profiles"].index("codex")
        row = browser.run(rows)[0]
        browser.run(
            f'document.querySelector(\'#grid tr[data-tool="{row}"] td[data-profile="{codex}"] button\').click()'
        )
        details = browser.run(
            'Array.from(document.querySelectorAll("#details h2, #details > p, #details h3"),'
            " n => n.textContent)"
        )
        tool = doc["grid"]["rows"][row]["tool"]
        verdict = doc["grid"]["rows"][row]["cells"][codex]
        assert details == ["codex", tool, f"{SYMBOL[verdict]}{verdict} · discovery"]
        assert browser.run("location.hash") == f"#cell={row},{codex}"
    finally:
        browser.close()
