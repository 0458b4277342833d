"""The job summary (``report -f summary``): the gate's verdict first, each root cause once, every
list cut with an "N more" line, and the page under its cap whatever the run's size."""

from __future__ import annotations

import io
import json
import re

from mcp_matrix.commands.report import write_report
from mcp_matrix.core.events import typed_events
from mcp_matrix.gate.checklist import evaluate
from mcp_matrix.gate.policy import Policy, load_policy
from mcp_matrix.report import summary as summary_module
from tests.conftest import run_cli
from tests.report import events as ev

GITHUB_LIMIT = 1024 * 1024  # GitHub drops a step's summary over 1 MiB
TOOLS, CLIENTS = 150, 36  # the measured server: 7.2 MiB of Markdown


def large_run(tools: int = TOOLS, clients: int = CLIENTS) -> list[dict]:
    """``tools`` tools through ``clients`` clients, every tool hidden in every client by its own
    array without items and every call broken: one finding per cell, 2 x tools x clients cells.
    Tool names carry Markdown, HTML and a line break, as a hostile server's would."""
    profiles = [
        {**ev.PROFILES[i % 3], "name": f"client-{i:02d}", "required_by_default": True}
        for i in range(clients)
    ]
    listed = [
        {
            "name": f"tool_{n:03d}|<b>x</b>\n::error::pwned",
            "description": "d",
            "inputSchema": {"type": "object", "properties": {"ids": {"type": "array"}}},
        }
        for n in range(tools)
    ]
    events = [ev._run_started(profiles=profiles), ev._snapshot(listed)]
    for p in profiles:
        for n, tool in enumerate(listed):
            finding = ev._finding(
                "array-without-items",
                "array at /properties/ids has no items; the client leaves the tool out",
                "/inputSchema/properties/ids",
                "array-items-required",
                [ev.EV_CURSOR],
            )
            events.append(ev._discovery(p["name"], n, "hidden", [finding], "code", tools=listed))
            events.append(
                ev._call(
                    p["name"],
                    tool["name"],
                    "basic",
                    "broken",
                    "timeout: no answer within 30.0s",
                    answer={"kind": "timeout", "message": "no answer within 30.0s"},
                )
            )
    events.append(
        {
            "event": "run-finished",
            "finished_at": "2026-11-30T10:09:00+00:00",
            "measured": True,
            "counts": {"hidden": tools * clients, "broken": tools * clients},
            "interrupted": False,
        }
    )
    return events


def render(events, fmt="summary", **options) -> str:
    buf = io.StringIO()
    write_report(events, fmt, buf, **options)
    return buf.getvalue()


def test_a_150_tool_36_client_run_fits_a_job_summary_with_the_verdict_first():
    events = typed_events(large_run())
    full = render(events, "md")
    text = render(events)
    assert len(full.encode("utf-8")) > GITHUB_LIMIT  # the Markdown report would be dropped
    assert len(text.encode("utf-8")) <= summary_module.MAX_BYTES < GITHUB_LIMIT // 8
    assert text.startswith("## mcp-matrix: release gate FAILED\n")
    failed = sum(not i.passed for i in evaluate(events, Policy()))
    shown = summary_module.MAX_ITEMS
    assert f"- … and {failed - shown} more failed gate items: see checklist.md" in text
    assert re.search(r"- … and \d+ more root causes: see matrix\.md or matrix\.html", text)
    assert "| ✖ broken | 5400 |" in text and "| – hidden | 5400 |" in text


def test_each_root_cause_is_listed_once():
    text = render(ev.full_run())
    causes = re.findall(r"^\d+\. \*\*", text, flags=re.MULTILINE)
    assert len(causes) == 10
    assert text.count("inputSchema has anyOf at the root") == 2  # its gate item and its cause


def test_a_server_that_sends_megabytes_still_gets_a_page_under_the_cap():
    events = large_run(tools=3, clients=2)
    for e in events:  # one enormous reason on every call
        if e["event"] == "call":
            e["reason"] = "x" * 2_000_000
    text = render(events)
    assert len(text.encode("utf-8")) <= summary_module.MAX_BYTES
    assert all(len(line) <= summary_module.MAX_LINE for line in text.splitlines())


def test_the_page_is_cut_at_its_cap_with_a_closing_note(monkeypatch):
    monkeypatch.setattr(summary_module, "MAX_BYTES", 4096)
    text = render(large_run(tools=20, clients=3))
    assert len(text.encode("utf-8")) <= 4096
    assert text.rstrip().endswith(
        "see the full reports (matrix.md, matrix.html, results.jsonl, checklist.md)."
    )
    assert "the summary was cut at 4 KiB" in text


def test_hostile_names_are_escaped():
    text = render(large_run(tools=2, clients=1))
    assert "<b>" not in text and "&lt;b&gt;" in text
    assert not re.search(
        r"^::", text, flags=re.MULTILINE
    )  # a name's line break never starts a line
    assert "\\|" in text


def test_the_verdict_is_the_one_check_gives_for_the_same_policy(tmp_path):
    """``check`` and ``report -f summary --policy`` through the real CLI, on a stream that fails
    by default and passes once the policy expects its failures."""
    events = [e for e in ev.full_run() if e["event"] != "profile-error"]
    results = ev.write_jsonl(events, tmp_path / "r.jsonl")
    verdicts = []
    expected = [
        {"client": c["profile"], "tool": c["tool"], "reason": "known"}
        | ({"case": c["case"]} if c["event"] == "call" else {})
        for c in events
        if c["event"] in ("discovery", "call") and c["verdict"] in ("hidden", "broken")
    ]
    policies = {
        "default": None,
        "lenient": {"fail_on": ["broken"], "expected_failures": expected},
    }
    for name, doc in policies.items():
        args = []
        if doc is not None:
            path = tmp_path / f"{name}.yaml"
            path.write_text(json.dumps(doc), encoding="utf-8")
            load_policy(path)  # a valid policy
            args = ["--policy", str(path)]
        check = run_cli("check", str(results), *args)
        page = run_cli("report", str(results), "-f", "summary", *args)
        assert page.returncode == 0, page.stderr
        verdict = "FAILED" if check.returncode else "passed"
        verdicts.append(verdict)
        assert page.stdout.startswith(f"## mcp-matrix: release gate {verdict}\n"), (
            name,
            check.stdout,
            page.stdout[:300],
        )
    assert verdicts == ["FAILED", "passed"]


def test_a_policy_with_evolution_items_says_the_gate_applies_them_too():
    policy = Policy(extra={"baseline": "released.json"})
    text = render(ev.full_run(), policy=policy)
    assert "also applies this policy's schema-evolution items" in text
    assert "schema-evolution" not in render(ev.full_run())
