"""The HTML report of a large server: paged, folded, details on click, each text stored once.

The page is built from a generated snapshot (``benchmarks/synthetic.py``, as the benchmarks
do): plain tools every client sees, mixed with synthetic ones that a client degrades, through
five clients; then opened in headless Chromium.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from matrix.behaviours import registry
from matrix.discovery import discover_all, discovery_events
from matrix.events import FORMAT
from matrix.profiles.loader import load_profiles, select_profiles
from matrix.report.html import PAGE_ROWS
from matrix.report.json_report import build_report
from matrix.report.writers import write_report
from matrix.snapshot import Snapshot
from tests.report.conftest import dump_dom

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
