"""The calibration record: what a real client was observed doing on each probe set.

A record is versioned JSON (``clients/calibrations/<profile>/<version>.json``) that a profile
cites as ``observed`` evidence. It keeps, per probe set: each probe tool as the client showed
it to its model (present or not, name, parameter schema, description), each scripted call as it
reached the server (from the tap) or that it never did, and a summary of the tap log (the
handshake in order, ``initialize`` params, method counts). Observations are derived here
from a ``HarnessRun``, never typed by hand.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter
from pathlib import Path

from mcp_matrix.calibrate.harness import HarnessRun, parse_driver_line
from mcp_matrix.calibrate.model_requests import ModelTool, correlate, model_tools
from mcp_matrix.calibrate.probe import ProbeSet
from mcp_matrix.calibrate.tap import C2S, S2C, messages
from mcp_matrix.calibrate.tool_results import model_results
from mcp_matrix.core.errors import InputError

FORMAT = "mcp-matrix-calibration"
SEARCH_TOOL = "ToolSearch"  # the fake model's own loading call (deferred tools), never a server's
VERSION = 1


def offered(requests: list[dict]) -> tuple[str | None, list[ModelTool]]:
    """The tools of the richest model request (the most tools): what the model was shown."""
    best: tuple[str | None, list[ModelTool]] = (None, [])
    for r in requests:
        if r.get("method") != "POST":
            continue
        tools = model_tools(r.get("api", ""), r.get("body"))
        if len(tools) > len(best[1]):
            best = (r["api"], tools)
    return best


def tap_summary(entries: list[dict]) -> dict:
    """The handshake in order (client methods up to the first ``tools/list``), the
    ``initialize`` request's params, and how often each method was sent."""
    handshake: list[str] = []
    init = None
    methods: Counter = Counter()
    errors: list[object] = []  # the error objects as the server sent them
    reached_list = False
    for direction, msg in messages(entries):
        method = msg.get("method")
        if direction == C2S and isinstance(method, str):
            methods[method] += 1
            if not reached_list:
                handshake.append(method)
                reached_list = method == "tools/list"
            if method == "initialize" and init is None:
                params = given if isinstance(given := msg.get("params"), dict) else {}
                init = {k: params.get(k) for k in ("protocolVersion", "clientInfo", "capabilities")}
        elif direction == S2C and "error" in msg and len(errors) < 10:
            errors.append(msg["error"])
    transport = next((e.get("transport") for e in entries if e.get("event") == "start"), None)
    return {
        "transport": transport,
        "handshake": handshake,
        "server_discover": "server/discover" in methods,
        "initialize": init,
        "methods": dict(methods),
        "server_errors": errors,
    }


def listed_tools(driver: dict | None) -> list[ModelTool]:
    """The tools a list-only driver printed (``notes.listed``: name, description, inputSchema)."""
    notes = driver.get("notes") if isinstance(driver, dict) else None
    items = notes.get("listed") if isinstance(notes, dict) else None
    return [
        ModelTool(name=t["name"], description=t.get("description"), parameters=t.get("inputSchema"))
        for t in items or ()
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    ]


