"""What a fix reports beside its edits: each client's counts before and after, and the cache hints
a 2026-07-28 server must send with its list.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.fix.measure import Measured
from mcp_matrix.fix.model import ClientCounts, ServerItem
from mcp_matrix.profiles.model import Profile


def client_counts(
    before: Measured,
    after: Measured,
    profiles: Sequence[Profile],
    required: Sequence[str],
    original: Mapping[str, str],
) -> tuple[ClientCounts, ...]:
    out = []
    for p in profiles:
        then = [c for (name, _), c in before.cells.items() if name == p.name]
        now = [c for (name, _), c in after.cells.items() if name == p.name]
        lost_then = {c.tool for c in then if c.lost}
        now_ok = tuple(
            sorted(c.tool for c in now if not c.lost and original.get(c.tool, c.tool) in lost_then)
        )
        still = tuple(
            (c.tool, "; ".join(dict.fromkeys(x.message for x in c.losses)) or c.verdict)
            for c in now
            if c.lost
        )
        out.append(
            ClientCounts(
                p.name,
                p.name in required,
                len(now),
                len(lost_then),
                sum(c.lost for c in now),
                sum(c.call_lost for c in then),
                sum(c.call_lost for c in now),
                now_ok,
                still,
                tuple(
                    (c.tool, f"{c.call}: {c.call_reason}")
                    for c in now
                    if c.call_lost and not c.lost
                ),
            )
        )
    return tuple(out)


def cache_hints(doc: Mapping[str, JSON]) -> tuple[tuple[ServerItem, ...], JSON]:
    """A 2026-07-28 list without ``ttlMs``/``cacheScope``: the hints the server must send, set in
    the corrected snapshot as the bundled memory server sends them (``ttlMs: 0``, ``private``)."""
    eras = copy.deepcopy(doc.get("eras"))
    modern = eras.get("modern") if isinstance(eras, dict) else None
    if not isinstance(modern, dict) or not modern.get("answered"):
        return (), eras
    missing = [k for k in ("ttlMs", "cacheScope") if modern.get(k) is None]
    if not missing:
        return (), eras
    modern.setdefault("ttlMs", None)
    if modern.get("ttlMs") is None:
        modern["ttlMs"] = 0
    if modern.get("cacheScope") is None:
        modern["cacheScope"] = "private"
    item = ServerItem(
        "",
        "send ttlMs and cacheScope with every tools/list result of the 2026-07-28 era (ttlMs: 0 "
        "while the list may change with a deploy; cacheScope: private for a per-user list): "
        "clients that honour them refetch instead of calling with a stale schema "
        "(handshake.honours_ttl in clients/python-sdk.yaml, clients/python-sdk-modern.yaml)",
        f"no {' or '.join(missing)} in the 2026-07-28 tools/list result",
    )
    return (item,), eras


__all__ = ["cache_hints", "client_counts"]
