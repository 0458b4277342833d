"""One call's outcome through a profile, and what it adds to a tally: its replay category, the
intermittent behaviours that change it, and the retry and alias outcomes its first attempt
decides (the rest is probed live by ``replay_segment``)."""

from __future__ import annotations

from typing import Any, NamedTuple

from mcp_matrix.core.event_values import CellMutation
from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.evolution.replay_prepare import Prepared
from mcp_matrix.evolution.replay_report import Tally, TranscriptTally
from mcp_matrix.run.call_servers import listed_violations
from mcp_matrix.run.classify import Answer, Verdict

DETERMINISTIC_RPC_CODES = (
    -32601,
    -32602,
)  # unknown method, invalid params: the same call fails the same way


class ReplayEffect(NamedTuple):
    """One call's outcome through a profile, and what it adds to any tally it is counted in:
    its replay category, the intermittent behaviours that change it (``sometimes``), and the
    retry and alias outcomes when the outcome alone decides them (a counter key and the
    event's words; an alias key "" is probed live, ``ReplaySegment._alias``)."""

    verdict: Verdict
    answer: Answer | None
    prepared: Prepared
    category: str
    sometimes: tuple[str, ...]
    retry: tuple[str, str] | None
    alias: tuple[str, str] | None
    # what a tally counts of it (``counted``; ``SegmentsTogether`` reads it for every profile group)
    counts: tuple[str, str, tuple[str, ...], str | None]

    def reason(self) -> str:
        return reason_of(self.verdict, self.answer)

    def mutations(self) -> list[dict]:
        return mutations_of(self.prepared)

    def cell_mutations(self) -> tuple[CellMutation, ...]:
        """The mutations as the event's typed values (the same keys as ``mutations``)."""
        usual = self.prepared.primary
        return tuple(
            CellMutation(m.kind, m.pointer, m.before, m.after)
            for m in (usual.mutations if usual else ())
        )

    def example(self, call: RecordedCall) -> dict:
        return {
            "id": call.id,
            "line": call.line,
            "verdict": self.verdict.verdict,
            "reason": self.reason(),
            "mutations": self.mutations(),
        }


def counted(
    verdict: Verdict, category: str, sometimes: tuple[str, ...], retry: tuple[str, str] | None
) -> tuple[str, str, tuple[str, ...], str | None]:
    """What a tally counts of an outcome (``SegmentsTogether.flush``)."""
    return category, verdict.verdict, sometimes, retry[0] if retry is not None else None


def changed_by(prepared: Prepared) -> tuple[str, ...]:
    """The intermittent behaviours (joined, a tally's key) whose variant the call changes:
    they are not sent (a write would be made twice), only counted."""
    if len(prepared.variants) < 2:
        return ()
    usual = prepared.variants[-1]
    return tuple(
        ", ".join(v.sometimes)
        for v in prepared.variants[:-1]  # plan_call tries the intermittent behaviours together
        if v.mutations != usual.mutations
        or (v.plan.refused is None) != (usual.plan.refused is None)
    )


def retry_decided(category: str, prepared: Prepared, offline: bool) -> tuple[str, str] | None:
    """A queued retry's outcome when its first attempt decides it (a retry counter and the
    event's words); None when only sending it again tells (live, ``ReplaySegment._retry``)."""
    if category == "delivered":
        return "first", "delivered"
    if category == "silent":
        return "silent", "silent"
    if prepared.verdict is not None:
        # unreachable, or refused by the client's own validation: the same on every attempt
        return "deterministic", "fails on every attempt (the client refuses it before sending)"
    if offline:
        # the modelled server answers the same call the same way every time
        return (
            "deterministic",
            "fails on every attempt (offline: the modelled server refuses it each time)",
        )
    return None


def alias_decided(category: str, unprobed: bool) -> tuple[str, str] | None:
    """An old-name call's outcome when the first attempt decides it (an alias counter and the
    event's words); None when a loud refusal is probed with the new name."""
    if category == "delivered":
        return "accepted", "accepted"
    if category != "loud":
        return "other", category
    if unprobed:
        return "unprobed", "refused; not probed with the new name (the tool is not repeat-safe)"
    return None


def validation_failure(answer: Answer | None, prepared: Prepared, live_tool: Any) -> bool:
    """Is the server's refusal a validation error, which the same call meets every time?

    A JSON-RPC invalid-params or unknown-method error, or wire arguments that the server's own
    ``inputSchema`` rejects. Anything else (a tool error on valid arguments, a timeout) may pass
    on another attempt.
    """
    if answer is None or answer.wire_error is not None:
        return False
    if answer.error is not None:
        return answer.error.get("code") in DETERMINISTIC_RPC_CODES
    if not isinstance(live_tool, dict) or prepared.primary is None:
        return False
    return bool(listed_violations(live_tool, prepared.primary.plan.arguments))


def mutations_of(prepared: Prepared) -> list[dict]:
    return [m.to_json() for m in (prepared.primary.mutations if prepared.primary else ())]


def reason_of(verdict: Verdict, answer: Answer | None) -> str:
    if verdict.verdict == "failed" and answer is not None and not answer.ok:
        s = answer.summary()
        text = s.get("text") or s.get("message") or ""
        return f"refused by the server: {text[:200]}".rstrip(": ")
    return verdict.reason


def count_divergence(
    call: RecordedCall, why: str | None, tally: Tally, t: TranscriptTally | None
) -> None:
    """Count a compared call; remember the first diverging one, of the file and of its transcript."""
    tally.compared += 1
    if t is not None:
        t.compared += 1
    if why is None:
        return
    tally.diverged += 1
    where = {"id": call.id, "line": call.line, "why": why}
    turn = call.turn if call.turn is not None else t.calls if t is not None else None
    if turn is not None:
        where["turn"] = turn
    if tally.first_divergence is None:
        tally.first_divergence = {
            **where,
            **({"transcript": call.transcript} if call.transcript else {}),
        }
    if t is not None:
        t.diverged += 1
        if t.first is None:
            t.first = where


__all__ = [
    "DETERMINISTIC_RPC_CODES",
    "ReplayEffect",
    "alias_decided",
    "changed_by",
    "count_divergence",
    "counted",
    "mutations_of",
    "reason_of",
    "retry_decided",
    "validation_failure",
]
