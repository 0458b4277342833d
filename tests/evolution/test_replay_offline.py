"""Offline ``replay`` does each piece of work once: the calls file is read once for every profile,
a call is judged once for the profiles that cannot tell it apart, and a schema is compiled once
whatever dialect asks for it. Counted, never timed; and the shared outcomes are the very ones each
profile gets when it is replayed alone."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import matrix_servers.billing
import pytest
from matrix_servers.billing.schemas import tool_definitions

import mcp_matrix.evolution.replay as replay_module
from mcp_matrix.behaviours import validation
from mcp_matrix.evolution import replay_prepare, replay_segment
from mcp_matrix.evolution.calls_file import calls_file
from mcp_matrix.evolution.replay import ReplayConfig, replay
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.simulate import calls as calls_module
from mcp_matrix.targets.snapshot import Snapshot

CORPORA = Path(matrix_servers.billing.__file__).parent / "corpora"


def v3() -> Snapshot:
    tools = [{"page": 0, "tool": t} for t in tool_definitions("3")]
    return Snapshot({"tools": tools}, source="billing v3 definitions")


def runnable():
    return [p for p in load_profiles().values() if not p.abstract]


def offline(profiles, *names: str) -> dict:
    files = [calls_file(CORPORA / n) for n in names]
    return replay(ReplayConfig(files=files, profiles=profiles, snapshot=v3())).to_json([])


def counted_compiles(monkeypatch) -> list:
    """The schemas fastjsonschema compiles from now on."""
    compiled = []
    real = validation._fast_compile_new

    def counting(schema):
        compiled.append(schema)
        return real(schema)

    monkeypatch.setattr(validation, "_fast_compile_new", counting)
    return compiled


def counted_behaviours(monkeypatch) -> Counter:
    """The call behaviours planning applies from now on, by function name."""
    applied: Counter = Counter()
    real = calls_module._steps

    def counted(fn):
        def counting(*args, **kw):
            applied[fn.__name__] += 1
            return fn(*args, **kw)

        return counting

    def steps(profile):
        steps, choices = real(profile)
        return tuple((counted(fn), *rest) for fn, *rest in steps), choices

    monkeypatch.setattr(calls_module, "_steps", steps)
    return applied


def counted_judgements(monkeypatch) -> list:
    """The profiles whose segment judges a call from now on (``ReplaySegment._compute``)."""
    judged = []
    real = replay_segment.ReplaySegment._compute

    def counting(self, call, *rest):
        judged.append(self.profile.name)
        return real(self, call, *rest)

    monkeypatch.setattr(replay_segment.ReplaySegment, "_compute", counting)
    return judged


def counted_decisions(monkeypatch) -> list:
    """The profiles ``decide`` is called for from now on (by the segments and by prepare)."""
    decided = []
    real = replay_segment.decide

    def counting(profile, *rest, **kw):
        decided.append(profile.name)
        return real(profile, *rest, **kw)

    monkeypatch.setattr(replay_segment, "decide", counting)
    monkeypatch.setattr(replay_prepare, "decide", counting)
    return decided


def test_the_calls_file_is_read_once_for_every_profile(monkeypatch):
    opened = []
    real = replay_module.iter_calls

    def counting(source):
        opened.append(source.name)
        return real(source)

    monkeypatch.setattr(replay_module, "iter_calls", counting)
    profiles = runnable()[:5]
    doc = offline(profiles, "retry.jsonl", "transcript.jsonl")
    assert len(doc["results"]) == 2 * len(profiles)
    assert len(opened) == 2  # once a file, not once a (file, profile)


def test_a_call_is_judged_once_for_the_profiles_without_call_behaviours(monkeypatch):
    plain = [p for p in runnable() if not p.call][:4]
    assert len(plain) == 4
    decided = counted_decisions(monkeypatch)
    doc = offline(plain, "retry.jsonl")
    calls = doc["results"][0]["calls"]
    assert calls > 0
    assert len(decided) <= calls  # one profile decides; the other three take its outcome
    assert set(decided) == {plain[0].name}


def test_profiles_replayed_together_get_what_each_gets_alone():
    """Shared outcomes change nothing: every profile's counts, examples and notes are the same
    as in a replay of that profile alone (where nothing can be shared)."""
    profiles = runnable()
    files = ("retry.jsonl", "transcript.jsonl", "live.jsonl")
    together = offline(profiles, *files)["results"]
    for p in profiles:
        alone = offline([p], *files)["results"]
        assert [r for r in together if r["profile"] == p.name] == alone, p.name


def test_a_schema_is_compiled_once_for_every_dialect_that_checks_it(monkeypatch):
    compiled = counted_compiles(monkeypatch)
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 7919}}}
    # 7920.0: an integer to every validator, but one the plain-schema judge leaves to them
    validation.validate(schema, {"n": 7920.0}, "2020-12")  # the server's side: the draft-07 screen
    validation.validate(dict(schema), {"n": 7920.0}, "draft-07")  # a client, the same content
    assert len(compiled) == 1


def test_a_schema_widened_by_the_client_is_one_schema_for_every_call():
    """Gemini CLI adds wait_for_previous to the schema it checks: that widened schema is made
    once per held schema, so it is put into words once, not once per call (each call's new
    dict was a canonical text and an entry kept in the fingerprint cache)."""
    from mcp_matrix.behaviours import rewrite
    from mcp_matrix.behaviours.calls import client_validate
    from mcp_matrix.core.model import CallContext, CallPlan

    schema = {"type": "object", "properties": {"w": {"type": "integer", "minimum": 6007}}}
    ctx = CallContext(tool="t", held_schema=schema, held_tool={"inputSchema": schema})
    before = len(rewrite._FINGERPRINTS)
    for n in range(50):
        plan = CallPlan(tool="t", arguments={"w": 6007 + n, "wait_for_previous": True})
        assert client_validate(plan, ctx, extra_properties=["wait_for_previous"]).refused is None
    assert len(rewrite._FINGERPRINTS) - before <= 2  # the held schema and its widened copy


def test_a_call_is_planned_once_for_a_behaviour_that_reads_nothing_held(monkeypatch):
    """Continue and the OpenAI Agents SDK (JS) both only round big integers, which never reads
    the held schema; their held schemas differ (discovery), yet each call is planned once."""
    from mcp_matrix.behaviours.rewrite import fingerprint
    from mcp_matrix.run.discovery import discover_all

    loaded = load_profiles()
    pair = [loaded["continue"], loaded["openai-agents-js"]]
    assert [[u.name for u in p.call] for p in pair] == [["round-big-integers"]] * 2
    views = discover_all(v3(), pair)
    held = [{fingerprint(t.model_schema) for t in v.tools} for v in views]
    assert held[0] != held[1]  # what each holds differs: before, that was one plan each
    applied = counted_behaviours(monkeypatch)
    doc = offline(pair, "retry.jsonl")
    calls = doc["results"][0]["calls"]
    assert calls > 0
    assert set(applied) == {"round_big_integers"}
    assert 0 < applied["round_big_integers"] <= calls
    monkeypatch.undo()
    assert [offline([p], "retry.jsonl")["results"][0] for p in pair] == doc["results"]


def test_a_call_every_group_leaves_alone_is_judged_once_and_each_behaviour_applied_once():
    """Four groups of profiles (their call behaviours differ) that all send the billing retry
    calls as written: round-big-integers, which three of them have, runs once a call, not
    once a group, and the call is judged once for the four (``ReplaySegment._judge``'s
    ``written``). Fails before: each group planned and judged every call (rbi 3x, 4x)."""
    loaded = load_profiles()
    four = [loaded[n] for n in ("continue", "cline", "cline-cli", "codex")]
    assert [[u.name for u in p.call] for p in four] == [
        ["round-big-integers"],
        ["round-big-integers", "default-arguments"],
        ["parse-stringified-arguments", "round-big-integers", "default-arguments"],
        [],
    ]
    with pytest.MonkeyPatch.context() as monkeypatch:
        applied = counted_behaviours(monkeypatch)
        judged = counted_judgements(monkeypatch)
        doc = offline(four, "retry.jsonl")
    calls = doc["results"][0]["calls"]
    assert calls == 20
    assert applied["round_big_integers"] == calls
    assert applied["default_arguments"] == calls
    assert set(judged) == {"continue"} and len(judged) <= calls  # a repeated call: remembered
    assert [offline([p], "retry.jsonl")["results"][0] for p in four] == doc["results"]
    examples = [e for r in doc["results"] for kept in r["examples"].values() for e in kept]
    assert examples and all(e["mutations"] == [] for e in examples)  # sent as written


def test_a_widened_schema_is_not_compiled_for_calls_without_the_added_key(monkeypatch):
    """Gemini CLI checks calls against the server's schema plus wait_for_previous: a call
    without that key reads the same against the server's schema, errors included; only a call
    holding the key needs the widened one. Both are plain: their refusals (fastjsonschema's
    first error) are written without compiling either (plain_errors.fast_first_error)."""
    from mcp_matrix.behaviours.calls import client_validate
    from mcp_matrix.core.model import CallContext, CallPlan

    compiled = counted_compiles(monkeypatch)
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 4441}},
        "required": ["n"],
        "additionalProperties": False,
    }
    ctx = CallContext(tool="t", held_schema=schema, held_tool={"inputSchema": schema})
    wide = {"extra_properties": ["wait_for_previous"], "against": "server"}
    for arguments in ({"n": 4441}, {"n": 3}, {"n": "x"}, {"m": 1}, {}):
        plan = CallPlan(tool="t", arguments=arguments)
        refused = client_validate(plan, ctx, **wide).refused
        unwidened = client_validate(plan, ctx, against="server").refused
        assert refused == unwidened, arguments
    assert compiled == []
    plan = CallPlan(tool="t", arguments={"n": 4441, "wait_for_previous": True})
    assert client_validate(plan, ctx, **wide).refused is None
    assert client_validate(plan, ctx, against="server").refused is not None
    assert compiled == []  # the widened schema is plain: a valid call of it compiles nothing


def test_the_metaschema_checks_each_distinct_subschema_once(monkeypatch):
    """Building a 2020-12 validator checks the schema against the metaschema; a subschema seen
    before (tool schemas repeat their property schemas) is not walked again, and the answer is
    jsonschema's own for valid and invalid schemas alike."""
    import jsonschema
    from jsonschema import _keywords

    walked = []
    real = _keywords.dynamicRef

    def counting(validator, ref, instance, schema):
        walked.append(instance)
        return real(validator, ref, instance, schema)

    monkeypatch.setattr(_keywords, "dynamicRef", counting)
    shared = {"type": "string", "description": "a name seen in 3257 tools"}
    first = {"type": "object", "properties": {"a": shared, "b": {"type": "integer"}}}
    second = {"type": "object", "properties": {"c": dict(shared)}}
    validation._check_schema(first, jsonschema.Draft202012Validator)
    before = len(walked)
    validation._check_schema(second, jsonschema.Draft202012Validator)
    assert shared not in walked[before:]
    cases = [first, second, {"type": "strin"}, {"properties": {"a": {"minimum": "x"}}}]
    cases += [{"properties": {"a": shared, "b": {"type": 3}}}, {"items": {"pattern": "("}}, True]
    for schema in cases:
        ours = theirs = True
        try:
            validation._check_schema(schema, jsonschema.Draft202012Validator)
        except jsonschema.SchemaError:
            ours = False
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError:
            theirs = False
        assert ours == theirs, schema


