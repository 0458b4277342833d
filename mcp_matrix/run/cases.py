"""Where calls come from, and the safety policy that decides which may be made.

A case is one intended call: tool, arguments, the expected outcome and optional checks.
Cases come from a cases file (YAML, docs/cases.md) or are derived for read-only tools from
the schema (``examples``, ``default``, else a minimal valid instance).

Safety: a tool *may write* unless it is annotated ``readOnlyHint: true`` (and a
``destructiveHint: true`` always counts as a write). The matrix never calls a tool that may
write unless the cases file lists that call or the user passes ``--allow-writes``; every
skipped call is reported with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_matrix.core.errors import InputError, did_you_mean
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schemas import load_schema
from mcp_matrix.core.text import safe
from mcp_matrix.core.tools import every_tool_by_name, hints, may_write, retry_safe
from mcp_matrix.core.yamlfile import key_path, load_yaml_source
from mcp_matrix.run.classify import Expectation

CASES_SCHEMA: dict = load_schema("cases")  # published: mcp_matrix/core/schemas/cases.schema.json


@dataclass(frozen=True)
class Case:
    tool: str
    name: str
    arguments: JSON = field(default_factory=dict)
    expect: Expectation = field(default_factory=Expectation)
    omit_arguments: bool = False
    repeat_safe: bool | None = None  # None: decide from annotations
    origin: str = "file"  # file | auto
    description: str = ""
    where: str = field(default="", compare=False)  # FILE:LINE of its tool in the cases file

    @property
    def id(self) -> str:
        return f"{self.tool}::{self.name}"


@dataclass(frozen=True)
class Skip:
    tool: str
    case: str
    reason: str


def repeat_safe(tool: JSON, case: Case) -> bool:
    """Calling twice is safe: the case says so, or the tool is read-only or idempotent and not destructive."""
    if case.repeat_safe is not None:
        return case.repeat_safe
    return hints(tool).get("destructiveHint") is not True and retry_safe(tool)


def load_cases(path: str | Path) -> list[Case]:
    """Read and validate a cases file; errors name the file, line and key."""
    src = load_yaml_source(Path(path), CASES_SCHEMA, noun="cases file")
    out = []
    for tool in src.data["cases"]:
        check_tool_key(tool, f"{path}:{src.line(('cases', str(tool)))}")
    for tool, calls in src.data["cases"].items():
        where = f"{path}:{src.line(('cases', tool))}"
        for call in calls:
            out.append(
                Case(
                    tool=tool,
                    name=call["name"],
                    arguments=call.get("arguments", {}),
                    omit_arguments=call.get("omit_arguments", False),
                    expect=Expectation(
                        call.get("expect", "success"), call.get("contains"), call.get("structured")
                    ),
                    repeat_safe=call.get("repeat_safe"),
                    description=call.get("description", ""),
                    where=where,
                )
            )
    seen: set[str] = set()
    for c in out:
        if c.id in seen:
            raise InputError(
                f"case {c.name!r} of tool {c.tool!r} is listed twice",
                where=f"{path}: cases.{c.tool}",
            )
        seen.add(c.id)
    return out


def check_tool_key(tool: JSON, where: str) -> None:
    """A key of ``cases`` must be a tool name (a string): YAML reads ``42:`` as an integer and
    ``null:`` or ``~:`` as None, which named no tool and crashed the check after tools/list."""
    if isinstance(tool, str):
        return
    shown = "null" if tool is None else str(tool).lower() if isinstance(tool, bool) else repr(tool)
    kind = {type(None): "null", bool: "a boolean", int: "an integer", float: "a number"}
    raise InputError(
        f"cases.{shown}: a tool name must be a string, got {kind.get(type(tool), 'a value')}; "
        f'quote it ("{shown}") if that is the tool\'s name',
        where=where,
    )


UNKNOWN_TOOL = "the server does not list this tool"


def unknown_tools(tools: Iterable[object], cases: Iterable[Case]) -> list[InputError]:
    """One error per tool the cases name and the server does not list: a typo, or a tool the
    server renamed or dropped. Either way the user must act (docs/cases.md), so the run checks
    this right after tools/list and makes no call (exit 2)."""
    by_name = every_tool_by_name(tools)
    missing: dict[str, list[Case]] = {}
    for c in cases:
        if c.origin == "file" and c.tool not in by_name:
            missing.setdefault(c.tool, []).append(c)
    listed = sorted(by_name)
    shown = ", ".join(listed[:8]) + (f" and {len(listed) - 8} more" if len(listed) > 8 else "")
    errors = []
    for tool, named in missing.items():  # names from the server reach a terminal: sanitised
        errors.append(
            InputError(
                safe(
                    f"{key_path(('cases', tool))}: {UNKNOWN_TOOL}{did_you_mean(tool, by_name)}; its case(s) "
                    f"{', '.join(c.name for c in named)} were not run; the server lists: {shown or 'no tools'}",
                    fold=True,
                ),
                where=named[0].where,
            )
        )
    return errors


def plan_cases(
    tools: Iterable[Any], cases: list[Case], allow_writes: bool = False, auto: bool = True
) -> tuple[list[Case], list[Skip]]:
    """The calls to make and the ones skipped (with why), per the safety policy."""
    by_name = every_tool_by_name(tools)
    run: list[Case] = []
    skipped: list[Skip] = []
    listed = {c.tool for c in cases}
    for c in cases:
        if c.tool not in by_name:
            skipped.append(Skip(c.tool, c.name, UNKNOWN_TOOL + did_you_mean(c.tool, by_name)))
            continue
        run.append(c)  # listed in the cases file: the user asked for this call
    for name, same in by_name.items():
        if name in listed:
            continue
        writer = next((t for t in same if may_write(t)), None)
        if writer is not None and not allow_writes:
            ann = writer.get("annotations") if isinstance(writer.get("annotations"), dict) else {}
            reason = (
                "destructiveHint: true"
                if ann.get("destructiveHint") is True
                else "not annotated readOnlyHint: true"
            )
            if len(same) > 1:  # a call by this name may reach any of them
                reason = f"{len(same)} tools are named {name!r} and one of them is {reason}"
            skipped.append(
                Skip(
                    name,
                    "auto",
                    f"may write ({reason}); list it in a cases file or pass --allow-writes",
                )
            )
            continue
        tool = same[0]
        if not auto:
            continue
        args = example_arguments(tool.get("inputSchema"))
        if args is None:
            skipped.append(
                Skip(name, "auto", "no example could be derived from the schema; add a case")
            )
            continue
        # An automatic example may be a poor guess (a timezone "x"): only its delivery is judged.
        run.append(
            Case(tool=name, name="auto", arguments=args, origin="auto", expect=Expectation("any"))
        )
    return run, skipped


def example_arguments(schema: JSON) -> JSON:
    """A small valid instance: ``examples[0]``, ``default``, else the minimal required object."""
    if not isinstance(schema, dict):
        return {} if schema in (None, True) else None
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    return _instance(schema, depth=0)


# A minimal instance longer than this is no example a user would want sent (and a hostile
# ``minItems: 1000000000`` must not build a billion-item list): no example, add a case.
_MAX_EXAMPLE_SIZE = 1000


def _size(value: JSON) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _object_instance(schema: dict, depth: int) -> dict | None:
    """An object with each required property filled (None when one cannot be)."""
    props = given if isinstance(given := schema.get("properties"), dict) else {}
    out = {}
    for name in schema.get("required", []) if isinstance(schema.get("required"), list) else []:
        if not isinstance(name, str):
            continue  # not a property name; nothing to fill
        prop = props.get(name, {"type": "string"})
        value = _instance(prop, depth + 1)
        if value is None and not (isinstance(prop, dict) and prop.get("type") == "null"):
            return None
        out[name] = value
    return out


def _instance(schema: JSON, depth: int) -> JSON:
    if depth > 12 or not isinstance(schema, dict):
        return None
    for key in ("const",):
        if key in schema:
            return schema[key]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for comb in ("anyOf", "oneOf"):
        if isinstance(schema.get(comb), list) and schema[comb]:
            first = next(
                (s for s in schema[comb] if isinstance(s, dict) and s.get("type") != "null"),
                schema[comb][0],
            )
            merged = {k: v for k, v in schema.items() if k != comb}
            if isinstance(first, dict):
                merged.update(first)
            return _instance(merged, depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "null")
    if t == "object" or (t is None and "properties" in schema):
        return _object_instance(schema, depth)
    if t == "array":
        n = _size(schema.get("minItems"))
        if n > _MAX_EXAMPLE_SIZE:
            return None
        item = _instance(schema.get("items", {"type": "string"}), depth + 1)
        return [item] * n if n else []
    if t == "string":
        n = _size(schema.get("minLength", 1))
        if n > _MAX_EXAMPLE_SIZE:
            return None
        fmt = schema.get("format")
        sample = (
            {
                "date-time": "2026-01-01T00:00:00Z",
                "date": "2026-01-01",
                "email": "a@example.com",
                "uri": "https://example.com",
                "uuid": "00000000-0000-4000-8000-000000000000",
            }.get(fmt)
            if isinstance(fmt, str)
            else None
        )
        return sample or "x" * max(n, 1)
    if t in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        lo = lo if isinstance(lo, (int, float)) and not isinstance(lo, bool) else 0
        value = lo + (1 if "exclusiveMinimum" in schema else 0)
        return int(value) if t == "integer" else value
    if t == "boolean":
        return False
    if t == "null":
        return None
    return "x" if t is None else None
