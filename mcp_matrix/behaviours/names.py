"""Model-facing tool names: how each client builds, cleans and shortens them (docs/clients/names.md#model-facing-names).

The ``tool-name`` behaviour and the pure string functions under it. Every rule cites
docs/clients/ (docs/clients/names.md#model-facing-names is the summary table).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

from mcp_matrix.behaviours.outcomes import consequence, label, note, param, refuse_tool
from mcp_matrix.behaviours.registry import behaviour, freeze
from mcp_matrix.behaviours.rewrite import memo_cache
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.materiality import renamed
from mcp_matrix.core.model import Finding, ListState, evolve
from mcp_matrix.core.verdicts import V

# How a server or tool name is cleaned before it is put into the template.
PART_TRANSFORMS = (
    "none",
    "vscode-label",  # docs/clients/vscode.md#vs-code: label.toLowerCase().replace(/[^a-z0-9_.-]+/g,'_').slice(0,13)
    "continue-prefix",  # docs/clients/continue.md#continue: lower, [^a-z0-9]+ -> _, trimmed of _, _+ -> _
    # docs/clients/roo-code.md#roo-code: whitespace -> _, invalid chars deleted, --+ -> -, leading fix, empty -> _unnamed
    "roo-sanitize",
    "agents-sanitize",  # docs/clients/openai.md#agents-sdk: non-[A-Za-z0-9_-] -> _, stripped of leading/trailing _-
    # docs/clients/vscode.md#vs-code VS Code core: chars outside [a-z0-9_-] -> _ (case handling unverified)
    "replace-invalid",
)

HASH_STYLES = (
    "codex",  # docs/clients/openai.md#codex: name[:max-40] + sha1_hex(raw) (40 hex)
    "sha1-8",  # docs/clients/cline.md#cline Cline SDK: name[:max-9] + "_" + sha1(raw)[:8]
    "sha1-8-rstrip",  # docs/clients/openai.md#agents-sdk Agents SDK: name[:max-9].rstrip("_-") + "_" + sha1(seed)[:8]
    "codex-identity",  # docs/clients/openai.md#codex 0.171: name[:max-13] + codex_collision_suffix
)


def transform_part(kind: str, text: str) -> str:
    """Clean one part (server or tool name) as the client does before joining."""
    if kind == "vscode-label":
        return re.sub(r"[^a-z0-9_.-]+", "_", text.lower())[:13]
    if kind == "continue-prefix":
        out = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
        return re.sub(r"_+", "_", out)
    if kind == "roo-sanitize":
        out = re.sub(r"\s", "_", text)
        out = re.sub(r"[^a-zA-Z0-9_-]", "", out)
        out = re.sub(r"-{2,}", "-", out)
        if out and not re.match(r"[a-zA-Z_]", out):
            out = "_" + out
        return out or "_unnamed"
    if kind == "agents-sanitize":
        return re.sub(r"[^A-Za-z0-9_-]", "_", text).strip("_-")
    if kind == "replace-invalid":
        # The regex itself was not seen (docs/clients/vscode.md#vs-code); case-insensitive is the conservative reading.
        return re.sub(r"[^A-Za-z0-9_-]", "_", text)
    return text


@lru_cache(maxsize=256)
def _server_part(kind: str, server: str) -> str:
    return transform_part(kind, server)  # the same for every tool of the list


def render(template: str, server: str, tool: str, current: str, uid: str) -> str:
    """Fill ``{server}``, ``{tool}``, ``{name}`` (the name so far) and ``{uid5}``."""
    fields = {"server": server, "tool": tool, "name": current, "uid5": uid}
    return "".join(fields[part] if field else part for field, part in _template(template))


_FIELDS = ("server", "tool", "name", "uid5")
_TEMPLATES: dict[str, tuple[tuple[bool, str], ...]] = {}


def _template(template: str) -> tuple[tuple[bool, str], ...]:
    """``template`` as ``(is_field, text)`` parts, parsed once: a ``{`` that does not open a
    known field is literal text (and the scan goes on from the next character)."""
    parts = _TEMPLATES.get(template)
    if parts is not None:
        return parts
    out: list[tuple[bool, str]] = []
    literal: list[str] = []
    i = 0
    while i < len(template):
        if template[i] == "{":
            end = template.find("}", i)
            field = template[i + 1 : end] if end != -1 else ""
            if field in _FIELDS:
                if literal:
                    out.append((False, "".join(literal)))
                    literal = []
                out.append((True, field))
                i = end + 1
                continue
        literal.append(template[i])
        i += 1
    if literal:
        out.append((False, "".join(literal)))
    parts = _TEMPLATES[template] = tuple(out)
    return parts


def sha1_hex(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def hashed(name: str, raw: str, max_length: int, style: str) -> str:
    """Shorten ``name`` to ``max_length`` with a SHA-1 of ``raw`` (the unsanitised name)."""
    digest = sha1_hex(raw)
    if style == "codex":
        return name[: max(0, max_length - 40)] + digest
    stem = name[: max(0, max_length - 9)]
    if style == "sha1-8-rstrip":
        stem = stem.rstrip("_-")
    return stem + "_" + digest[:8]


def codex_collision_suffix(server: str, raw: str) -> str:
    """Codex's ``callable_name_hash_suffix`` (codex-rs/codex-mcp/src/tools.rs@00a35b1b,
    ``normalize_tools_for_model_with_prefix``): ``_`` + the first 12 hex digits of the SHA-1 of
    the tool's raw identity ``server\0namespace\0connector\0callable name\0tool name``; for an
    MCP server's tool the namespace is the server's name, there is no connector and the callable
    name is the tool's (reproduces clients/calibrations/codex/0.171.0.json, probe set name-collision)."""
    return "_" + sha1_hex(f"{server}\0{server}\0\0{raw}\0{raw}")[:12]


