"""A discovery cell's deciding finding and its reason in words: one rule for the typed report
(``mcp_matrix.report.model``) and the JSON report's tables (``mcp_matrix.report.json_report``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from mcp_matrix.core.verdicts import LOST, V

_REASON_PARTS = 3


class _Losing(Protocol):
    @property
    def lost(self) -> bool | None: ...


_F = TypeVar("_F", bound=_Losing)


def primary_finding(findings: Sequence[_F], verdict: str) -> _F | None:
    """The finding that decided a discovery cell: the last one for a hidden or dropped tool,
    else the first that lost something, else the first (a cell's findings, or a report's)."""
    if not findings:
        return None
    if verdict in LOST:
        return findings[-1]
    return next((f for f in findings if f.lost), findings[0])


class _SaysFinding(Protocol):
    @property
    def lost(self) -> bool | None: ...

    @property
    def message(self) -> str: ...


def discovery_reason(verdict: str, findings: Sequence[_SaysFinding]) -> str:
    """A discovery cell's reason: the deciding finding's message for a lost tool, else the
    messages of the findings that lost something (the first three)."""
    if verdict == V.VISIBLE.name or not findings:
        return ""
    if verdict in LOST:
        return findings[-1].message
    lost = [f for f in findings if f.lost] or findings
    text = "; ".join(f.message for f in lost[:_REASON_PARTS])
    return text + (f" (and {len(lost) - _REASON_PARTS} more)" if len(lost) > _REASON_PARTS else "")


__all__ = ["discovery_reason", "primary_finding"]
