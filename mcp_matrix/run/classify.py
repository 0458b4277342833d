"""Mutations + the server's answer + the case's expectation -> a call verdict (docs/design.md#verdicts).

Pure: the runner gathers the answers, this decides. Every verdict carries its reason, the
mutations, a summary of the answer, the behaviours and evidence involved, and the weakest
evidence level, so a report can say what happened, why, and how sure we are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.behaviours.validation import Violation, plain_errors
from mcp_matrix.core.evidence import Evidence, weakest
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import Finding, Mutation
from mcp_matrix.core.verdicts import V
from mcp_matrix.core.verdicts import VerdictRow as Row

LOSSY = ("removed", "nulled")
# What a client does when it converts an argument to another JSON type (a string "5" to 5, 42 to
# "42"): the value the model meant, written as another type.
CONVERSIONS = ("retyped", "stringified")


@dataclass(frozen=True)
class Answer:
    """What came back for one call: a result, a JSON-RPC error, or a wire failure."""

    result: Any = None
    error: Mapping[str, JSON] | None = None  # RpcError.to_json()
    wire_error: Mapping[str, Any] | None = None  # WireError.to_json()
    elapsed: float = 0.0
    violations: tuple[Violation, ...] = ()  # a modelled server's validation errors, as fields

    @property
    def ok(self) -> bool:
        return (
            self.wire_error is None
            and self.error is None
            and isinstance(self.result, dict)
            and self.result.get("isError") is not True
        )

    def summary(self) -> dict:
        if self.wire_error is not None:
            return {"kind": "wire-error", **dict(self.wire_error)}
        if self.error is not None:
            return {"kind": "rpc-error", **dict(self.error)}
        result = self.result if isinstance(self.result, dict) else {}
        return {
            "kind": "tool-error" if result.get("isError") is True else "result",
            "text": result_text(result)[:300],
            "structured": "structuredContent" in result,
        }


@dataclass(frozen=True)
class Expectation:
    outcome: str = "success"  # success | error | any (automatic cases: only delivery is judged)
    contains: str | None = None
    structured: Mapping[str, JSON] | None = None


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str
    mutations: tuple[Mutation, ...] = ()
    answer: dict = field(default_factory=dict)
    behaviours: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    sometimes: tuple[str, ...] = ()
    violations: tuple[Violation, ...] = ()  # why the server's inputSchema rejects the call sent

    @property
    def weakest_evidence(self) -> str | None:
        return weakest(self.evidence)


def result_text(result: Mapping[str, JSON]) -> str:
    content = result.get("content") if isinstance(result, Mapping) else None
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text"
    )


def check_result(answer: Answer, expect: Expectation) -> str | None:
    """Why a successful result does not meet the case's checks, or None."""
    result = answer.result if isinstance(answer.result, dict) else {}
    if expect.contains is not None and expect.contains not in result_text(result):
        return f"the result text does not contain {expect.contains!r}"
    if expect.structured is not None:
        got = result.get("structuredContent")
        missing = _subset_mismatch(expect.structured, got)
        if missing:
            return f"structuredContent differs at {missing}"
    return None


def _subset_mismatch(want: JSON, got: JSON, ptr: str = "") -> str | None:
    if isinstance(want, Mapping):
        if not isinstance(got, Mapping):
            return ptr or "/"
        for k, v in want.items():
            bad = _subset_mismatch(v, got.get(k), f"{ptr}/{k}") if k in got else f"{ptr}/{k}"
            if bad:
                return bad
        return None
    return None if want == got else (ptr or "/")


def same_result(a: Answer, b: Answer) -> bool:
    """Did two calls get the same answer (content and structuredContent)?"""
    if not (isinstance(a.result, dict) and isinstance(b.result, dict)):
        return False
    keys = ("content", "structuredContent", "isError")
    return json.dumps({k: a.result.get(k) for k in keys}, sort_keys=True) == json.dumps(
        {k: b.result.get(k) for k in keys}, sort_keys=True
    )


