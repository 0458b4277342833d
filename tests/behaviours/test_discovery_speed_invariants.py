"""Discovery cost grows with distinct schemas, not with profiles x tools (counted, never timed).

``schema_rewrite`` memoises every per-schema rewrite by (behaviour, params, schema
fingerprint): a list of 1,000 tools that share 10 schemas costs each rewrite at most one
call per distinct (params, schema) however many tools and profiles there are, and the
walks under the rewrites are bounded even on hostile schemas. These tests count calls of
the rewrite functions and nodes visited; none of them measures time.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours import rewrite as R
from mcp_matrix.behaviours import walk as W
from mcp_matrix.behaviours.registry import freeze
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.run.discovery import discover_all
from mcp_matrix.targets.snapshot import Snapshot

# Ten schemas that between them set off most rewrites: refs, type lists, tuple items,
# missing items, long descriptions, defaults, formats, combinators, open objects.
SCHEMAS: list[dict] = [
    {
        "type": "object",
        "properties": {"q": {"type": "string", "format": "date-time"}},
        "required": ["q"],
    },
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3}},
    },
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"tags": {"type": "array"}}, "required": ["tags", "gone"]},
    {
        "type": "object",
        "properties": {"v": {"type": ["string", "null"], "description": "x" * 1500}},
    },
    {
        "type": "object",
        "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}},
        "properties": {
            "item": {"$ref": "#/$defs/Item"},
            "many": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        },
    },
    {
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]}
        },
    },
    {
        "type": "object",
        "properties": {
            "mode": {"oneOf": [{"const": "a"}, {"const": "b"}]},
            "x": {"allOf": [{"type": "string"}]},
        },
    },
    {"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": True}}},
    {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
    },
]


def snapshot(n_tools: int, schemas: list[Any] = SCHEMAS) -> Snapshot:
    """``n_tools`` tools cycling through ``schemas``: every tool has its own copy (equal,
    never identical), so only the fingerprint can tell that two schemas are the same. A
    schema given as a function is called for each copy."""

    def fresh(schema: Any) -> Any:
        return schema() if callable(schema) else copy.deepcopy(schema)

    tools = [
        {
            "name": f"tool_{i}",
            "description": "A tool.",
            "inputSchema": fresh(schemas[i % len(schemas)]),
        }
        for i in range(n_tools)
    ]
    return Snapshot(
        {
            "format": "mcp-matrix.snapshot",
            "version": 1,
            "target": {"kind": "server", "server": "bench"},
            "tools": [{"page": 0, "tool": t} for t in tools],
        }
    )


@pytest.fixture(scope="module")
def profiles() -> list:
    registry.load_all()
    return [p for p in load_profiles().values() if not p.abstract]


class Calls:
    """Counts the calls of every per-schema rewrite function (``R._run`` calls it once per
    memo miss) and the walks under them, keyed as the memo keys them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rewrites: Counter = Counter()
        self.walks = 0
        self.walk_nodes: list[int] = []
        run, walk = R._run, W.rewrite

        def counting_run(fn, name, report_losses, schema, kwargs):
            self.rewrites[(name, freeze(kwargs), R.fingerprint(schema))] += 1
            return run(fn, name, report_losses, schema, kwargs)

        def counting_walk(*args, **kwargs):
            result = walk(*args, **kwargs)
            self.walks += 1
            self.walk_nodes.append(result.nodes)
            return result

        monkeypatch.setattr(R, "_run", counting_run)
        monkeypatch.setattr(W, "rewrite", counting_walk)

    @property
    def total(self) -> int:
        return sum(self.rewrites.values())


def run_cold(snap: Snapshot, profiles: list, calls: Calls) -> list:
    R.clear_memo()
    calls.rewrites.clear()
    calls.walks = 0
    calls.walk_nodes.clear()
    return discover_all(snap, profiles)


def test_each_rewrite_runs_at_most_once_per_distinct_schema_and_params(monkeypatch, profiles):
    calls = Calls(monkeypatch)
    views = run_cold(snapshot(1000), profiles, calls)
    assert len(views) == len(profiles) and all(len(v.tools) == 1000 for v in views)
    assert calls.total > 0  # the rewrites did run
    repeated = {key[:2]: n for key, n in calls.rewrites.items() if n > 1}
    assert repeated == {}, f"rewrites called more than once for one (params, schema): {repeated}"
    # Each (behaviour, params) met at most the 10 server schemas once per profile using it
    # (a profile's earlier rewrites may hand it its own variant of each).
    uses = Counter((u.name, freeze(dict(u.params))) for p in profiles for u in p.discovery)
    per_use = Counter(key[:2] for key in calls.rewrites)
    for use, n in per_use.items():
        assert n <= len(SCHEMAS) * uses[use], (use, n)
    # ... which is far below one call per (profile, tool) cell.
    assert calls.total < len(SCHEMAS) * sum(uses.values()) < len(profiles) * 1000


