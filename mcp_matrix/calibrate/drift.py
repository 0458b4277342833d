"""Drift: a profile's prediction against a calibration record, cell by cell.

Per probe tool the cells are ``visible`` (does the model see it), ``name``, ``schema`` and
``description`` (what the model sees); per scripted call, ``arguments`` (what reached the
server, or that nothing did). Predictions come from the existing simulation: discovery on the
probe set as a snapshot (``mcp_matrix.simulate.discovery``), then the profile's call behaviours on
the scripted arguments (``mcp_matrix.simulate.calls``; a call with intermittent behaviours agrees
when any of its variants matches).

A ``session-broken`` prediction is a model API refusing the request; the fake endpoint does
not refuse (unless the set enforces the provider's limits, ``ProbeSet.provider_limits``: then no
call is made), so the client's side of it is compared: that it sends the tools (``visible``) and
the calls the fake model then makes. A script over several turns (``ScriptedCall.turn``) ends
for a client whose call behaviour stops after ``stop_after_error_turns`` turns in a row with a
failed call (Agent Framework): the later calls are predicted not sent. The simulation sets the tools that break the session aside
(``blocked``) and goes on with the rest, so names and schemas are compared for every tool; a
culprit's too when the model API's rule blames it (the client built and sent it, after all of its
own rewrites: ``refused_by_api``), not when the client's own rule did. A list the client itself rejected (a ``list-rejected`` finding, e.g. the MCP
Python SDK's gate raising) reaches no model whatever its outcome: every tool is predicted absent,
as for a dropped server. Where the
profile drops the server, one more cell (``list-failure``, tool ``(list)``) compares how far the
failure reaches: ``run`` (a library raising it: ``list-failure-raises``) or ``server`` (a client
that goes on without the server), against what the record shows (``observed_scope``).

A probe set where the client made no model request is compared the same way when the record shows
the client aborted (its driver reported the exception, no timeout: ``aborted``): every tool absent,
every call not sent. Where the record cannot say why (a timeout, no driver line) the set is not
compared but counted (``RecordDrift.unjudged``), so a wrong "visible" cannot hide behind it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp_matrix.behaviours import registry
from mcp_matrix.behaviours.run_scope import RUN_ABORTED
from mcp_matrix.calibrate.probe import ProbeSet
from mcp_matrix.calibrate.probe import digest as probe_digest
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallContext
from mcp_matrix.core.verdicts import V
from mcp_matrix.profiles.model import Profile
from mcp_matrix.simulate.calls import plan_call
from mcp_matrix.simulate.discovery import initial_state, refused_by_api, run_discovery

NOT_SENT = "not sent"
LIST = "(list)"  # the tool column of a cell about the whole list (``list-failure``)


@dataclass(frozen=True)
class Cell:
    probe_set: str
    tool: str
    aspect: str
    predicted: JSON
    observed: JSON
    agree: bool
    why: str = ""  # the behaviours or outcome behind the prediction

    def to_json(self) -> dict:
        return {
            "probe_set": self.probe_set,
            "tool": self.tool,
            "aspect": self.aspect,
            "predicted": self.predicted,
            "observed": self.observed,
            "agree": self.agree,
            "why": self.why,
        }


def same(a: JSON, b: object) -> bool:
    """JSON equality (key order ignored; ``1.0 == 1`` as JSON numbers; booleans are not numbers)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b and (
        type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float)))
    )


def same_name(predicted: JSON, observed: JSON) -> bool:
    """Names agree when equal (Codex's collision hash is reproduced, not matched as a pattern)."""
    return same(predicted, observed)