def observe(run: HarnessRun, probe: ProbeSet) -> dict:
    """Observations for one probe set from one run: tools as the model saw them, calls as the server got them.

    A list-only recipe (``list_only``) makes no model request: the tools are those its driver
    printed, correlated by name and content, and its calls are not compared (``calls_compared``)."""
    if run.recipe.list_only:
        return _observe_list(run, probe)
    api, tools = offered(run.requests)
    listed = any(
        d == S2C and isinstance(m.get("result"), dict) and "tools" in m["result"]
        for d, m in messages(run.tap)
    )
    tap_calls = [
        m["params"]
        for direction, m in messages(run.tap)
        if direction == C2S
        and m.get("method") == "tools/call"
        and isinstance(m.get("params"), dict)
    ]
    obs_tools = observed_tools(
        probe, correlate(tools, probe.tools, called_as(run.requests, tap_calls))
    )
    sent: dict[str, list] = {}
    for p in tap_calls:
        sent.setdefault(p.get("name"), []).append(p)
    calls = []
    results = model_results(run.requests)  # what the model was told each call gave
    for c in probe.calls:
        got = sent.get(c.tool) or []
        if got:
            # several calls reached this tool (one the client sent it for another tool, or two of
            # the script's in parallel): the one with the intended arguments is this call's, else
            # the first; so the pairing does not hang on the order the calls ran in
            p = next((q for q in got if q.get("arguments") == c.arguments), got[0])
            got.remove(p)
            calls.append(
                {
                    "tool": c.tool,
                    "intended": c.arguments,
                    "sent": True,
                    "arguments": p.get("arguments"),
                    "has_arguments": "arguments" in p,
                    "meta": p.get("_meta"),
                    "result": results.get(c.tool),
                }
            )
        else:
            calls.append(
                {
                    "tool": c.tool,
                    "intended": c.arguments,
                    "sent": False,
                    "result": results.get(c.tool),
                }
            )
    if not run.requests or not any(r.get("method") == "POST" for r in run.requests):
        outcome = "no-model-request"
    elif not any(t["present"] for t in obs_tools.values()):
        outcome = "no-probe-tools" if listed else "no-tools-list"
    else:
        outcome = "ok"
    driver = parse_driver_line(run.stdout) if run.recipe.kind == "library" else None
    if (
        outcome == "no-model-request"
        and listed
        and driver
        and not driver.get("ok")
        and not driver.get("tools_seen")
    ):
        # a library that raised on the list it got (e.g. the Python SDK's gate): no tool reached
        # the model, which is an observation (every tool absent), not a run that failed to measure
        outcome = "list-failed"
    return {
        "outcome": outcome,
        "api": api,
        "offered": [t.name for t in tools],  # the raw names the client gave its model
        "model_requests": sum(1 for r in run.requests if r.get("method") == "POST"),
        "tools": obs_tools,
        "calls": calls,
        "driver": driver,
        "run": {"returncode": run.returncode, "timed_out": run.timed_out, "seconds": run.seconds},
        "client_output_tail": _clean_tail(run.stderr if run.returncode else "")
        if outcome != "ok"
        else "",
        "tap": tap_summary(run.tap),
        **_refusals(run.requests),
    }


def _refusals(requests: list[dict]) -> dict:
    """The provider limits the fake endpoint enforced on this run (a set with provider_limits),
    each marked as such: what the user of the client would have been answered."""
    refused = [r["refusal"] for r in requests if r.get("refusal")]
    return {"provider_refusals": refused} if refused else {}


def observed_tools(probe: ProbeSet, shown: dict[str, ModelTool]) -> dict[str, dict]:
    """Per probe tool: present or not, and as what (name, schema, description)."""
    out: dict[str, dict] = {}
    for raw in probe.tools:
        hit = shown.get(raw["name"])
        out[raw["name"]] = (
            {
                "present": True,
                "name": hit.name,
                "schema": hit.parameters,
                "description": hit.description,
            }
            if hit
            else {"present": False}
        )
    return out


def same_content(tools: list[ModelTool], probe: ProbeSet) -> dict[str, str]:
    """Listed name -> the one probe tool with exactly its description and inputSchema: with no
    call to go by, the strongest evidence of which tool a renamed one is (``clash-c`` listed as
    ``mcp__probe__clash_c`` is not ``clash.c``, whose name cleans the same)."""
    out: dict[str, str] = {}
    for tool in tools:
        same = [
            raw["name"]
            for raw in probe.tools
            if raw.get("description") == tool.description
            and raw.get("inputSchema") == tool.parameters
        ]
        if len(same) == 1:
            out[tool.name] = same[0]
    return out