def test_rewrite_calls_and_walks_do_not_grow_with_the_number_of_tools(monkeypatch, profiles):
    calls = Calls(monkeypatch)
    run_cold(snapshot(30), profiles, calls)
    few_rewrites, few_walks = Counter(calls.rewrites), calls.walks
    run_cold(snapshot(1000), profiles, calls)
    assert calls.rewrites == few_rewrites  # the same calls, one per distinct (params, schema)
    assert calls.walks == few_walks


def test_a_warm_memo_serves_every_profile_without_calling_a_rewrite(monkeypatch, profiles):
    calls = Calls(monkeypatch)
    cold = run_cold(snapshot(200), profiles, calls)
    assert calls.total > 0
    calls.rewrites.clear()
    calls.walks = 0
    warm = discover_all(snapshot(200), profiles)  # new, equal schema objects: fingerprints match
    assert calls.total == 0 and calls.walks == 0
    assert [v.tools for v in warm] == [v.tools for v in cold]


def test_a_rewrite_with_nothing_to_do_is_skipped_on_the_fingerprint(monkeypatch, profiles):
    # No array, no type list, no long string, no $ref, no tuple items, no Copilot-stripped
    # keyword: the pre-checks of those rewrites answer from the fingerprint text alone.
    plain = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    calls = Calls(monkeypatch)
    run_cold(snapshot(50, [plain]), profiles, calls)
    skipped = {
        "array-items-required",
        "truncate-descriptions",
        "strip-keywords",
        "tuple-items-to-anyof",
        "nullable-type-arrays",
        "ref-cycles",
    }
    ran = {name for name, _, _ in calls.rewrites}
    assert ran.isdisjoint(skipped), ran & skipped
    assert ran  # other rewrites still ran once for the schema


def test_the_memo_tells_equal_schemas_apart_from_merely_similar_ones(monkeypatch, profiles):
    # 1 and 1.0 and True are equal in Python but not the same schema to a client.
    variants = [
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1.0}}},
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": True}}},
    ]
    calls = Calls(monkeypatch)
    run_cold(snapshot(30, variants), profiles, calls)
    codex = {key: n for key, n in calls.rewrites.items() if key[0] == "codex-sanitize"}
    assert set(codex.values()) == {1}  # each (params, schema) once
    # The memo keys on (params, schema): per parameter set the profiles use (codex-015's defaults,
    # codex's 0.171 settings), the three variants are three schemas, none served as another.
    settings = {
        freeze(dict(u.params)) for p in profiles for u in p.discovery if u.name == "codex-sanitize"
    }
    assert len(settings) >= 2
    assert Counter(params for _, params, _ in codex) == {params: 3 for params in settings}


def deep(levels: int) -> dict:
    node: dict = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"child": node}}
    return node


EXPONENTIAL_REFS = {
    "type": "object",
    "$defs": {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(40)
    },
    "properties": {"root": {"$ref": "#/$defs/d0"}},
}
CYCLE = {
    "type": "object",
    "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    "properties": {"head": {"$ref": "#/$defs/Node"}, "self": {"$ref": "#"}},
}


@pytest.mark.parametrize("hostile", ["deep-5000", "exponential-refs", "ref-cycle"])
def test_hostile_schemas_cost_bounded_walks_and_each_is_walked_once_per_rewrite(
    monkeypatch, profiles, hostile
):
    # deep-5000 is too deep for json and deepcopy: each tool gets a fresh build, and the
    # fingerprint (written without recursion for such schemas) still finds them equal.
    schema = {
        "deep-5000": lambda: deep(5000),
        "exponential-refs": EXPONENTIAL_REFS,
        "ref-cycle": CYCLE,
    }[hostile]
    calls = Calls(monkeypatch)
    views = run_cold(snapshot(4, [schema]), profiles, calls)
    assert all(len(v.tools) == 4 for v in views)
    assert (
        calls.walk_nodes and max(calls.walk_nodes) <= W.MAX_NODES + 64
    )  # a walk stops at the limit
    assert all(n == 1 for n in calls.rewrites.values())
    once = calls.walks
    run_cold(snapshot(40, [schema]), profiles, calls)
    assert calls.walks == once  # ten times the tools, not one walk more


def test_a_tool_named_refuse_gets_a_name_in_every_profile_and_nothing_raises():
    # The name transform once confused a tool called "refuse" with its own refusal marker.
    from mcp_matrix.profiles.loader import load_profiles
    from mcp_matrix.simulate.discovery import client_view, initial_state

    tools = [(0, {"name": "refuse", "inputSchema": {"type": "object", "properties": {}}})]
    for profile in (p for p in load_profiles().values() if not p.abstract):
        view = client_view(profile, initial_state(tools, "srv"))
        assert view.tools[0].verdict in ("visible", "degraded"), (profile.name, view.tools[0])
