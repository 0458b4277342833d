"""The bundled template's rehearsal (``matrix_servers.rehearsal``): the sessions it serves itself
before it forks, so each forked server starts with the work every one did first done."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import matrix_servers.warm as template_module
import pytest
from matrix_servers import rehearsal

# In a fresh interpreter: the template's imports, the rehearsal when asked, then one session of
# each era as a forked server would serve it; prints how many pydantic adapters and modules that
# session built (mcp_types builds an adapter on a method's first use, cached for the process).
AFTER = """
import sys
from matrix_servers import rehearsal, warm
from matrix_servers.memory.__main__ import main
from mcp_types import methods
warm.preload()
if sys.argv[1] == "rehearsed":
    warm.rehearse()
adapters, modules = methods._adapter.cache_info().misses, set(sys.modules)
for session in (rehearsal.handshake_session(), rehearsal.modern_session()):
    rehearsal.serve(main, session)
print(methods._adapter.cache_info().misses - adapters, sorted(set(sys.modules) - modules))
"""


def built_by_a_session(mode: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", AFTER, mode], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_after_the_rehearsal_a_session_builds_no_adapter_and_imports_nothing():
    """Before: each forked memory server built two or three of the SDK's pydantic adapters
    (226 over the default run's 90 sessions)."""
    assert built_by_a_session("rehearsed") == "0 []"
    assert built_by_a_session("not rehearsed") != "0 []"  # what it spares


def test_the_rehearsal_answers_every_request_of_both_sessions():
    from matrix_servers.memory.__main__ import main

    for session in (rehearsal.handshake_session(), rehearsal.modern_session()):
        answers = rehearsal.serve(main, session).decode().splitlines()
        assert len(answers) == sum("id" in m for m in session)


def test_a_rehearsal_that_leaves_a_thread_ends_the_template(monkeypatch, capfd):
    """Never fork from a template in a state a cold server never has: it exits, and its servers
    start cold."""
    leftover = threading.Event()

    def leaves_a_thread() -> None:
        threading.Thread(target=leftover.wait, args=(30,), daemon=True).start()
        time.sleep(0.05)

    monkeypatch.setattr(rehearsal, "rehearse", leaves_a_thread)
    try:
        with pytest.raises(SystemExit) as ended:
            template_module.rehearse()
    finally:
        leftover.set()
    assert ended.value.code == 3
    assert "rehearsing a session started a thread" in capfd.readouterr().err