def test_behaviours_read_a_call_or_a_schema_once_for_every_profile(monkeypatch):
    """round-big-integers scans one call's arguments once for the profiles that round them
    (each gets the same arguments object in turn), and smolagents builds a tool's inputs once
    per held schema, not once per call."""
    from mcp_matrix.behaviours import coercion, smolagents

    scans, built = [], []
    real_scan, real_build = coercion._unsafe, smolagents._adapted

    def scanning(value, depth=0):
        if depth == 0:
            scans.append(value)
        return real_scan(value, depth)

    def building(schema):
        built.append(schema)
        return real_build(schema)

    monkeypatch.setattr(coercion, "_unsafe", scanning)
    monkeypatch.setattr(smolagents, "_adapted", building)
    smolagents._INPUTS.clear()
    rounding = [p for p in runnable() if "round-big-integers" in [u.name for u in p.call]]
    assert len(rounding) >= 4
    loaded = load_profiles()
    doc = offline([*rounding, loaded["smolagents"]], "retry.jsonl")
    calls = doc["results"][0]["calls"]
    assert 0 < len(scans) <= calls
    tools = len(tool_definitions("3"))
    assert calls > 2 * tools
    assert 0 < len(built) <= 2 * tools  # discovery's gate once a tool, then the calls' checks