# complexity: the one decision order of every verdict, a branch per verdict read top to bottom; split, the order hides
def classify(
    *,
    expect: Expectation,
    mutations: tuple[Mutation, ...],
    answer: Answer | None,
    refused: Finding | None = None,
    client_failure: Finding | None = None,
    reference: Answer | None = None,
    unsteady: str | None = None,
    invalid: tuple[Violation, ...] = (),
    repaired: tuple[Violation, ...] = (),
    unread: tuple[str, ...] = (),
    hidden_reason: str | None = None,
    behaviours: tuple[str, ...] = (),
    evidence: tuple[Evidence, ...] = (),
    sometimes: tuple[str, ...] = (),
) -> Verdict:
    """Decide one (profile, tool, case) cell: the one classifier of ``run``, ``replay`` and ``diff``.

    ``reference`` is the intact call's answer, if calling twice was safe; ``unsteady`` why
    sameness with it could not be shown although it was made (the server's answers changed
    between calls: the difference may not be the mutation's); ``invalid`` how the
    call sent fails the server's listed ``inputSchema`` (an unmutated call the server refuses
    is ``failed`` only when it was valid: an invalid one is refused legibly, ``loud``);
    ``repaired`` how the call as the model wrote it fails the server's listed ``inputSchema``,
    when the client only converted types (``CONVERSIONS``) and the server accepted the call sent:
    the client repaired the call, which is not a loss (Claude Code and Qwen Code convert "5" to 5
    for an integer, observed); ``unread`` the pointers of what was sent that the server accepted without reading (its
    listed schema does not name them, and the call without them got the same answer).
    """

    def v(row: Row, reason: str) -> Verdict:
        return Verdict(
            row.name,
            reason,
            mutations,
            answer.summary() if answer else {},
            behaviours,
            evidence,
            sometimes,
            invalid or (answer.violations if answer else ()),
        )

    if hidden_reason is not None:
        return v(V.UNREACHABLE, hidden_reason)
    if refused is not None:
        if expect.outcome == "error":
            return v(V.INTACT, "the client refused the call before sending, as the case expects")
        return v(V.LOUD, refused.message)
    if answer is None or answer.wire_error is not None:
        err = (answer.wire_error or {}) if answer else {}
        tail = [str(line).strip() for line in err.get("stderr_tail") or [] if str(line).strip()]
        last_words = f"; the server's last stderr line: {tail[-1][:200]}" if tail else ""
        return v(
            V.BROKEN,
            f"{err.get('kind', 'no answer')}: {err.get('message', '')}".strip() + last_words,
        )
    described = describe(mutations)
    if client_failure is not None:
        return v(V.FAILED, f"the server did the work, but {client_failure.message}")
    if not answer.ok:
        what = "a JSON-RPC error" if answer.error is not None else "a tool error (isError)"
        if expect.outcome == "any" and not mutations:
            return v(
                V.INTACT,
                f"arrived as intended; the server answered the automatic example with {what}",
            )
        if expect.outcome == "error":
            if mutations:
                return v(
                    V.TOLERATED, f"{described}; still refused with {what}, as the case expects"
                )
            return v(V.INTACT, f"refused with {what}, as the case expects")
        if mutations:
            errors = invalid or answer.violations
            why = f" (against its inputSchema: {plain_errors(errors)})" if errors else ""
            return v(
                V.LOUD, f"{described}; the server refused it with {what} the model can read{why}"
            )
        if invalid:
            # A modelled server's words are our own rendering of the violations: not repeated.
            said = "" if answer.violations else f": {_said(answer)}"
            return v(
                V.LOUD,
                f"refused with {what} the model can read (the arguments do not match the server's "
                f"inputSchema: {plain_errors(invalid)}){said}",
            )
        return v(
            V.FAILED,
            f"the intact, valid call was refused with {what}: {answer.summary().get('text') or answer.summary().get('message', '')}",
        )
    # The server reported success.
    if repaired:
        return v(
            V.TOLERATED,
            f"{described}: the client converted the arguments to the types the server's "
            f"inputSchema asks for, and the server accepted them (as the model wrote it, the call "
            f"fails that schema: {plain_errors(repaired)})",
        )
    lossy = [m for m in mutations if m.kind in LOSSY]
    if expect.outcome == "error":
        if lossy:
            return v(
                V.SILENT_LOSS,
                f"{described}; the server accepted what was left (the case expects an error)",
            )
        return v(
            V.ACCEPTED_INVALID,
            "the case expects an error, and the server accepted the call"
            + (f" ({described})" if mutations else ""),
        )
    ignored = ", ".join(unread[:4])
    if not mutations:
        if ignored:
            return v(
                V.SILENT_LOSS,
                f"the server accepted it but does not read {ignored}: its inputSchema does not name it, and the call "
                "without it got the same answer",
            )
        problem = check_result(answer, expect)
        return (
            v(V.FAILED, f"success, but {problem}")
            if problem
            else v(V.INTACT, "arrived as intended; the expected outcome")
        )
    if reference is not None and reference.ok and same_result(answer, reference):
        return v(
            V.TOLERATED, f"{described}; the server gave the same result as for the intact call"
        )
    if unsteady is not None:
        return v(
            V.UNVERIFIED,
            f"{described}; the server reported success, but sameness with the intact call could "
            f"not be shown: {unsteady}",
        )
    if lossy:
        return v(V.SILENT_LOSS, f"{described}; the server reported success on the reduced call")
    if ignored:
        return v(
            V.SILENT_LOSS, f"{described}; the server reported success but does not read {ignored}"
        )
    sameness = (
        "sameness could not be checked (calling twice is not safe)"
        if reference is None
        else "the result differs from the intact call's (made right after it, the same way)"
    )
    return v(V.SILENT_CORRUPTION, f"{described}; the server reported success and {sameness}")


def _said(answer: Answer) -> str:
    s = answer.summary()
    return str(s.get("text") or s.get("message") or "")[:200]


def describe(mutations: tuple[Mutation, ...]) -> str:
    if not mutations:
        return "no mutation"
    parts = [f"{m.pointer or '/'} {m.kind}" for m in mutations[:4]]
    more = f" and {len(mutations) - 4} more" if len(mutations) > 4 else ""
    return "the client sent " + ", ".join(parts) + more