def predict(profile: Profile, probe: ProbeSet, server_name: str) -> dict:
    """What ``profile`` says the client does with ``probe``: per tool, then per call."""
    pages = [
        (0 if not probe.page_size else i // probe.page_size, t) for i, t in enumerate(probe.tools)
    ]
    final = run_discovery(profile, initial_state(pages, server_name))
    dropped = final.outcome == V.SERVER_DROPPED.name or any(
        f.code == "list-rejected" for f in final.findings
    )
    blocked = set(final.blocked)
    tools: dict[str, dict] = {}
    for state in final.tools:
        why = ", ".join(dict.fromkeys(f.behaviour for f in state.findings if f.behaviour))
        if dropped:
            why = (
                ", ".join(dict.fromkeys(f.behaviour for f in final.findings if f.behaviour))
                or final.outcome
            )
        present = not dropped and not state.hidden
        tools[state.server_name] = {
            "present": present,
            "name": state.name if present else None,
            "schema": state.schema if present else None,
            "description": state.description if present else None,
            "why": why,
            "outcome": final.outcome,
            "blocks": state.index in blocked,  # its name or schema breaks the session
            # ... by a rule of the model API: the client built and sent it as predicted
            "sent": state.index in blocked and refused_by_api(profile, state.findings[-1]),
            "state": state,
        }
    calls: list[dict] = []
    refused = probe.provider_limits and final.outcome == V.SESSION_BROKEN.name
    limit = max((int(u.params.get("stop_after_error_turns", 0)) for u in profile.call), default=0)
    streak, failed, turn = 0, False, 0
    for call in probe.calls:
        tool = tools.get(call.tool)
        if call.turn != turn:  # the turn before is over: did one of its calls fail?
            streak, failed, turn = (streak + 1 if failed else 0), False, call.turn
        if refused or (limit and streak >= limit):
            why = (
                f"{final.outcome}: the provider refuses every request (limits enforced)"
                if refused
                else f"{limit} turns in a row with a failed call: tools are off"
            )
            calls.append({"tool": call.tool, "variants": [NOT_SENT], "why": why})
            continue
        if tool is None or not tool["present"]:
            calls.append(
                {
                    "tool": call.tool,
                    "variants": [NOT_SENT],
                    "why": tool["why"] if tool else "no such tool",
                }
            )
            continue
        state = tool["state"]
        ctx = CallContext(tool=call.tool, held_schema=state.schema, held_tool=state.original)
        variants: list[object] = []  # the distinct arguments sent (or NOT_SENT)
        whys: list[str] = []
        for v in plan_call(profile, ctx, call.arguments):
            wire = NOT_SENT if v.plan.refused is not None else v.plan.arguments
            if not any(same(wire, seen) for seen in variants):
                variants.append(wire)
            whys += list(v.plan.applied) + (
                [v.plan.refused.behaviour or v.plan.refused.code] if v.plan.refused else []
            )
        result = _result_prediction(profile, ctx, variants)
        failed = failed or NOT_SENT in variants or result[0] == "error"
        calls.append(
            {
                "tool": call.tool,
                "variants": variants,
                "why": ", ".join(dict.fromkeys(whys)),
                "result": result,
            }
        )
    scope = None
    if dropped:  # how far the list failure reaches: this server, or the whole run (a library)
        scope = "run" if any(f.code == RUN_ABORTED.code for f in final.findings) else "server"
    return {"tools": tools, "calls": calls, "outcome": final.outcome, "scope": scope}


def _result_prediction(profile: Profile, ctx: CallContext, variants: list) -> tuple[str, str]:
    """What the model is told of the probe server's answer (text content only): ``text``, or
    ``error`` when a result behaviour of the profile fails it; and the behaviour's name."""
    sent: object = next((v for v in variants if v != NOT_SENT), {})
    answer = {"content": [{"type": "text", "text": "received " + json.dumps(sent)}]}
    for use in profile.result:
        if registry.get(use.name).fn(answer, ctx, **dict(use.params)) is not None:
            return "error", use.name
    return "text", ""


def observed_result(result: Any) -> str:
    """``text`` when the model got the server's answer (it starts ``received``), else ``error``."""
    text = result.get("text", "") if isinstance(result, dict) else ""
    return "text" if "received " in text and not result.get("is_error") else "error"


def drift(
    profile: Profile, probe: ProbeSet, observation: dict, server_name: str = "probe"
) -> list[Cell]:
    """Every cell of one probe set: predicted by ``profile``, observed in ``observation``."""
    pred = predict(profile, probe, server_name)
    cells: list[Cell] = []
    for raw in probe.tools:
        name = raw["name"]
        p = pred["tools"].get(name, {"present": False, "why": "not listed"})
        o = observation["tools"].get(name, {"present": False})
        cells.append(
            Cell(
                probe.id,
                name,
                "visible",
                p["present"],
                o["present"],
                p["present"] == o["present"],
                p["why"],
            )
        )
        if p["present"] and o["present"] and (not p.get("blocks") or p.get("sent")):
            for aspect in ("name", "schema", "description"):
                agree = (
                    same_name(p[aspect], o[aspect])
                    if aspect == "name"
                    else same(p[aspect], o[aspect])
                )
                cells.append(Cell(probe.id, name, aspect, p[aspect], o[aspect], agree, p["why"]))
    seen_scope = observed_scope(observation)
    if pred["scope"] is not None and seen_scope is not None:
        why = ", ".join(dict.fromkeys(pred["tools"][t]["why"] for t in pred["tools"]))
        agree = pred["scope"] == seen_scope
        cells.append(Cell(probe.id, LIST, "list-failure", pred["scope"], seen_scope, agree, why))
    if observation.get("calls_compared") is False:  # a list-only record: nothing was called
        return cells
    observed_calls = list(observation["calls"])
    for pc in pred["calls"]:
        oc = next((c for c in observed_calls if c["tool"] == pc["tool"]), None)
        if oc is not None:
            observed_calls.remove(oc)
        seen = (
            (oc["arguments"] if oc.get("has_arguments", True) else None)
            if oc and oc["sent"]
            else NOT_SENT
        )
        agree = any(same(v, seen) for v in pc["variants"])
        shown = pc["variants"][0] if len(pc["variants"]) == 1 else {"any of": pc["variants"]}
        cells.append(Cell(probe.id, pc["tool"], "arguments", shown, seen, agree, pc["why"]))
        raw = next((t for t in probe.tools if t["name"] == pc["tool"]), {})
        if oc and oc["sent"] and "outputSchema" in raw and oc.get("result") is not None:
            # the server did the work: does the model get its answer, or an error?
            want, why = pc.get("result", ("text", ""))
            got = observed_result(oc["result"])
            cells.append(Cell(probe.id, pc["tool"], "result", want, got, want == got, why))
    return cells


def observed_scope(observation: dict) -> str | None:
    """How far the client's list failure reached in a record: ``run`` when the client raised it
    (``list-failed``: the driver got the exception; or an ``aborted`` run), ``server`` when it
    went on without the probe server's tools (``no-probe-tools``), else None (no failure)."""
    outcome = observation.get("outcome")
    if outcome == "list-failed" or aborted(observation):
        return "run"
    return "server" if outcome == "no-probe-tools" else None


def agreement(cells: list[Cell]) -> tuple[int, int]:
    """(cells that agree, all cells)."""
    return sum(1 for c in cells if c.agree), len(cells)


@dataclass(frozen=True)
class RecordDrift:
    """A record's cells, and the probe sets it holds that could not be judged: the client made
    no model request and the record does not say why (a timeout, a harness error), so neither
    "visible" nor "absent" is known. Counted, never dropped silently."""

    cells: tuple[Cell, ...]
    unjudged: tuple[str, ...]


def aborted(obs: dict) -> bool:
    """True when the record shows the client gave up before any model request: its driver
    reported the exception that ended the run (``ok`` false, an ``error``), and the run did not
    time out. Then nothing reached the model: every tool absent, every call not sent."""
    driver = obs.get("driver")
    run = obs.get("run") or {}
    return (
        obs.get("outcome") == "no-model-request"
        and not run.get("timed_out")
        and isinstance(driver, dict)
        and driver.get("ok") is False
        and bool(driver.get("error"))
    )


def judge_record(profile: Profile, record: dict, probe_sets: dict[str, ProbeSet]) -> RecordDrift:
    """Drift over every probe set a record holds (sets this mcp-matrix no longer has, or took on
    an older version of a set, are skipped). A set with no model request is compared as the whole
    run aborted (every tool absent, every call not sent: what the profile's ``list-rejected``
    rule predicts) when the record shows an abort (``aborted``), else counted as unjudged."""
    cells: list[Cell] = []
    unjudged: list[str] = []
    for set_id, obs in record.get("probe_sets", {}).items():
        probe = probe_sets.get(set_id)
        if probe is None or obs.get("probe_digest") not in (None, probe_digest(probe)):
            continue  # taken on an older version of the set: its cells would compare other tools
        if obs.get("outcome") == "no-model-request" and not aborted(obs):
            unjudged.append(set_id)
            continue
        cells += drift(profile, probe, obs, obs.get("server_name", "probe"))
    return RecordDrift(tuple(cells), tuple(unjudged))


def record_drift(profile: Profile, record: dict, probe_sets: dict[str, ProbeSet]) -> list[Cell]:
    """The cells of ``judge_record`` (its unjudged sets are there)."""
    return list(judge_record(profile, record, probe_sets).cells)
