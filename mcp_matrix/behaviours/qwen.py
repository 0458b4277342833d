"""Qwen Code (npm ``@qwen-code/qwen-code``): how it names MCP tools for the model.

Read in the 0.24.4 bundle, ``chunks/chunk-WZAD4ZNJ.js`` (source
``packages/core/src/utils/tool-name-utils.ts``): ``DiscoveredMCPTool`` names a tool
``generateValidName(`mcp__${serverName}__${serverToolName}`)``, which is
``normalizeToolNameForProvider``: a name of at most 63 UTF-16 units matching
``^[A-Za-z][A-Za-z0-9_-]*$`` is kept; any other becomes the name with each unit outside
``[A-Za-z0-9_-]`` as ``_`` (``tool_`` before it if it does not start with a letter), cut so that
``_`` + the 32-bit FNV-1a hash of the whole raw name in base 36, padded to 7 digits, fits in 63.
Observed: clients/calibrations/qwen-code/0.24.4.json (sets long-name, dotted-name).
"""

from __future__ import annotations

import re
from dataclasses import replace

from mcp_matrix.behaviours.outcomes import note, param
from mcp_matrix.behaviours.registry import behaviour
from mcp_matrix.core.model import ListState, evolve

_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _units(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``String.length`` counts."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def fnv1a_base36(name: str) -> str:
    """``stableToolNameHash``: FNV-1a (32-bit) over the UTF-16 code units, base 36, 7 digits."""
    h = 2166136261
    data = name.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = ((h ^ (data[i] | data[i + 1] << 8)) * 16777619) & 0xFFFFFFFF
    out = ""
    while True:
        h, digit = divmod(h, 36)
        out = _DIGITS[digit] + out
        if not h:
            return out.rjust(7, "0")


def qwen_name(name: str, max_length: int = 63) -> str:
    """``normalizeToolNameForProvider``: the name kept, or sanitised, cut and hashed."""
    return _normalise(name, max_length)[0]


def _normalise(name: str, max_length: int) -> tuple[str, bool]:
    """The model-facing name, and whether characters of the cleaned name were cut off."""
    if _units(name) <= max_length and _SAFE.match(name):
        return name, False
    # the JS regex has no u flag: a character beyond U+FFFF is two units, so two '_'
    clean = _INVALID.sub(lambda m: "_" * _units(m.group()), name)
    if not (clean[:1].isascii() and clean[:1].isalpha()):
        clean = "tool_" + clean
    suffix = "_" + fnv1a_base36(name)
    keep = max(0, max_length - len(suffix))
    return clean[:keep] + suffix, len(clean) > keep


@behaviour(
    "qwen-tool-name",
    "discovery",
    params={
        "max_length": param("integer", "Longest model-facing name (UTF-16 units).", 63, minimum=9)
    },
)
def qwen_tool_name(state: ListState, max_length: int = 63) -> ListState:
    """Qwen Code's ``mcp__<server>__<tool>``: a name over 63 or with characters outside
    ``[A-Za-z0-9_-]`` gets them as ``_``, is cut and ends in ``_`` + a 7-digit FNV-1a hash.
    Read in the bundle and observed: clients/calibrations/qwen-code/0.24.4.json."""
    if state.outcome != "ok":
        return state
    tools = list(state.tools)
    for i, tool in enumerate(tools):
        if tool.hidden:
            continue
        raw = f"mcp__{state.server}__{tool.server_name}"
        name, cut = _normalise(raw, max_length)
        findings = []
        if name != raw:
            why = (
                f"is {_units(raw)} characters, over the limit of {max_length}"
                if _units(raw) > max_length
                else "has characters the client does not allow"
            )
            findings.append(
                note(
                    "name-shortened" if cut else "name-sanitised",
                    f"model-facing name {raw!r} {why}; it becomes {name!r} (invalid characters "
                    f"as '_', {'cut, ' if cut else ''}a hash of the raw name appended)",
                    lost=cut,
                )
            )
        if name != tool.name or findings:
            tools[i] = evolve(tool, name=name, findings=tool.findings + tuple(findings))
    return replace(state, tools=tuple(tools))