def test_a_call_sent_alike_is_decided_once_whatever_behaviours_made_it(monkeypatch):
    """A client that only adds ``_meta`` sends the arguments as Continue does (its rounding
    changes nothing here): the modelled server reads neither ``_meta`` nor the behaviours'
    names, so the call is decided once for both, and each still gets what it gets alone."""
    from dataclasses import replace as copy

    from mcp_matrix.profiles.model import BehaviourUse

    cont = load_profiles()["continue"]
    meta = copy(cont, name="meta-only", call=(BehaviourUse("add-meta", {}, ()),))
    decided = counted_decisions(monkeypatch)
    doc = offline([cont, meta], "retry.jsonl")
    calls = doc["results"][0]["calls"]
    assert calls > 0 and 0 < len(decided) <= calls
    monkeypatch.undo()
    assert [offline([p], "retry.jsonl")["results"][0] for p in (cont, meta)] == doc["results"]


def test_an_offline_replay_holds_off_full_collections_and_sets_the_collector_back(monkeypatch):
    """Full collections walked the replay's growing heap (4.3 of 16 s at 10,000 calls x 52
    profiles): while the calls are played only the young generations are collected, and
    rarely; what discovery built is set apart from the collector before the calls are played
    (``gc.freeze``: no collection walks it again)."""
    import gc

    seen = []
    real = replay_module._play_offline

    def playing(*args, **kw):
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return real(*args, **kw)

    monkeypatch.setattr(replay_module, "_play_offline", playing)
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    doc = offline(runnable()[:2], "retry.jsonl")
    assert doc["results"][0]["calls"] > 0
    young = max(before[0], replay_module.YOUNG_COLLECTIONS_EVERY)
    assert [t for t, _ in seen] == [(young, before[1], replay_module.FULL_COLLECTIONS_HELD)]
    assert seen[0][1] > frozen  # the held lists were frozen before the first call
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == frozen  # given back: this process collects them as before


