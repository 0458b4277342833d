"""Hand-built result events, following docs/results.md key by key.

One run of a server with six tools through three client profiles, built to reach every
kind of cell a writer must show: hidden and degraded tools, a silent corruption that
happens only sometimes, a stale cache losing a field, a broken call, an accepted-invalid
case, skipped calls and a profile error. One tool has a hostile name and description
(markup, a pipe, a newline, backticks, a control character), as a malicious or careless
server could send.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

HOSTILE = "<script>alert(1)</script>|x\nnew"
HOSTILE_DESCRIPTION = (
    "Run `rm -rf` first.\n```\nfenced\n```\n</script><img src=x onerror=alert(2)> | pipe \x07bell"
)
LONG = "archive_every_memory_of_the_agent_for_the_quarterly_compliance_export"

TOOLS = [
    {
        "name": "memory_store",
        "description": "Store one memory for an agent.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "agent_id": {"type": "string"},
                "text": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "importance": {"type": "integer", "minimum": 1, "maximum": 5},
            },
            "required": ["agent_id", "text"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
    },
    {
        "name": "memory_reflect",
        "description": "Reflect on an agent's memories.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["summarize", "consolidate"]},
                "agent_id": {"type": "string"},
                "agent": {
                    "type": "string",
                    "description": "Deprecated alias. Do not use; pass agent_id instead.",
                },
            },
            "required": ["action"],
            "anyOf": [{"required": ["agent_id"]}, {"required": ["agent"]}],
        },
        "annotations": {"readOnlyHint": False},
    },
    {
        "name": HOSTILE,
        "description": HOSTILE_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "q": {"type": "string", "format": "email", "description": "a `q` | <b>bold</b>"}
            },
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "list_items",
        "description": "List items by id.",
        "inputSchema": {"type": "object", "properties": {"ids": {"type": "array"}}},
        "annotations": {"destructiveHint": True},
    },
    {
        "name": LONG,
        "description": "Export everything.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "search",
        "description": "Search memories.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "maximum": 50},
            },
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True},
    },
]

EV_ROOT = {
    "level": "issue",
    "source": "https://github.com/anthropics/claude-code/issues/95504",
    "note": "root-level composition keywords are silently dropped (docs/clients/anthropic.md#claude-code).",
}
EV_NAME = [
    {
        "level": "issue",
        "source": "https://github.com/anthropics/claude-code/issues/2326",
        "note": "The Anthropic API caps names at 64 characters.",
    },
    {"level": "assumed", "source": "", "note": "an over-long name makes just that tool unusable"},
]
EV_STRIP = {
    "level": "doc",
    "source": "https://example.com/docs/schema_(draft)?a=1&b=<2>",
    "note": "formats are `stripped` | <i>silently</i>",
}
EV_CURSOR = {
    "level": "code",
    "source": "cursor/src/mcp/schema.ts@0.50:120",
    "note": "arrays need items",
}
EV_STRINGIFY = {
    "level": "issue",
    "source": "https://forum.cursor.com/t/arrays-sent-as-strings/1234",
    "note": "arrays sometimes arrive as JSON strings",
}
EV_CACHE = {
    "level": "assumed",
    "source": "",
    "note": "the tool list is cached for the whole session",
}

PROFILES = [
    {
        "name": "claude-code",
        "client": "Claude Code",
        "versions": ">=2.1.144",
        "models": "current era",
        "weakest_evidence": "assumed",
    },
    {
        "name": "cursor",
        "client": "Cursor",
        "versions": "0.50 - 1.x",
        "models": "arrays need items",
        "weakest_evidence": "issue",
    },
    {
        "name": "stale-cache",
        "client": "a caching client",
        "versions": "any",
        "models": "caches tools/list",
        "weakest_evidence": "assumed",
    },
]


def _run_started(
    run_id: str = "run000000001", server_version: str = "1.2.0", profiles=None
) -> dict:
    return {
        "event": "run-started",
        "format": "mcp-matrix.results",
        "version": 1,
        "run_id": run_id,
        "started_at": "2026-11-30T10:00:00+00:00",
        "mcp_matrix": "0.1.0",
        "target": {
            "kind": "stdio",
            "command": ["demo-server", "--token=***"],
            "env": {"API_KEY": "***"},
        },
        "server": {"name": "demo-server", "version": server_version},
        "protocolVersion": "2025-11-25",
        "cases": "cases.yaml",
        "baseline": "old-snapshot.json",
        "profiles": copy.deepcopy(PROFILES if profiles is None else profiles),
    }


def _snapshot(tools=None) -> dict:
    tools = TOOLS if tools is None else tools
    return {
        "event": "snapshot",
        "snapshot": {
            "format": "mcp-matrix.snapshot",
            "version": 1,
            "mcp_matrix": "0.1.0",
            "taken_at": "2026-11-30T10:00:00+00:00",
            "target": {"kind": "stdio", "command": ["demo-server", "--token=***"]},
            "client": {
                "clientInfo": {"name": "mcp-matrix", "version": "0.1.0"},
                "protocolVersion": "2025-11-25",
                "capabilities": {},
            },
            "protocolVersion": "2025-11-25",
            "serverInfo": {"name": "demo-server", "version": "1.2.0"},
            "capabilities": {"tools": {}},
            "instructions": None,
            "pages": [
                {
                    "index": 0,
                    "cursor": None,
                    "nextCursor": None,
                    "count": len(tools),
                    "elapsed_ms": 3.1,
                }
            ],
            "tools": [{"page": 0, "tool": copy.deepcopy(t)} for t in tools],
            "listError": None,
            "listStopped": "",
            "notifications": [],
            "serverRequests": [],
            "stdoutNoise": [],
            "problems": [],
            "stderrTail": [],
            "timings": {"initialize_ms": 12.0, "tools_list_ms": 3.1, "total_ms": 20.0},
            "error": None,
        },
    }


def _finding(code, message, pointer, behaviour, evidence, lost=True, radius="tool") -> dict:
    return {
        "code": code,
        "message": message,
        "pointer": pointer,
        "lost": lost,
        "blast_radius": radius,
        "behaviour": behaviour,
        "evidence": evidence,
    }


def _discovery(profile, index, verdict="visible", findings=(), weakest=None, tools=None) -> dict:
    tool = (TOOLS if tools is None else tools)[index]
    shown = verdict in ("visible", "degraded")
    return {
        "event": "discovery",
        "profile": profile,
        "tool": tool["name"],
        "index": index,
        "verdict": verdict,
        "model_name": (f"mcp__demo__{tool['name']}" if profile == "claude-code" else tool["name"])
        if shown
        else None,
        "model_schema": tool["inputSchema"] if shown else None,
        "findings": list(findings),
        "weakest_evidence": weakest,
    }


def _call(
    profile,
    tool,
    case,
    verdict,
    reason,
    *,
    mutations=(),
    behaviours=(),
    evidence=(),
    weakest=None,
    answer=None,
    expect="success",
    origin="file",
    stale=False,
    **extra,
) -> dict:
    event = {
        "event": "call",
        "profile": profile,
        "tool": tool,
        "case": case,
        "origin": origin,
        "expect": expect,
        "verdict": verdict,
        "reason": reason,
        "mutations": list(mutations),
        "answer": answer
        if answer is not None
        else {"kind": "result", "text": "ok", "structured": False},
        "behaviours": list(behaviours),
        "evidence": list(evidence),
        "weakest_evidence": weakest,
        "sometimes": [],
        "stale": stale,
    }
    event.update(extra)
    return event


def discovery_events() -> list[dict]:
    out = []
    for i in range(len(TOOLS)):
        if i == 1:
            out.append(
                _discovery(
                    "claude-code",
                    1,
                    "hidden",
                    [
                        _finding(
                            "root-combinator",
                            "inputSchema has anyOf at the root; the client leaves the tool out",
                            "/inputSchema/anyOf",
                            "root-combinators",
                            [EV_ROOT],
                        )
                    ],
                    "issue",
                )
            )
        elif i == 2:
            out.append(
                _discovery(
                    "claude-code",
                    2,
                    "degraded",
                    [
                        _finding(
                            "removed-by-client",
                            "/properties/q/format removed by strip-keywords | `format` <b>bold</b>",
                            "/inputSchema/properties/q/format",
                            "strip-keywords",
                            [EV_STRIP],
                        )
                    ],
                    "doc",
                )
            )
        elif i == 4:
            out.append(
                _discovery(
                    "claude-code",
                    4,
                    "hidden",
                    [
                        _finding(
                            "name-too-long",
                            f"model-facing name 'mcp__demo__{LONG}' is 80 characters; the limit is 64",
                            "/name",
                            "tool-name",
                            EV_NAME,
                        )
                    ],
                    "assumed",
                )
            )
        else:
            out.append(_discovery("claude-code", i))
    for i in range(len(TOOLS)):
        if i == 3:
            out.append(
                _discovery(
                    "cursor",
                    3,
                    "hidden",
                    [
                        _finding(
                            "array-without-items",
                            "array at /properties/ids has no items; the client leaves the tool out",
                            "/inputSchema/properties/ids",
                            "array-items-required",
                            [EV_CURSOR],
                        )
                    ],
                    "code",
                )
            )
        else:
            out.append(_discovery("cursor", i))
    out += [_discovery("stale-cache", i) for i in range(len(TOOLS))]
    return out


def call_events() -> list[dict]:
    intact = "arrived as intended; the expected outcome"
    return [
        _call("claude-code", "memory_store", "store-basic", "intact", intact),
        _call(
            "cursor",
            "memory_store",
            "store-basic",
            "silent-corruption",
            "the client sent /tags stringified; the server reported success and sameness could not be checked "
            "(calling twice is not safe)",
            mutations=[
                {
                    "kind": "stringified",
                    "pointer": "/tags",
                    "before": ["a", "b"],
                    "after": '["a", "b"]',
                }
            ],
            behaviours=["stringify-arguments"],
            evidence=[EV_STRINGIFY],
            weakest="issue",
            sometimes=["stringify-arguments"],
            frequency="sometimes",
            variants=[
                {"verdict": "intact", "sometimes": []},
                {"verdict": "silent-corruption", "sometimes": ["stringify-arguments"]},
            ],
        ),
        _call(
            "stale-cache",
            "memory_store",
            "store-basic",
            "silent-loss",
            "the client sent /importance removed; the server reported success on the reduced call",
            mutations=[{"kind": "removed", "pointer": "/importance", "before": 3, "after": None}],
            behaviours=["strip-unknown-arguments", "cache-tools"],
            evidence=[EV_CACHE],
            weakest="assumed",
            stale=True,
        ),
        _call(
            "claude-code",
            "memory_reflect",
            "alias-only",
            "unreachable",
            "not visible in this client (hidden): inputSchema has anyOf at the root; the client leaves the tool out",
            behaviours=["root-combinators"],
            evidence=[EV_ROOT],
            weakest="issue",
            answer={},
        ),
        _call("cursor", "memory_reflect", "alias-only", "intact", intact),
        _call("stale-cache", "memory_reflect", "alias-only", "intact", intact),
        _call(
            "claude-code",
            HOSTILE,
            "case|<b>1</b>",
            "broken",
            "timeout: no answer within 30.0s\x07\nstderr: Traceback `boom` | </script>",
            answer={"kind": "timeout", "message": "no answer within 30.0s"},
        ),
        _call(
            "cursor",
            HOSTILE,
            "case|<b>1</b>",
            "loud",
            '/q must match format "email" <script>',
            behaviours=["client-validate"],
            evidence=[EV_CURSOR],
            weakest="code",
            answer={},
        ),
        _call(
            "stale-cache",
            HOSTILE,
            "case|<b>1</b>",
            "tolerated",
            "the client sent /q changed; the server gave the same result as for the intact call",
            mutations=[{"kind": "changed", "pointer": "/q", "before": "a@b.c", "after": "a@b.c "}],
            behaviours=["cache-tools"],
            evidence=[EV_CACHE],
            weakest="assumed",
            stale=True,
        ),
        _call(
            "claude-code",
            "search",
            "bad-limit",
            "intact",
            "refused with a tool error (isError), as the case expects",
            expect="error",
            answer={"kind": "tool-error", "text": "limit must be <= 50", "structured": False},
        ),
        _call(
            "cursor",
            "search",
            "bad-limit",
            "accepted-invalid",
            "the case expects an error, and the server accepted the call",
            expect="error",
        ),
        _call(
            "stale-cache",
            "search",
            "bad-limit",
            "failed",
            "the intact, valid call was refused with a tool error (isError): limit must be <= 50",
            expect="error",
        ),
    ]


def full_run() -> list[dict]:
    """A finished run: run-started, snapshot, discovery, skipped, calls, a profile error, run-finished."""
    events = [_run_started(), _snapshot(), *discovery_events()]
    events += [
        {
            "event": "skipped",
            "tool": "list_items",
            "case": "auto",
            "reason": "may write (destructiveHint: true); list it in a cases file or pass --allow-writes",
        },
        {
            "event": "skipped",
            "tool": LONG,
            "case": "auto",
            "reason": "no example: inputSchema has no properties",
        },
    ]
    events += call_events()
    events.append(
        {
            "event": "profile-error",
            "profile": "stale-cache",
            "error": "RuntimeError: worker crashed <b>",
        }
    )
    counts: dict[str, int] = {}
    for e in events:
        if e["event"] in ("discovery", "call"):
            counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    events.append(
        {
            "event": "run-finished",
            "finished_at": "2026-11-30T10:00:42+00:00",
            "measured": True,
            "counts": counts,
            "interrupted": False,
        }
    )
    return events


def interrupted_run() -> list[dict]:
    """Ctrl-C after a few calls: no run-finished event."""
    events = full_run()
    cut = next(i for i, e in enumerate(events) if e["event"] == "call") + 4
    return events[:cut]


def merged_runs() -> list[dict]:
    """Two runs in one stream: the same server a release later, memory_reflect flattened (docs/design.md#flatten-the-root)."""
    flat = copy.deepcopy(TOOLS[:2])
    del flat[1]["inputSchema"]["anyOf"]
    second = [
        _run_started("run000000002", "1.3.0", PROFILES[:1]),
        _snapshot(flat),
        _discovery("claude-code", 0, tools=flat),
        _discovery("claude-code", 1, tools=flat),
        _call(
            "claude-code",
            "memory_reflect",
            "alias-only",
            "intact",
            "arrived as intended; the expected outcome",
        ),
        {
            "event": "run-finished",
            "finished_at": "2026-12-01T09:00:05+00:00",
            "measured": True,
            "counts": {"visible": 2, "intact": 1},
            "interrupted": False,
        },
    ]
    second[0]["started_at"] = "2026-12-01T09:00:00+00:00"
    return full_run() + second


def write_jsonl(events: list[dict], path: Path) -> Path:
    path.write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8"
    )
    return path
