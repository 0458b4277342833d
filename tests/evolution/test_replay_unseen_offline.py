"""Offline, call behaviours that change only what the modelled server does not read (``_meta``,
a session of its own) or what replay does not report (the rule's name on the evidence) do not
set a profile apart: profiles that differ only by them are judged once for every call, and each
still gets what it gets alone."""

from __future__ import annotations

import uuid
from dataclasses import fields, replace

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.core.model import CallContext, CallPlan
from mcp_matrix.evolution.replay_segment import UNSEEN_OFFLINE
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.profiles.model import BehaviourUse
from tests.evolution.test_replay_offline import counted_judgements, offline

UNREAD = {"meta", "new_session", "applied"}  # SchemaServer reads none; replay reports none
UNSEEN = ("add-meta", "new-session-per-call", "send-as-written")


def test_the_unseen_behaviours_are_these():
    assert frozenset(UNSEEN) == UNSEEN_OFFLINE


@pytest.mark.parametrize("name", UNSEEN)
def test_each_unseen_behaviour_changes_only_what_offline_replay_does_not_read(name):
    fn = registry.load_all()[name].fn
    arguments = {"a": 1, "b": {"c": "12", "d": [1, 2]}, "n": 2**60}
    plan = CallPlan(tool="t", arguments=arguments)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    ctx = CallContext(tool="t", held_schema=schema, held_tool={"name": "t"}, stale=False)
    after = fn(plan, ctx)
    changed = {f.name for f in fields(CallPlan) if getattr(after, f.name) != getattr(plan, f.name)}
    assert changed <= UNREAD, changed
    assert after.arguments is arguments  # the very arguments: nothing is mutated


def test_profiles_that_differ_only_by_unseen_behaviours_are_judged_once(monkeypatch):
    """Fails before: each profile had a kind of its own, so each decided every call."""
    codex = load_profiles()["codex"]
    assert not codex.call
    others = [replace(codex, name=f"with-{n}", call=(BehaviourUse(n, {}, ()),)) for n in UNSEEN]
    profiles = [codex, *others]
    judged = counted_judgements(monkeypatch)
    doc = offline(profiles, "retry.jsonl")
    assert doc["results"][0]["calls"] > 0
    assert set(judged) == {codex.name}  # the first profile judges; the others take its outcome
    monkeypatch.undo()
    assert [offline([p], "retry.jsonl")["results"][0] for p in profiles] == doc["results"]


def test_offline_planning_runs_no_unseen_behaviour(monkeypatch):
    """Fails before: gemini-cli's add-meta made a _meta and a uuid4 for every call offline."""
    gemini = load_profiles()["gemini-cli"]
    assert "add-meta" in [u.name for u in gemini.call]
    alone = offline([gemini], "transcript.jsonl")["results"]
    made = []
    real = uuid.uuid4
    monkeypatch.setattr(uuid, "uuid4", lambda: made.append(1) or real())
    assert offline([gemini], "transcript.jsonl")["results"] == alone
    assert alone[0]["calls"] > 0 and made == []
