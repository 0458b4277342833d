"""GitHub Actions annotations (``report -f github``): an ``::error`` per failed gate item, a
``::warning`` per other problem, escaped by the workflow-command rules so that no tool name can
start a command of its own, and within GitHub's 10 shown per kind and step."""

from __future__ import annotations

import io
import re

from mcp_matrix.commands.report import write_report
from mcp_matrix.core.events import typed_events
from mcp_matrix.gate.checklist import evaluate
from mcp_matrix.gate.policy import Policy
from mcp_matrix.report.github import escape_data, escape_property
from tests.conftest import run_cli
from tests.report import events as ev
from tests.report.test_summary import large_run

# A workflow command as the runner parses it: ::name key=value,key=value::message
COMMAND = re.compile(r"^::(error|warning) (?:file=([^:,]*),line=(\d+),)?title=([^:,]*)::(.*)$")


def unescape(text: str) -> str:
    for code, ch in (("%3A", ":"), ("%2C", ","), ("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        text = text.replace(code, ch)
    return text


def annotations(events, **options) -> list[tuple[str, str, str]]:
    """(kind, title, message) of each line, each checked to be one of our commands."""
    return [(kind, title, message) for kind, _, title, message in placed(events, **options)]


def placed(events, **options) -> list[tuple[str, tuple | None, str, str]]:
    buf = io.StringIO()
    write_report(events, "github", buf, **options)
    lines = buf.getvalue().splitlines()
    parsed = [COMMAND.match(line) for line in lines]
    assert all(parsed), [line for line, m in zip(lines, parsed) if not m]
    return [
        (
            m.group(1),
            (unescape(m.group(2)), int(m.group(3))) if m.group(2) else None,
            unescape(m.group(4)),
            unescape(m.group(5)),
        )
        for m in parsed
    ]


def test_each_failed_gate_item_is_an_error_and_other_problems_are_warnings():
    events = typed_events(ev.full_run())
    failed = [i for i in evaluate(events, Policy()) if not i.passed]
    got = annotations(events)
    errors = [(t, m) for kind, t, m in got if kind == "error"]
    assert errors == [
        (f"mcp-matrix gate: {i.name}", i.evidence.replace("\x07", "\\x07")) for i in failed
    ]
    warnings = [t for kind, t, _ in got if kind == "warning"]
    assert warnings == ["mcp-matrix: failed", "mcp-matrix: loud", "mcp-matrix: degraded"]


def test_escaping_follows_the_workflow_command_rules():
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("bell\x07 esc\x1b[31m") == "bell\\x07 esc\\x1b[31m"


def test_a_hostile_tool_name_never_starts_a_command_of_its_own():
    events = large_run(tools=3, clients=2)  # names hold "\n::error::pwned"
    for e in events:
        if e["event"] == "call":
            e["reason"] = "x\r\n::stop-commands::token\n::add-mask::y %0A"
    got = annotations(events)  # every line parsed as one of ours
    assert any("\n::error::pwned" in title for _, title, _ in got)
    assert any("\r\n::stop-commands::token" in message for *_, message in got)
    assert any(message.endswith("%0A") for *_, message in got)  # a literal %0A stays literal


def test_a_large_run_gives_at_most_ten_of_each_kind_with_a_count_of_the_rest():
    got = annotations(large_run(tools=40, clients=5))
    errors = [m for kind, _, m in got if kind == "error"]
    assert len(errors) == 10
    assert re.fullmatch(
        r"\d+ more failed gate items: see the job summary and checklist\.md", errors[-1]
    )
    assert sum(kind == "warning" for kind, *_ in got) <= 10


def test_the_command_line_prints_the_annotations(results_file):
    done = run_cli("report", str(results_file), "-f", "github")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("::error title=mcp-matrix gate%3A ")


def test_with_the_tools_source_an_annotation_sits_on_the_line_that_names_its_tool(
    tmp_path, monkeypatch
):
    from tests.report.test_sarif import TOOLS_SOURCE

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.py").write_text(TOOLS_SOURCE, encoding="utf-8")
    got = placed(ev.full_run(), sarif_source="tools.py")
    lines = TOOLS_SOURCE.splitlines()
    by_title = {title: where for _, where, title, _ in got}
    where = by_title["mcp-matrix gate: claude-code sees memory_reflect"]
    assert where[0] == "tools.py" and lines[where[1] - 1] == '@server.tool(name="memory_reflect")'
    file, line = by_title["mcp-matrix gate: cursor sees list_items"]
    assert file == "tools.py"
    assert lines[line - 1] == "def list_items(ids): ..."
    assert by_title["mcp-matrix gate: every profile was measured"] is None  # about no tool
