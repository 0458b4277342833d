"""What a replay is asked to do: the files, profiles and target, and a frozen-call alias to probe."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mcp_matrix.core.replay_events import ReplayCall
from mcp_matrix.evolution.calls_file import CallsFile, RecordedCall
from mcp_matrix.evolution.replay_report import VOLATILE_KEYS
from mcp_matrix.profiles.model import Profile
from mcp_matrix.targets.kinds import Target
from mcp_matrix.targets.snapshot import Snapshot
from mcp_matrix.wire.session import Timeouts


@dataclass(frozen=True)
class Alias:
    """A deprecated parameter name: calls using ``old`` on ``tool`` are probed with ``new`` on failure."""

    tool: str
    old: str
    new: str

    def used_by(self, call: RecordedCall) -> bool:
        return (
            call.tool == self.tool
            and isinstance(call.arguments, dict)
            and self.old in call.arguments
        )

    def renamed(self, arguments: dict) -> dict:
        out = {k: v for k, v in arguments.items() if k != self.old}
        out.setdefault(self.new, arguments[self.old])
        return out


@dataclass
class ReplayConfig:
    """What to replay, through which profiles, against what.

    ``target`` None means offline against ``snapshot`` (the new version): only what the clients
    do before the server sees a call is measured. Live, the snapshot is taken from the target.
    ``baseline`` is what caching profiles hold (the list from before the deploy).
    ``read_after`` names read-only tools called with no arguments at the end of each session.
    ``only`` keeps some calls (the checklist's old-name calls); ``alias`` probes their failures.
    ``on_progress`` receives the bytes read; ``emit`` one typed event per replayed call.
    """

    files: list[CallsFile]
    profiles: list[Profile]
    target: Target | None = None
    snapshot: Snapshot | None = None
    baseline: Snapshot | None = None
    retries: int = 3
    jobs: int = 4
    timeouts: Timeouts = field(default_factory=Timeouts)
    examples: int = 3
    ignore_keys: frozenset[str] = VOLATILE_KEYS
    read_after: tuple[str, ...] = ()
    only: Callable[[RecordedCall], bool] | None = None
    alias: Alias | None = None
    on_progress: Callable[[int], None] | None = None
    emit: Callable[[ReplayCall], None] | None = None


__all__ = ["Alias", "ReplayConfig"]
