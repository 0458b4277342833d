"""One recorded call made ready through one profile, and what is decided without a server.

Split from ``mcp_matrix.evolution.replay`` (the run): ``prepare_and_classify`` is the offline
part of one call (prepare, client-side validation, mutations) with no server, which the
replay's segments and throughput measurements (benchmarks/replay.py) share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from mcp_matrix.core.model import CallContext, ClientView
from mcp_matrix.evolution.calls_file import RecordedCall
from mcp_matrix.profiles.model import Profile
from mcp_matrix.run.call_servers import Intended
from mcp_matrix.run.classify import Verdict
from mcp_matrix.run.deliver import decide, prepare
from mcp_matrix.run.held import Held, hold
from mcp_matrix.simulate.calls import Variant


class Prepared(NamedTuple):
    """One call made ready to send, and what can be decided without the server.

    ``verdict`` is set when no server is needed: ``unreachable`` (the client does not show the
    tool) or ``loud`` (the client's own validation refuses to send). ``primary`` is the variant
    replay sends: the client's usual behaviour, without its intermittent (``sometimes``) ones.
    ``risk`` is what the mutations would mean if the server accepted the call: ``silent-loss``
    (data removed or nulled), ``silent-corruption`` (values changed), or None (sent intact).
    """

    variants: list[Variant]
    verdict: Verdict | None
    primary: Variant | None
    context: CallContext | None
    risk: str | None


def to_send(prepared: Prepared) -> tuple[CallContext, Variant]:
    """The context and variant of a call not decided before the server (``verdict`` None)."""
    assert prepared.context is not None and prepared.primary is not None
    return prepared.context, prepared.primary


_WRAPPED: dict[int, tuple[ClientView, Held]] = {}


def _as_held(profile: Profile, held: Held | ClientView) -> Held:
    if isinstance(held, Held):
        return held
    hit = _WRAPPED.get(id(held))
    if hit is None or hit[0] is not held or hit[1].profile is not profile:
        hit = (held, hold(profile, held, None, {}))  # no baseline: not a stale cache
        if len(_WRAPPED) > 64:
            _WRAPPED.clear()
        _WRAPPED[id(held)] = hit
    return hit[1]


_LAST: list[tuple[RecordedCall, Intended] | None] = [None]


def intended_call(call: RecordedCall) -> Intended:
    """The intended call of a recorded one, one object for the profiles that plan it in a row
    (offline, a call is planned for every group of profiles in turn). The slot is read and
    replaced whole: threads never mix two."""
    last = _LAST[0]
    if last is not None and last[0] is call:
        return last[1]
    intended = Intended(call.tool, call.arguments, id=call.id)
    _LAST[0] = (call, intended)
    return intended


def prepare_and_classify(
    profile: Profile, held: Held | ClientView, call: RecordedCall | Mapping[str, Any]
) -> Prepared:
    """Prepare, client-side validation and mutation classification of one call, without a server.

    ``held`` is a ``Held`` (``hold``) or a plain ``ClientView`` (wrapped once and memoised);
    ``call`` a ``RecordedCall`` or a mapping with ``tool`` and ``arguments``. Pure apart from
    the validators' compile cache: safe to call in a loop to measure throughput.
    """
    h = _as_held(profile, held)
    intended = (
        intended_call(call)
        if isinstance(call, RecordedCall)
        else Intended(call["tool"], call.get("arguments", {}))
    )
    ready = prepare(profile, h, intended)
    if ready.verdict is not None:
        return Prepared([], ready.verdict, None, None, None)
    context = ready.context
    assert context is not None  # prepare gives a context whenever it gives no verdict
    variants = list(ready.variants)
    primary = variants[-1]  # plan_call lists the all-intermittent variant first, the usual one last
    risk = None
    if primary.mutations:
        risk = (
            "silent-loss"
            if any(m.kind in ("removed", "nulled") for m in primary.mutations)
            else "silent-corruption"
        )
    verdict = None
    if primary.plan.refused is not None:  # the client's own validation: decided without a server
        verdict, _ = decide(profile, h, context, intended, primary, None)
    return Prepared(variants, verdict, primary, context, risk)


__all__ = ["Prepared", "intended_call", "prepare_and_classify", "to_send"]
