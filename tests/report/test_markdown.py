"""The Markdown report: untrusted text renders as text, and a table cell stays one cell."""

from __future__ import annotations

import io
import re

from mcp_matrix.commands.report import write_report
from mcp_matrix.report.markdown import md, md_source
from tests.report import events as ev


def markdown(events) -> str:
    buf = io.StringIO()
    write_report(events, "md", buf)
    return buf.getvalue()


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_every_row_of_the_summary_table_has_one_cell_per_client(full_events):
    text = markdown(full_events)
    table = [line for line in text.splitlines() if line.startswith("|")]
    header = table[0]
    assert header == "| tool | claude-code | cursor | stale-cache |"
    assert len(table) == 2 + 6  # header, alignment, one row per tool
    for line in table:
        assert unescaped_pipes(line) == unescaped_pipes(header), line


def test_a_hostile_tool_name_is_escaped_text_on_one_line(full_events):
    text = markdown(full_events)
    assert (
        "<script>" not in text
        and "</script>" not in text
        and "<img" not in text
        and "<b>" not in text
    )
    assert r"&lt;script&gt;alert(1)&lt;/script&gt;\|x\\nnew" in text
    assert "\x07" not in text
    # No line of the report starts inside the hostile name (the newline did not break out).
    assert not any(line.startswith("new") for line in text.splitlines())


def test_backticks_cannot_open_a_code_span():
    assert md("a `b` c") == r"a \`b\` c"
    assert md("```\nfenced\n```") == r"\`\`\` fenced \`\`\`"


def test_control_characters_and_bidi_overrides_are_shown_as_escapes():
    assert md("bell\x07 rlo\u202e", name=True) == r"bell\\x07 rlo\\u202e"
    assert md("two\nlines") == "two lines"


def test_identifiers_keep_their_underscores_readable():
    assert md("memory_store") == "memory_store"
    assert md("_private_") == r"\_private\_"


def test_evidence_urls_are_links_and_other_sources_are_text():
    assert (
        md_source("https://github.com/a/b/issues/1")
        == "[https://github.com/a/b/issues/1](https://github.com/a/b/issues/1)"
    )
    assert (
        md_source("https://e.com/x_(y)?a=<1>")
        == r"[https://e.com/x\_(y)?a=&lt;1&gt;](https://e.com/x_%28y%29?a=%3C1%3E)"
    )
    assert md_source("javascript:alert(1)") == "javascript:alert(1)"
    assert md_source("src/client.ts:10") == "src/client.ts:10"


def test_each_client_section_lists_what_why_evidence_and_fix_for_every_finding(full_events):
    text = markdown(full_events)
    section = text.split("## cursor\n", 1)[1].split("\n## ", 1)[0]
    block = section.split(
        "### ≠ memory_store :: store-basic: silent-corruption (release-failing)", 1
    )[1].split("###")[0]
    assert "**What happens**: success reported, but values were changed" in block
    assert "**Why**: the client sent /tags stringified" in block
    assert "**Behaviour**: stringify-arguments (weakest evidence: issue)" in block
    assert (
        "[https://forum.cursor.com/t/arrays-sent-as-strings/1234](https://forum.cursor.com/t/arrays-sent-as-strings/1234)"
        in block
    )
    assert "**Fix**: Validate arguments strictly" in block and "never coerce silently" in block
    # Every non-intact, non-visible cell of the client is listed; nothing intact is.
    assert section.count("### ") == 4
    assert "intact" not in re.findall(r"^### .*$", section, re.MULTILINE)[0]


def test_calls_that_differ_only_in_their_case_are_listed_once_with_every_case():
    events = ev.full_run()
    extra = dict(
        next(e for e in events if e.get("verdict") == "unreachable"), case="canonical-only"
    )
    events.insert(
        events.index(next(e for e in events if e.get("verdict") == "unreachable")) + 1, extra
    )
    text = markdown(events)
    assert "### · memory_reflect :: alias-only, canonical-only (2 calls): unreachable" in text


def test_an_interrupted_run_says_so():
    assert "unfinished (no run-finished event)" in markdown(ev.interrupted_run())


def test_a_client_with_nothing_to_report_says_so():
    events = [
        e for e in ev.full_run() if e.get("profile") != "stale-cache" or e["event"] == "discovery"
    ]
    text = markdown(events)
    assert (
        "## stale-cache\n\na caching client · any · weakest evidence: assumed\n\nEvery tool is visible"
        in text
    )
