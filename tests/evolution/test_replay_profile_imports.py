"""An offline replay loads profiles without the live-run machinery.

``commands.common.profiles_from`` went through ``mcp_matrix.api``, which imports the gate,
the policy, ``run.matrix`` and ``concurrent.futures`` (~37 ms of every replay, diff and
discover process) for a profile loader. The real CLI, as users run it; asserted on the
modules imported, never on times."""

from __future__ import annotations

from tests.evolution.test_replay_imports import files
from tests.test_startup_imports import among, imported


def test_an_offline_replay_imports_no_live_run_machinery(tmp_path):
    names = imported("replay", *files(tmp_path, pattern=False), "--json", "--fail-on", "none")
    assert "mcp_matrix.evolution.replay" in names
    assert "mcp_matrix.profiles.loader" in names
    # fails before: ['mcp_matrix.api', 'mcp_matrix.gate', 'mcp_matrix.run.matrix']
    assert among(names, ("mcp_matrix.api", "mcp_matrix.gate", "mcp_matrix.run.matrix")) == []
