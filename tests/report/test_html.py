"""The HTML report: one offline file; opened in headless Chromium, its grid renders and
hostile text stays text."""

from __future__ import annotations

import html as html_lib
import io
import json
import re
from pathlib import Path

import pytest

from matrix.commands.report import write_report
from matrix.report.html import script_json
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
    assert "decision record 014" in details
    assert "/tools/1/tool/inputSchema/anyOf" in details


def test_hostile_reasons_in_the_details_are_text(page, tmp_path):
    dom = dump_dom(page, tmp_path / "chromium", "#cell=2,0")
    details = dom.split('<aside id="details"', 1)[1].split("</aside>", 1)[0]
    assert "broken · call case|&lt;b&gt;1&lt;/b&gt;" in details
    assert "stderr: Traceback `boom` | &lt;/script&gt;" in details
    assert "<b>" not in details and "<script" not in details