def _observe_list(run: HarnessRun, probe: ProbeSet) -> dict:
    driver = parse_driver_line(run.stdout)
    tools = listed_tools(driver)
    obs_tools = observed_tools(probe, correlate(tools, probe.tools, same_content(tools, probe)))
    if driver is None or not driver.get("ok"):
        outcome = "no-tools-list"
    elif not any(t["present"] for t in obs_tools.values()):
        outcome = "no-probe-tools"
    else:
        outcome = "ok"
    return {
        "outcome": outcome,
        "api": "tools-list",
        "offered": [t.name for t in tools],
        "model_requests": 0,
        "calls_compared": False,  # the client listed its tools; nothing was called
        "tools": obs_tools,
        "calls": [{"tool": c.tool, "intended": c.arguments, "sent": False} for c in probe.calls],
        "driver": driver,
        "run": {"returncode": run.returncode, "timed_out": run.timed_out, "seconds": run.seconds},
        "client_output_tail": _clean_tail(run.stderr) if outcome != "ok" else "",
        "tap": tap_summary(run.tap),
    }


def called_as(requests: list[dict], tap_calls: list[dict]) -> dict[str, str]:
    """Model-facing name -> the server tool the client called when the fake model used it.

    Why: a call the tap saw for a server tool no fake-model call meant is the client's own word
    on which offered tool that is. Calls run in any order (clients call in parallel), so they are
    paired as multisets: each fake-model call whose tool the tap saw is set aside; one left on each
    side is a mapping, anything else claims nothing."""
    made = [
        c
        for r in requests
        for c in r.get("calls") or []
        if isinstance(c, dict) and c.get("tool") != SEARCH_TOOL
    ]
    left = [p["name"] for p in tap_calls if isinstance(p.get("name"), str)]
    unmatched = []
    for c in made:
        if c.get("tool") in left:
            left.remove(c["tool"])
        else:
            unmatched.append(c)
    if len(unmatched) == 1 and len(left) == 1:
        return {str(unmatched[0].get("model_name")): left[0]}
    return {}


def _clean_tail(text: str, limit: int = 1500) -> str:
    return text[-limit:]


def new_record(
    profile: str,
    client: str,
    version: str,
    recipe: str,
    probe_sets: dict[str, dict],
    command: str = "",
) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "profile": profile,
        "client": client,
        "client_version": version,
        "date": _dt.date.today().isoformat(),
        "recipe": recipe,
        "client_command": command,
        "probe_sets": probe_sets,
    }


def merge_probe_sets(base: dict, newer: dict) -> dict:
    """``base`` with the probe sets of ``newer`` (the same client version) added or replaced.

    A probe set added to a record on a later day keeps that day as its own ``date``, so the
    record still says when each observation was made; the record's ``date`` stays the first.
    """
    for key in ("profile", "client_version"):
        if base.get(key) != newer.get(key):
            raise InputError(
                f"cannot merge a record of {newer.get(key)!r} into one of {base.get(key)!r} ({key})"
            )
    sets = dict(base.get("probe_sets") or {})
    for set_id, obs in (newer.get("probe_sets") or {}).items():
        sets[set_id] = (
            {**obs, "date": newer["date"]} if newer.get("date") != base.get("date") else obs
        )
    return {**base, "probe_sets": sets}


def calibrations_dir() -> Path:
    from mcp_matrix.profiles.loader import bundled_profiles_dir

    return bundled_profiles_dir() / "calibrations"


def write_record(record: dict, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(record, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8"
    )


def load_record(path: str | Path) -> dict:
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such calibration record", where=str(path)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"not a readable calibration record: {exc}", where=str(path)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"not a calibration record (format is not {FORMAT!r})", where=str(path))
    if doc.get("version") != VERSION:
        raise InputError(
            f"calibration record version {doc.get('version')!r}; this mcp-matrix reads {VERSION}",
            where=str(path),
        )
    return doc


def latest_record(profile: str) -> tuple[Path, dict] | None:
    """The newest record of ``profile`` (by date, then version), or None."""
    folder = calibrations_dir() / profile
    found = []
    for path in folder.glob("*.json"):
        try:
            doc = load_record(path)
        except InputError:
            continue
        found.append((record_rank(doc), path, doc))
    if not found:
        return None
    _, path, doc = max(found, key=lambda f: f[0])
    return path, doc


def record_rank(doc: dict) -> tuple:
    """How new a record is: by date, then by the client's version."""
    return doc.get("date", ""), _version_key(doc.get("client_version", ""))


def _version_key(v: str) -> tuple:
    return tuple(int(p) if p.isdigit() else 0 for p in v.replace("-", ".").split("."))
