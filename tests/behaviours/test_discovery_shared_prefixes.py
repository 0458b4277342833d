"""Profiles whose discovery lists start alike run the shared entries once (counted, never timed).

``client_views`` keeps where each run of entries led (``run_discovery``'s ``prefixes``): a
profile whose list starts with entries another profile ran, with the same params and
evidence, starts from that state; what every profile gets is what it gets alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from mcp_matrix.behaviours import registry
from mcp_matrix.profiles.loader import load_profiles
from mcp_matrix.profiles.model import BehaviourUse
from mcp_matrix.simulate.discovery import client_view, client_views, initial_state

TOOLS = [
    {"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {
        "name": "pick",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": ["integer", "null"], "default": 3}},
            "additionalProperties": False,
        },
    },
]


def _counting(monkeypatch) -> Counter:
    """Calls of each discovery behaviour, by name, while the test runs."""
    calls: Counter = Counter()
    real = registry.get

    def get(name: str):
        spec = real(name)

        def fn(*args, **kw):
            calls[name] += 1
            return spec.fn(*args, **kw)

        return replace(spec, fn=fn)

    monkeypatch.setattr(registry, "get", get)
    return calls


def test_profiles_sharing_a_list_prefix_run_its_entries_once_and_get_what_they_get_alone(
    monkeypatch,
):
    base = load_profiles()["claude-code"]
    assert base.discovery  # the prefix the two profiles share
    # last in sending order (after the model API's rules, as a provider's own)
    extra = BehaviourUse("max-tools", {"limit": 1}, base.discovery[0].evidence, provider=True)
    longer = replace(base, name="claude-code-plus", discovery=base.discovery + (extra,))
    state = initial_state([(0, t) for t in TOOLS], "srv")
    alone = [client_view(p, state) for p in (base, longer)]

    calls = _counting(monkeypatch)
    client_views([base], state)
    once = Counter(calls)  # the base profile's entries (a rerun after a culprit included)
    calls.clear()
    together = client_views([base, longer], state)

    assert together == alone
    assert calls - once == Counter({"max-tools": 1})  # the shared entries ran once, not twice
    assert once - calls == Counter()
