"""Which profiles a command runs: those named (abstract bases refused), else every runnable one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcp_matrix.core.errors import InputError, did_you_mean
from mcp_matrix.profiles.model import Profile


def select_profiles(
    profiles: Mapping[str, Profile], names: Iterable[str] | None = None
) -> list[Profile]:
    """The profiles named, in the order given; all runnable (non-abstract) ones if none are named."""
    runnable = sorted(name for name, p in profiles.items() if not p.abstract)
    wanted = list(dict.fromkeys(names or ()))
    if not wanted:
        return [profiles[name] for name in runnable]
    chosen = []
    for name in wanted:
        if name not in profiles:
            raise InputError(
                f"unknown profile {name!r}{did_you_mean(name, runnable)}; profiles: {', '.join(runnable)}"
            )
        if profiles[name].abstract:
            heirs = [p for p in runnable if name in _ancestors(profiles, p)]
            raise InputError(
                f"{name!r} is an abstract base profile and is never run on its own; "
                f"profiles built on it: {', '.join(heirs) or 'none'}"
            )
        chosen.append(profiles[name])
    return chosen


def _ancestors(profiles: Mapping[str, Profile], name: str) -> set[str]:
    out: set[str] = set()
    todo = list(profiles[name].extends)
    while todo:
        parent = todo.pop()
        if parent not in out and parent in profiles:
            out.add(parent)
            todo += profiles[parent].extends
    return out
