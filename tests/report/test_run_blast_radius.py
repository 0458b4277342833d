"""A list one tool breaks is two root causes when a library raises it (blast radius ``run``: the
program's whole agent run fails, ``list-failure-raises``) and when an application goes on without
the server (blast radius ``server``), each with its own words and advice. Offline: the bundled
no-type probe set through the real python-sdk and gemini-cli profiles."""

from __future__ import annotations

from mcp_matrix.calibrate import probe
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.report import advice
from mcp_matrix.report.cause_words import cause_where
from mcp_matrix.report.triage import build_triage
from mcp_matrix.simulate.discovery import client_view, initial_state


def _causes() -> dict[str, object]:
    profiles = load_profiles()
    tools = [(0, t) for t in probe.PROBE_SETS["no-type"].tools]
    views = [
        client_view(profiles[name], initial_state(tools, "probe"))
        for name in ("python-sdk", "gemini-cli")
    ]
    causes = build_triage([], views)
    assert [c.clients for c in causes] == [["python-sdk"], ["gemini-cli"]]
    return {c.clients[0]: c for c in causes}


def test_a_library_raising_the_list_is_its_own_cause_with_the_run_as_blast_radius():
    causes = _causes()
    library, application = causes["python-sdk"], causes["gemini-cli"]
    assert (library.blast_radius, application.blast_radius) == ("run", "server")
    assert "the whole agent run, every other server attached to it included" in cause_where(library)
    assert "blast radius: server" in cause_where(application)


def test_the_library_s_advice_says_the_run_fails_and_the_application_s_does_not():
    causes = _causes()
    assert causes["python-sdk"].fix == advice.FIX_RAISED_LIST
    assert causes["gemini-cli"].fix == advice.FIX_CULPRIT
