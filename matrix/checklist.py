"""The release checklist: a policy applied to results, each item passed or failed with its evidence.

A policy names the clients that must see every tool, the verdicts that fail a release
(default: every ``silent-*``, ``accepted-invalid``, ``broken``), and expected failures with a
reason. An expected failure that no longer happens fails the check as *stale*, so the list
stays honest (as the conformance suite's expected-failures baseline does). Policies come from
a YAML file or ``[tool.mcp-matrix]`` in pyproject.toml; both are validated the same way.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from jsonschema import Draft202012Validator

from matrix.errors import InputError
from matrix.report.grid import RELEASE_FAILING
from matrix.verdicts import SEVERITY
from matrix.yamlfile import key_path, load_yaml_checked

POLICY_SCHEMA: dict = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "required_clients": {
            "type": "array", "items": {"type": "string"}, "uniqueItems": True,
            "description": "profiles that must see every tool (discovery visible or degraded)",
        },
        "fail_on": {
            "type": "array", "items": {"enum": list(SEVERITY)}, "uniqueItems": True,
            "description": "verdicts that fail the release",
        },
        "expected_failures": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["client", "reason"],
                "additionalProperties": False,
                "properties": {
                    "client": {"type": "string"},
                    "tool": {"type": "string"},
                    "case": {"type": "string"},
                    "verdict": {"enum": list(SEVERITY)},
                    "reason": {"type": "string", "minLength": 1, "description": "why this failure is accepted"},
                },
            },
        },
        "baseline": {"type": "string", "description": "baseline snapshot for evolution checks"},
        "aliases": {"type": "array", "description": "deprecated aliases that must still be accepted"},
        "retire_quiet_days": {"type": "integer", "minimum": 0},
    },
}


@dataclass(frozen=True)
class Policy:
    required_clients: tuple[str, ...] = ()
    fail_on: tuple[str, ...] = RELEASE_FAILING
    expected_failures: tuple[dict, ...] = ()
    source: str = "default policy"
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    name: str
    passed: bool
    evidence: str
    cell: tuple | None = None  # (event, profile, tool, case) of the cell this item is about


def cell_key(cell: dict) -> tuple:
    return (cell.get("event"), cell.get("profile"), cell.get("tool"), cell.get("case"))


def load_policy(path: str | Path | None) -> Policy:
    """A policy file (YAML), ``pyproject.toml``'s ``[tool.mcp-matrix]``, or the default."""
    if path is None:
        return Policy()
    p = Path(path)
    if p.name == "pyproject.toml":
        data = _from_pyproject(p)
    else:
        data = load_yaml_checked(p, POLICY_SCHEMA, noun="policy file") or {}
    return Policy(
        required_clients=tuple(data.get("required_clients", ())),
        fail_on=tuple(data.get("fail_on", RELEASE_FAILING)),
        expected_failures=tuple(data.get("expected_failures", ())),
        source=str(p),
        extra={k: v for k, v in data.items() if k in ("baseline", "aliases", "retire_quiet_days")},
    )


def _from_pyproject(p: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", where=str(p)) from None
    data = doc.get("tool", {}).get("mcp-matrix")
    if data is None:
        raise InputError("no [tool.mcp-matrix] table", where=str(p))
    errors = sorted(Draft202012Validator(POLICY_SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        path = key_path(("tool", "mcp-matrix", *e.absolute_path))
        raise InputError(f"{path}: {e.message}", where=str(p))
    return data


def _matches(rule: dict, cell: dict) -> bool:
    return (
        rule["client"] == cell.get("profile")
        and rule.get("tool", cell.get("tool")) == cell.get("tool")
        and rule.get("case", cell.get("case")) == cell.get("case")
        and rule.get("verdict", cell.get("verdict")) == cell.get("verdict")
    )


def _label(cell: dict) -> str:
    case = f"::{cell['case']}" if cell.get("case") else ""
    return f"{cell.get('tool')}{case}[{cell.get('profile')}]"


def evaluate(events: Iterable[dict], policy: Policy) -> list[Item]:
    """Every checklist item, passed or failed, with the evidence behind it."""
    events = list(events)
    cells = [e for e in events if e.get("event") in ("discovery", "call")]
    items: list[Item] = []
    finished = [e for e in events if e.get("event") == "run-finished"]
    measured = bool(finished) and all(f.get("measured", True) and not f.get("interrupted") for f in finished)
    items.append(Item("the run finished and measured the server", measured,
                      "run-finished present" if measured else "the run was interrupted, unfinished or could not measure the server"))
    matched: set[int] = set()

    def expected(cell: dict) -> dict | None:
        for i, rule in enumerate(policy.expected_failures):
            if _matches(rule, cell):
                matched.add(i)
                return rule
        return None

    known = {e.get("profile") for e in cells}
    for client in policy.required_clients:
        if client not in known:
            items.append(Item(f"{client} sees every tool", False, f"no results for {client} in this run"))
            continue
        for cell in (c for c in cells if c.get("event") == "discovery" and c.get("profile") == client):
            ok = cell.get("verdict") in ("visible", "degraded")
            rule = None if ok else expected(cell)
            why = "; ".join(f.get("message", "") for f in cell.get("findings", [])[-1:])
            items.append(Item(
                f"{client} sees {cell.get('tool')}", ok or rule is not None,
                cell.get("verdict", "") + (f": {why}" if why and not ok else "")
                + (f" (expected failure: {rule['reason']})" if rule else ""),
                cell_key(cell),
            ))
    failing = set(policy.fail_on)
    for cell in cells:
        if cell.get("verdict") not in failing:
            continue
        rule = expected(cell)
        reason = cell.get("reason") or "; ".join(f.get("message", "") for f in cell.get("findings", [])[-1:])
        items.append(Item(
            f"no {cell['verdict']} for {_label(cell)}", rule is not None,
            reason + (f" (expected failure: {rule['reason']})" if rule else "")
            + (f" [evidence: {cell.get('weakest_evidence')}]" if cell.get("weakest_evidence") else ""),
            cell_key(cell),
        ))
    for i, rule in enumerate(policy.expected_failures):
        if i not in matched:
            what = "::".join(x for x in (rule.get("tool"), rule.get("case")) if x) or "any tool"
            items.append(Item(
                f"expected failure still happens: {what}[{rule['client']}]", False,
                f"stale: it no longer fails ({rule.get('verdict', 'any failing verdict')}); remove it from the policy "
                f"(reason given was: {rule['reason']})",
            ))
    if not any(not i.passed for i in items[1:]) and len(items) == 1:
        items.append(Item("no release-failing verdict", True, f"none of {', '.join(policy.fail_on) or 'nothing'} in {len(cells)} cells"))
    return items


def to_markdown(items: list[Item], policy: Policy) -> str:
    """The checklist as Markdown for a release pull request."""
    from matrix.report.markdown import md

    failed = sum(not i.passed for i in items)
    lines = [
        "## mcp-matrix release checklist",
        "",
        f"Policy: `{md(policy.source)}` · **{'FAILED' if failed else 'PASSED'}** "
        f"({len(items) - failed} passed, {failed} failed)",
        "",
    ]
    for i in items:
        lines.append(f"- [{'x' if i.passed else ' '}] {md(i.name)} — {md(i.evidence)}")
    return "\n".join(lines) + "\n"
