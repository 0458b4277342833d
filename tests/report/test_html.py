"""The HTML report: one offline file; opened in headless Chromium, its grid renders and
hostile text stays text."""

from __future__ import annotations

import html as html_lib
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mcp_matrix.commands.report import write_report
from mcp_matrix.core.text import safe
from mcp_matrix.report.html import script_json
from tests.conftest import run_cli
from tests.report import events as ev
from tests.report.conftest import dump_dom


def html(events) -> str:
    buf = io.StringIO()
    write_report(events, "html", buf)
    return buf.getvalue()


@pytest.fixture
def page(tmp_path, full_events) -> Path:
    path = tmp_path / "report.html"
    path.write_text(html(full_events), encoding="utf-8")
    return path


def test_the_file_is_self_contained_and_forbids_the_network(full_events):
    text = html(full_events)
    assert (
        "<link" not in text and not re.search(r"<script[^>]*\bsrc=", text) and "@import" not in text
    )
    csp = html_lib.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    )
    assert (
        "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe-inline" not in csp
    )


def test_embedded_json_cannot_close_its_script_element():
    text = script_json({"name": "</script><script>alert(1)</script>", "amp": "&", "gt": ">"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script>", "amp": "&", "gt": ">"}


def test_metadata_from_the_server_is_escaped_by_the_template():
    events = ev.full_run()
    events[0]["server"] = {"name": "<img src=x onerror=alert(3)>", "version": "1</title><script>"}
    text = html(events)
    assert "<img src=x" not in text and "1</title><script>" not in text
    assert "&lt;img src=x onerror=alert(3)&gt;" in text


def test_headless_chromium_renders_the_grid_and_hostile_names_stay_text(page, tmp_path):
    dom = dump_dom(page, tmp_path / "chromium")
    assert 'data-rendered="18"' in dom  # 6 tools x 3 clients, drawn by the page's script
    assert len(re.findall(r'<td class="cell v-', dom)) == 18
    assert len(re.findall(r"<th class=\"client\"", dom)) == 3
    # Only the page's own two script elements exist: the data block and the app.
    assert re.findall(r"<script\b[^>]*>", dom) == [
        '<script type="application/json" id="report-data">',
        "<script>",
    ]
    assert "<img" not in dom
    assert (
        '<th class="tool" scope="row" title="&lt;script&gt;alert(1)&lt;/script&gt;|x\nnew">'
        "&lt;script&gt;alert(1)&lt;/script&gt;|x\nnew</th>" in dom
    )
    # Filters by client and by verdict were built from the data.
    assert dom.count('type="checkbox"') == 3 + 12


def test_a_cell_shows_its_details_with_evidence_links_and_advice(page, tmp_path):
    # #cell=ROW,COLUMN selects a cell as a click does (the URL a click leaves behind).
    dom = dump_dom(page, tmp_path / "chromium", "#cell=1,0")
    details = dom.split('<aside id="details"', 1)[1].split("</aside>", 1)[0]
    assert "<h2>claude-code</h2>" in details and "memory_reflect" in details
    assert "hidden · discovery" in details and "unreachable · call alias-only" in details
    assert (
        '<a href="https://github.com/anthropics/claude-code/issues/95504" rel="noopener noreferrer"'
        in details
    )
    assert "docs/design.md#flatten-the-root" in details
    assert "/tools/1/tool/inputSchema/anyOf" in details


def test_hostile_reasons_in_the_details_are_text(page, tmp_path):
    dom = dump_dom(page, tmp_path / "chromium", "#cell=2,0")
    details = dom.split('<aside id="details"', 1)[1].split("</aside>", 1)[0]
    assert "broken · call case|&lt;b&gt;1&lt;/b&gt;" in details
    assert "stderr: Traceback `boom` | &lt;/script&gt;" in details
    assert "<b>" not in details and "<script" not in details


class _Problems(HTMLParser):
    """The "problems to fix" list of a rendered page: (verdict, title) per item, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[list[str]] = []
        self._in: str | None = None
        self._section = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and attrs.get("id") == "problems":
            self._section = True
        elif self._section and tag == "li":
            self.items.append(["", ""])
        elif self._section and attrs.get("class") in ("verdict", "title"):
            self._in = attrs["class"]

    def handle_endtag(self, tag):
        if tag == "section":
            self._section = False
        elif tag in ("strong", "span"):
            self._in = None

    def handle_data(self, data):
        if self._in and self.items:
            self.items[-1][0 if self._in == "verdict" else 1] += data


def terminal_problems(stdout: str) -> list[tuple[str, str]]:
    """The terminal's problems list: (verdict, title), the title's wrapped lines joined."""
    items: list[tuple[str, str, int]] = []
    for line in stdout.splitlines():
        head = re.match(r"^( ?\d+\. )(\S+)( +)(.*)$", line)
        if head and not line.startswith(" " * 4):
            items.append((head.group(2), head.group(4), sum(len(g) for g in head.groups()[:3])))
        elif items and line.startswith(" " * items[-1][2]) and line[items[-1][2]] != " ":
            verdict, title, indent = items[-1]
            items[-1] = (verdict, f"{title} {line.strip()}", indent)
        elif items and not line.startswith(" "):
            break
    return [(verdict, " ".join(title.split())) for verdict, title, _ in items]


def test_the_html_report_opens_with_the_terminals_problems_list_and_hostile_names_stay_text(
    tmp_path,
):
    """The real CLI on a server with hostile tool names: the page (rendered in headless Chromium)
    lists the same root causes as the terminal, in the same order, worded the same."""
    page = tmp_path / "report.html"
    r = run_cli(
        "run", "--server", "faulty --mode hostile-names", "--report", f"html:{page}", timeout=300
    )
    assert r.returncode == 1, r.stderr[-2000:]  # names that break sessions in required clients
    terminal = terminal_problems(r.stdout)
    assert len(terminal) >= 5 and len({t for t in terminal}) == len(terminal), r.stdout[:3000]
    dom = dump_dom(page, tmp_path / "chromium")
    parser = _Problems()
    parser.feed(dom)
    # The terminal shows control characters as escapes (\x1b, \n); the page holds them as text.
    in_html = [(verdict, " ".join(safe(title).split())) for verdict, title in parser.items]
    assert in_html == terminal
    assert any(title.startswith("<script>alert(1)</script>: ") for _, title in in_html)
    section = dom.split('<section id="problems">', 1)[1].split("</section>", 1)[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section and "<script" not in section


def test_a_schema_nested_hundreds_of_levels_deep_is_drawn_not_a_traceback(tmp_path):
    """A server's schema 300 levels deep (600 of JSON) reads, and the JSON report writes it;
    the page's escaping walked it a frame per level and raised RecursionError (a traceback
    for ``report -f html`` and at the end of ``run --report html:``)."""
    from mcp_matrix.run.results import ResultsWriter
    from tests.conftest import run_cli_in_process

    schema: dict = {"type": "string"}
    for _ in range(300):
        schema = {"type": "object", "properties": {"a": schema}}
    events = [
        {"event": "run-started", "format": "mcp-matrix.results", "version": 3, "run_id": "r"},
        {
            "event": "discovery",
            "profile": "claude-code",
            "tool": "deep",
            "index": 0,
            "verdict": "visible",
            "model_name": "deep",
            "model_schema": schema,
            "findings": [],
        },
        {"event": "run-finished", "measured": True},
    ]
    path = tmp_path / "r.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        writer = ResultsWriter(handle)
        for event in events:
            writer(event)
    done = run_cli_in_process("report", str(path), "--format", "html")
    assert done.returncode == 0, done.stderr[-500:]
    assert "deep" in done.stdout and "Traceback" not in done.stderr
