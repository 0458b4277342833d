"""The command line of a process leaves what the command built out of the collector's last walks:
the interpreter's collections at exit walked all of it (0.8-1.0 s of CPU after a large replay).
A caller that passes argv (a test, the API) collects as before."""

from __future__ import annotations

import gc
import json
import sys

from mcp_matrix.commands.cli import main


def _snapshot(tmp_path):
    path = tmp_path / "s.json"
    tool = {"name": "find", "inputSchema": {"type": "object"}}
    doc = {"format": "mcp-matrix.snapshot", "version": 2, "tools": [{"page": 0, "tool": tool}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_the_process_command_line_freezes_what_it_built_at_its_end(monkeypatch, tmp_path):
    """Fails before: nothing was frozen, so the exit's collections walked every object."""
    monkeypatch.setattr(
        sys, "argv", ["mcp-matrix", "discover", _snapshot(tmp_path), "--client", "codex"]
    )
    gc.unfreeze()
    try:
        assert main() == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_caller_passing_argv_collects_as_before(tmp_path):
    gc.unfreeze()
    assert main(["discover", _snapshot(tmp_path), "--client", "codex"]) == 0
    assert gc.get_freeze_count() == 0
