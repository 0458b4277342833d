"""Matrix items are named so pytest's own selection works on them: a client selects exactly, and a
failed item is rerun alone by ``--lf`` or by its node id on the command line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.plugin.inner import inner_pytest

# claude-code is a substring of claude-code-278 (7 of the 36 bundled names are of another)
NESTED = ("--mcp-server", "faulty --mode ok", "--mcp-client", "claude-code")
NESTED += ("--mcp-client", "claude-code-278", "--mcp-timeout-initialize", "60")


def collected(directory: Path, *args: str) -> list[str]:
    r = inner_pytest(directory, *NESTED, "--co", "-q", "-p", "no:cacheprovider", *args)
    assert r.returncode == 0, r.stdout[-3000:]
    return [line for line in r.stdout.splitlines() if line.startswith("mcp-matrix::")]


@pytest.mark.timeout(300)
def test_a_client_in_brackets_or_by_marker_selects_that_client_exactly(tmp_path):
    everything = collected(tmp_path)
    mine = [i for i in everything if "[claude-code]" in i]
    assert mine and len(everything) == 2 * len(mine) + 1  # both clients' cells and the policy
    assert collected(tmp_path, "-k", "[claude-code]") == mine
    assert collected(tmp_path, "-m", "mcp_matrix(client='claude-code')") == mine
    assert collected(tmp_path, "-m", "mcp_client_claude_code") == mine


def outcome_line(out: str) -> str:
    return out.strip().splitlines()[-1]


@pytest.mark.timeout(400)
def test_a_failed_item_reruns_alone_by_lf_and_by_its_node_id(tmp_path):
    # claude-code-278 (Claude Code 2.1.144 - 2.1.278) hides a tool whose schema has a root anyOf.
    args = ("--mcp-server", "memory --schema anyof", "--mcp-client", "claude-code-278")
    args += ("--mcp-timeout-initialize", "60", "--mcp-results", "r.jsonl")
    first = inner_pytest(tmp_path, *args)
    failed = re.findall(r"^FAILED (\S+)", first.stdout, re.MULTILINE)
    assert failed == ["mcp-matrix::memory_reflect[claude-code-278]"], first.stdout[-3000:]
    assert re.search(r"1 failed, \d+ passed", outcome_line(first.stdout))

    again = inner_pytest(tmp_path, *args, "--lf")  # the cache the first session left
    assert re.fullmatch(r"=+ 1 failed, \d+ deselected in .*", outcome_line(again.stdout)), (
        again.stdout[-3000:]
    )

    by_id = inner_pytest(tmp_path, *args, "-p", "no:cacheprovider", failed[0])
    assert "collected 1 item" in by_id.stdout, by_id.stdout[-3000:]
    assert re.fullmatch(r"=+ 1 failed in .*", outcome_line(by_id.stdout)), by_id.stdout[-3000:]
    assert re.findall(r"^FAILED (\S+)", by_id.stdout, re.MULTILINE) == failed