def test_an_offline_replay_without_events_counts_its_calls_in_bulk(monkeypatch):
    """Offline, with no event to emit, a call adds the same counters to every tally of its
    group: they are summed once a file, not counted call by call and profile by profile (fails
    before: one _count per call and profile); the counts are those of a replay with events."""
    counted = []
    real = replay_segment.ReplaySegment._count

    def counting(self, *args):
        counted.append(self.profile.name)
        return real(self, *args)

    monkeypatch.setattr(replay_segment.ReplaySegment, "_count", counting)
    profiles = runnable()[:6]
    bulk = offline(profiles, "retry.jsonl", "live.jsonl")["results"]
    assert counted == []
    files = [calls_file(CORPORA / n) for n in ("retry.jsonl", "live.jsonl")]
    config = ReplayConfig(files=files, profiles=profiles, snapshot=v3(), emit=lambda _: None)
    assert replay(config).to_json([])["results"] == bulk
    assert counted  # with events, call by call


def test_counted_in_bulk_a_profile_meets_its_counters_in_the_order_of_the_calls():
    """The bulk counters are summed per (the tool's groups, what each counts) and given to each
    profile at the end of the file: every counter comes out in the order it does when counted
    call by call (the report's JSON, compared as text)."""
    import json

    profiles = runnable()
    names = ("retry.jsonl", "live.jsonl")
    bulk = offline(profiles, *names)["results"]
    files = [calls_file(CORPORA / n) for n in names]
    config = ReplayConfig(files=files, profiles=profiles, snapshot=v3(), emit=lambda _: None)
    by_call = replay(config).to_json([])["results"]
    assert json.dumps(bulk) == json.dumps(by_call)


def test_a_calls_arguments_are_put_into_words_once_for_the_memo_and_the_modelled_server(
    monkeypatch,
):
    """Offline, a call's arguments were put into words for the shared memo and again by the
    modelled server for its own (and again for each group's wire): now once an object."""
    from mcp_matrix.evolution.calls_file import RecordedCall
    from mcp_matrix.evolution.effects import schema_server
    from mcp_matrix.evolution.replay_shared import memo_key
    from mcp_matrix.run import call_servers

    worded = []
    real = call_servers.json.dumps

    def counting(value, **kw):
        worded.append(value)
        return real(value, **kw)

    monkeypatch.setattr(call_servers.json, "dumps", counting)
    arguments = {"account_id": "acct_0001", "fields": {"plan": "pro"}}
    call = RecordedCall(id="r-1", tool="update_account", arguments=arguments, line=1)
    server = schema_server({"update_account": {"inputSchema": {"type": "object"}}})
    assert memo_key(call) == ("update_account", real(arguments, sort_keys=True))
    assert server.answer("update_account", arguments).ok
    assert [w for w in worded if w is arguments] == [arguments]


def test_the_modelled_server_reads_a_schemas_aliases_once(monkeypatch):
    """The alias rule's pairs were worked out from the schema for every valid call answered."""
    from mcp_matrix.evolution import effects

    read = []
    real = effects.alias_pairs
    monkeypatch.setattr(effects, "alias_pairs", lambda s: read.append(s) or real(s))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    server = effects.schema_server({"t": {"inputSchema": schema}})
    assert all(server.answer("t", {"n": n}).ok for n in range(5))
    assert read == [schema]
