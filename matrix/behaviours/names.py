"""Model-facing tool names: how each client builds, cleans and shortens them.

Pure string functions used by the ``tool-name`` behaviour. Every rule cites
client-quirks.md (§E.11 is the summary table).
"""

from __future__ import annotations

import hashlib
import re

# How a server or tool name is cleaned before it is put into the template.
PART_TRANSFORMS = (
    "none",
    "vscode-label",  # §11: label.toLowerCase().replace(/[^a-z0-9_.-]+/g,'_').slice(0,13)
    "continue-prefix",  # §16: lower, [^a-z0-9]+ -> _, trimmed of _, _+ -> _
    "roo-sanitize",  # §15: whitespace -> _, invalid chars deleted, --+ -> -, leading fix, empty -> _unnamed
    "agents-sanitize",  # §5: non-[A-Za-z0-9_-] -> _, stripped of leading/trailing _-
    "replace-invalid",  # §11 VS Code core: chars outside [a-z0-9_-] -> _ (case handling unverified)
)

HASH_STYLES = (
    "codex",  # §4: name[:max-40] + sha1_hex(raw) (40 hex)
    "sha1-8",  # §14 Cline SDK: name[:max-9] + "_" + sha1(raw)[:8]
    "sha1-8-rstrip",  # §5 Agents SDK: name[:max-9].rstrip("_-") + "_" + sha1(seed)[:8]
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
        # The regex itself was not seen (§11); case-insensitive is the conservative reading.
        return re.sub(r"[^A-Za-z0-9_-]", "_", text)
    return text


def render(template: str, server: str, tool: str, current: str, uid: str) -> str:
    """Fill ``{server}``, ``{tool}``, ``{name}`` (the name so far) and ``{uid5}``."""
    out = []
    i = 0
    fields = {"server": server, "tool": tool, "name": current, "uid5": uid}
    while i < len(template):
        if template[i] == "{":
            end = template.find("}", i)
            field = template[i + 1 : end] if end != -1 else ""
            if field in fields:
                out.append(fields[field])
                i = end + 1
                continue
        out.append(template[i])
        i += 1
    return "".join(out)


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


def ellipsised(name: str, max_length: int) -> str:
    """Gemini CLI (§E.1): ``n[:30] + "..." + n[-30:]`` for a 63-character cap."""
    keep = max(0, (max_length - 3) // 2)
    return name[:keep] + "..." + (name[-keep:] if keep else "")


def uid5(server: str) -> str:
    """A stand-in for Cline's per-session ``nanoid(5)`` server uid (random in the client)."""
    return sha1_hex(server)[:5]