def ellipsised(name: str, max_length: int) -> str:
    """Gemini CLI (docs/clients/google.md#gemini-cli): ``n[:30] + "..." + n[-30:]`` for a 63-character cap."""
    keep = max(0, (max_length - 3) // 2)
    return name[:keep] + "..." + (name[-keep:] if keep else "")


def uid5(server: str) -> str:
    """A stand-in for Cline's per-session ``nanoid(5)`` server uid (random in the client)."""
    return sha1_hex(server)[:5]


_NAME_PARAMS = {
    "template": param(
        "string",
        "Model-facing name: {server}, {tool} (after the part transforms), "
        "{name} (the name so far), {uid5} (Cline's per-session id).",
        "{name}",
    ),
    "server_transform": param(
        list(PART_TRANSFORMS), "How the server name is cleaned first.", "none"
    ),
    "tool_transform": param(list(PART_TRANSFORMS), "How the tool name is cleaned first.", "none"),
    "keep_if_prefixed": param(
        "boolean",
        "Use the tool name alone if it already starts with the cleaned server name (Continue).",
        False,
    ),
    "prefix_if_absent": param("string", "Prepend this unless the name already starts with it.", ""),
    "invalid_chars": param(
        "string", "Regex matching ONE character the client does not allow.", "", format="regex"
    ),
    "invalid_action": param(
        ["replace", "replace-runs", "delete", "hash", "drop-tool", "session-broken", "keep"],
        "What an invalid character does (hash: runs replaced, then hashed like an overflow).",
        "replace",
    ),
    "replacement": param("string", "Replacement for an invalid character or run.", "_"),
    "empty_name": param(
        "string", "The name used when cleaning leaves nothing ('' keeps it empty).", ""
    ),
    "leading": param(
        "string", "Regex a valid FIRST character matches ('' = no rule).", "", format="regex"
    ),
    "leading_action": param(
        ["prefix-underscore", "drop-tool", "session-broken", "keep"],
        "What an invalid first character does.",
        "prefix-underscore",
    ),
    "max_length": param("integer", "Longest allowed name (0: no limit).", 0, minimum=0),
    "overflow": param(
        ["truncate", "hash", "ellipsis", "drop-tool", "session-broken", "keep"],
        "What a name over max_length does.",
        "truncate",
    ),
    "hash_style": param(
        list(HASH_STYLES),
        "codex: first max-40 + sha1 (40 hex); sha1-8: first max-9 "
        "+ '_' + sha1[:8]; sha1-8-rstrip: the same with _- stripped before '_'; "
        "codex-identity: first max-13 + Codex's '_' + 12 hex of the tool's identity (0.171).",
        "codex",
    ),
    "on_collision": param(
        ["skip-later", "suffix", "prefix-server", "session-broken", "keep", "hash-suffix"],
        "What a second tool with the same final name does: skipped (Codex, Roo), "
        "numbered _2, _3 ... (the numeric-suffix form is assumed), prefixed with the "
        "server id (Zed), the whole list refused (Agents SDK, Goose), kept, or "
        "hash-suffix (Codex 0.171, observed): the same raw name again is skipped, and tools "
        "whose different raw names clean to one name are all kept as <name>_<12 hex>, the hex "
        "from a SHA-1 of the server and raw tool names (codex_collision_suffix).",
        "keep",
    ),
    "calls_mapped_back": param(
        "boolean",
        "The client sends the model's call on a renamed tool under the server's name (false: "
        "it looks the call up by the raw name and fails, LlamaIndex): a rename that keeps "
        "every word then costs the model nothing.",
        True,
    ),
}


@behaviour("tool-name", "discovery", params=_NAME_PARAMS)
def tool_name(state: ListState, **params: JSON) -> ListState:
    """Build the model-facing name: template, cleaning, length rule, collisions (docs/clients/names.md#model-facing-names).

    Covers Claude Code ``mcp__s__t`` (docs/clients/anthropic.md#claude-code), Codex sanitise + 24+sha1 hash (docs/clients/openai.md#codex), Gemini CLI
    ``mcp_`` + ellipsis (docs/clients/google.md#gemini-cli), VS Code 13-char label slug + slice 64 (docs/clients/vscode.md#vs-code), Roo
    ``mcp--s--t`` (docs/clients/roo-code.md#roo-code), Cline native ``c<uid>0mcp0t`` (docs/clients/cline.md#native-tools) and SDK 55+sha1[:8] (docs/clients/cline.md#cline),
    Continue (docs/clients/continue.md#continue), Agents SDK (docs/clients/openai.md#agents-sdk), Zed (docs/clients/zed.md#zed), Goose (docs/clients/goose.md#goose).
    """
    if state.outcome != "ok":
        return state
    p = _NAME_DEFAULTS | params
    # what _name_one depends on: the server, the tool's names and these params
    key_params = (state.server, _frozen_params(p))
    tools = list(state.tools)
    used: dict[str, int] = {}
    hashed: set[int] = set()  # tools already given Codex's collision suffix
    uid = uid5(state.server)
    for i, tool in enumerate(tools):
        if tool.hidden:
            continue
        raw_tool = tool.server_name
        memo_key = (key_params, raw_tool, tool.name)
        result: tuple[Any, ...] | None = _NAMES.get(memo_key)
        if result is None:
            result = _name_one(state, raw_tool, tool.name, uid, p)
            if (
                len(result) == 2
            ):  # (name, findings); a refusal is a 4-tuple (a tool may be named "refuse")
                result = (result[0], tuple(result[1]))  # shared: copied before a note is added
            _NAMES[memo_key] = result
        if len(result) == 4:
            _, policy, code, message = result
            refused = refuse_tool(replace(state, tools=tuple(tools)), i, policy, code, message)
            if refused.outcome != "ok":
                return refused
            tools = list(refused.tools)
            continue
        name, findings = result
        owner = used.get(name)
        if (
            owner is not None
            and p["on_collision"] == "hash-suffix"
            and tools[owner].server_name != raw_tool
        ):
            if owner not in hashed:
                tools[owner] = _hash_renamed(tools[owner], name, state.server, label(tool))
                hashed.add(owner)
            tools[i] = _hash_renamed(
                evolve(tool, findings=tool.findings + tuple(findings)),
                name,
                state.server,
                label(tools[owner]),
            )
            hashed.add(i)
            continue
        if owner is not None and p["on_collision"] != "keep":
            findings = list(findings)
            other = label(tools[owner])
            policy = "skip-later" if p["on_collision"] == "hash-suffix" else p["on_collision"]
            if policy == "suffix":
                n = 2
                while f"{name}_{n}" in used:
                    n += 1
                renamed = f"{name}_{n}"
                findings.append(
                    note(
                        "name-collision-renamed",
                        f"model-facing name {name!r} is "
                        f"already taken by tool {other!r}; the client numbers this "
                        f"one: {renamed!r}",
                    )
                )
                name, owner = renamed, None
            if policy == "prefix-server":
                renamed = f"{state.server}_{name}"
                if p["max_length"]:
                    renamed = renamed[: p["max_length"]]
                if renamed not in used:
                    findings.append(
                        note(
                            "name-collision-renamed",
                            f"model-facing name {name!r} is "
                            f"already taken by tool {other!r}; the client prefixes the "
                            f"server id: {renamed!r}",
                        )
                    )
                    name = renamed
                    owner = None
            if owner is not None:
                message = f"model-facing name {name!r} is already taken by tool {other!r}; " + (
                    "the client rejects the tool list, so every request of the session fails"
                    if policy == V.SESSION_BROKEN.name
                    else "the client keeps the first and skips this one"
                )
                refused = refuse_tool(
                    replace(state, tools=tuple(tools)),
                    i,
                    "session-broken" if policy == V.SESSION_BROKEN.name else "drop-tool",
                    "name-collision",
                    message,
                )
                if refused.outcome != "ok":
                    return refused
                tools = list(refused.tools)
                continue
        used.setdefault(name, i)
        if name != tool.name or findings:
            tools[i] = evolve(tool, name=name, findings=tool.findings + tuple(findings))
    if all(a is b for a, b in zip(tools, state.tools)) and len(tools) == len(state.tools):
        return state  # nothing renamed or noted: the same list (discovery skips it at once)
    return evolve(state, tools=tuple(tools))


_NAME_DEFAULTS = {k: v.get("default") for k, v in _NAME_PARAMS.items()}
_FROZEN: dict[tuple | None, str] = {}


def _frozen_params(p: dict[str, Any]) -> str:
    """``freeze`` of the params ``_name_one`` reads (all but ``on_collision``), worked out once
    for each set of values: tool-name runs once a tool for profiles with many culprits
    (``simulate.discovery._alone``), and the text was a third of its cost."""
    try:
        key = tuple((k, type(v), v) for k, v in p.items())  # the type: True == 1, not alike
        hit = _FROZEN.get(key)
    except TypeError:  # a list among the values: not hashable, frozen each time
        key, hit = None, None
    if hit is None:
        hit = freeze({k: v for k, v in p.items() if k != "on_collision"})
        if key is not None:
            if len(_FROZEN) > 256:
                _FROZEN.clear()
            _FROZEN[key] = hit
    return hit


def _hash_renamed(tool: Any, name: str, server: str, other: str) -> Any:
    """``tool`` named ``name`` + Codex's collision suffix, with a note of the tool it collided with."""
    renamed = name + codex_collision_suffix(server, tool.server_name)
    return evolve(
        tool,
        name=renamed,
        findings=tool.findings
        + (
            note(
                "name-collision-renamed",
                f"model-facing name {name!r} is also {other!r}'s once cleaned; the client keeps "
                f"both and adds a 12-digit hex hash to each: {renamed!r}",
            ),
        ),
    )


_NAMES = memo_cache()  # (server, params, raw tool name, name so far) -> _name_one's answer
_REGEXES: dict[str, re.Pattern] = {}


def _regex(pattern: str) -> re.Pattern:
    compiled = _REGEXES.get(pattern)
    if compiled is None:
        compiled = _REGEXES[pattern] = re.compile(pattern)
    return compiled


def _renamed(before: str, after: str, p: dict) -> str:
    """A rename's materiality (``mcp_matrix.core.materiality.renamed``); when the client does not map
    the call back, the derived default (``guidance``) stands and the call behaviour says why."""
    return renamed(before, after) if p["calls_mapped_back"] else ""


def _name_one(state: ListState, raw_tool: str, current: str, uid: str, p: dict) -> Any:
    """One tool's model-facing name: ``(name, findings)`` or ``("refuse", policy, code, msg)``."""
    server = _server_part(p["server_transform"], state.server)
    part = transform_part(p["tool_transform"], raw_tool)
    if p["keep_if_prefixed"] and server and part.startswith(server):
        name = part
    else:
        name = render(p["template"], server, part, current, uid)
    raw_prefix = ""  # the unsanitised name (what a hash is taken of) is rendered only if needed
    if p["prefix_if_absent"] and not name.startswith(p["prefix_if_absent"]):
        name = p["prefix_if_absent"] + name
        raw_prefix = p["prefix_if_absent"]
    findings: list[Finding] = []
    force_hash = False
    if p["invalid_chars"]:
        found = _regex(p["invalid_chars"]).search(name) is not None
        bad = sorted(set(re.findall(p["invalid_chars"], name))) if found else []
        action = p["invalid_action"]
        if bad and action in ("drop-tool", V.SESSION_BROKEN.name):
            return (
                "refuse",
                action,
                "name-invalid",
                (
                    f"model-facing name {name!r} has characters the model API does not allow "
                    f"({''.join(bad)!r}); {consequence(action)}"
                ),
            )
        if bad and action != "keep":
            before = name
            if action == "replace":
                name = re.sub(p["invalid_chars"], p["replacement"], name)
            elif action in ("replace-runs", "hash"):
                name = re.sub(f"(?:{p['invalid_chars']})+", p["replacement"], name)
                force_hash = action == "hash"
            else:
                name = re.sub(p["invalid_chars"], "", name)
            findings.append(
                note(
                    "name-sanitised",
                    f"model-facing name {before!r} has characters "
                    f"the client does not allow ({''.join(bad)!r}); it becomes {name!r}",
                    materiality=_renamed(before, name, p),
                )
            )
    if not name and p["empty_name"]:
        name = p["empty_name"]
    if p["leading"] and name and not _regex(p["leading"]).match(name):
        action = p["leading_action"]
        if action in ("drop-tool", V.SESSION_BROKEN.name):
            return (
                "refuse",
                action,
                "name-invalid",
                (
                    f"model-facing name {name!r} starts with a character the model API does "
                    f"not allow; {consequence(action)}"
                ),
            )
        if action == "prefix-underscore":
            findings.append(
                note(
                    "name-sanitised",
                    f"model-facing name {name!r} does not start "
                    f"with a letter or '_'; it becomes {'_' + name!r}",
                    materiality=_renamed(name, "_" + name, p),
                )
            )
            name = "_" + name
    limit = p["max_length"]
    if limit and (len(name) > limit or force_hash):
        overflow = "hash" if force_hash else p["overflow"]
        if overflow in ("drop-tool", V.SESSION_BROKEN.name):
            return (
                "refuse",
                overflow,
                "name-too-long",
                (
                    f"model-facing name {name!r} is {len(name)} characters, over the limit of "
                    f"{limit}; {consequence(overflow)}"
                ),
            )
        if overflow != "keep":
            before = name
            if overflow == "truncate":
                name, how = name[:limit], f"truncated to its first {limit} characters"
            elif overflow == "ellipsis":
                name = ellipsised(name, limit)
                how = "shortened to its start + '...' + its end"
            elif p["hash_style"] == "codex-identity":
                name = name[: max(0, limit - 13)] + codex_collision_suffix(state.server, raw_tool)
                how = "cut, and a SHA-1 of the server and tool names replaces its tail"
            else:
                raw = raw_prefix + render(p["template"], state.server, raw_tool, current, uid)
                name = hashed(name, raw, limit, p["hash_style"])
                how = f"hashed (a SHA-1 of {raw!r} replaces its tail)"
            why = (
                "has characters outside the allowed set"
                if force_hash and len(before) <= limit
                else f"is {len(before)} characters, over the limit of {limit}"
            )
            findings.append(
                note(
                    "name-shortened",
                    f"model-facing name {before!r} {why}; it is {how}: {name!r}",
                    lost=True,
                )
            )
    return name, findings
