"""The pool starts the profiles that open the most sessions first (mcp_matrix.run.profile_calls.longest_first)."""

from __future__ import annotations

from mcp_matrix import api
from mcp_matrix.run.profile_calls import longest_first, sessions_opened


def test_profiles_that_open_a_session_per_call_are_started_first_then_the_rest_in_run_order():
    profiles = api.profiles()
    order = [profiles[i].name for i in longest_first(profiles, 19)]
    per_call = [p.name for p in profiles if sessions_opened(p, 19) == 19]
    # observed: langchain-mcp-adapters and llm-tools-mcp open a session per call
    assert per_call == ["langchain", "langchain-anthropic", "langchain-google", "llm"]
    assert order[: len(per_call)] == per_call
    assert order[len(per_call) :] == [p.name for p in profiles if p.name not in per_call]


def test_with_one_call_every_profile_opens_one_session_and_the_run_order_is_kept():
    profiles = api.profiles()
    assert longest_first(profiles, 1) == list(range(len(profiles)))
