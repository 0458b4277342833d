"""The release checklist: a policy applied to results, each item passed or failed with its evidence.

The policy (``mcp_matrix.gate.policy``) names the clients that must see every tool, the
verdicts that fail a release and expected failures with a reason. An expected failure that no
longer happens fails the check as *stale*, so the list stays honest (as the conformance suite's
expected-failures baseline does). Schema evolution adds items (``evolution_items``). Nothing
here contacts a server.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from mcp_matrix.core.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNMEASURABLE
from mcp_matrix.core.events import (
    CallCell,
    Cell,
    DiscoveryCell,
    Event,
    ProfileError,
    typed_events,
)
from mcp_matrix.core.verdicts import SHOWN
from mcp_matrix.gate.policy import Policy
from mcp_matrix.report.grid import (
    LOST_TOOL,
    calls_not_made,
    default_required,
    not_made_text,
    opt_in,
    runs,
)


@dataclass(frozen=True)
class Item:
    name: str
    passed: bool
    evidence: str
    cell: tuple | None = None  # (event, profile, tool, case) of the cell this item is about
    # failed because something could not be measured (a run cut short, a profile that failed,
    # calls not made): never a pass, and exit 3 rather than 1 when nothing measured failed
    unmeasured: bool = False


def exit_code(items: Iterable[Item]) -> int:
    """The checklist's exit code: 1 when an item about what was measured failed, else 3 when
    something could not be measured, else 0 (README: exit codes)."""
    failed = [i for i in items if not i.passed]
    if any(not i.unmeasured for i in failed):
        return EXIT_FINDINGS
    return EXIT_UNMEASURABLE if failed else EXIT_OK


def cell_key(cell: Cell) -> tuple:
    """(event kind, profile, tool, case) of a cell: its identity across the items of a run."""
    return (cell.KIND, cell.profile, cell.tool, cell.case if isinstance(cell, CallCell) else None)


def lost_tools(events: Iterable[Event], required: Iterable[str]) -> list[DiscoveryCell]:
    """Discovery cells where a required client hides a tool, drops the server or breaks the session."""
    names = set(required)
    return [
        e
        for e in typed_events(events)
        if isinstance(e, DiscoveryCell) and e.profile in names and e.verdict in LOST_TOOL
    ]


def _matches(rule: dict, cell: Cell) -> bool:
    case = cell.case if isinstance(cell, CallCell) else None
    return (
        rule["client"] == cell.profile
        and rule.get("tool", cell.tool) == cell.tool
        and rule.get("case", case) == case
        and rule.get("verdict", cell.verdict) == cell.verdict
    )


def _label(cell: Cell) -> str:
    case = f"::{cell.case}" if isinstance(cell, CallCell) and cell.case else ""
    return f"{cell.tool}{case}[{cell.profile}]"


def _last_message(cell: Cell) -> str:
    """A discovery cell's deciding finding, in words (it comes last)."""
    return (
        "; ".join(f.message for f in cell.findings[-1:]) if isinstance(cell, DiscoveryCell) else ""
    )


def _run_item(events: list[Event]) -> Item:
    """Every run of the stream (each shard of a merged file) finished and measured the server."""
    problems = []
    all_runs = runs(events)
    for n, run in enumerate(all_runs, 1):
        label = f"run {run.start.run_id or n}: " if len(all_runs) > 1 and run.start else ""
        if run.finish is None:
            problems.append(f"{label}unfinished (no run-finished: killed, or still running)")
        elif run.finish.interrupted:
            problems.append(f"{label}interrupted")
        elif not run.finish.measured:
            error = run.finish.error if isinstance(run.finish.error, dict) else {}
            problems.append(f"{label}could not measure the server: {error.get('message', '')}")
    if not all_runs:
        problems.append("no run in the results")
    if problems:
        return Item(
            "the run finished and measured the server",
            False,
            "; ".join(problems)[:600],
            unmeasured=True,
        )
    evidence = "run-finished present" + (
        f" in each of the {len(all_runs)} runs" if len(all_runs) > 1 else ""
    )
    return Item("the run finished and measured the server", True, evidence)


def _calls_item(events: list[Event]) -> Item:
    """Every call a profile was to make was made: a cell not measured is never a pass."""
    missing = calls_not_made(events)
    name = "every planned call was made"
    if not missing:
        return Item(name, True, "no call ruled out by the run's deadline or the circuit breaker")
    evidence = not_made_text(missing) + "; nothing about them passed"
    return Item(name, False, evidence, unmeasured=True)


def evaluate(events: Iterable[Event], policy: Policy) -> list[Item]:
    """Every checklist item, passed or failed, with the evidence behind it. A stream of several
    runs (``merge`` of shards) is judged as the union of its runs: every run's profiles, cells
    and ends."""
    events = typed_events(events)
    cells = [e for e in events if isinstance(e, (DiscoveryCell, CallCell))]
    items: list[Item] = [_run_item(events), _profiles_item(events), _calls_item(events)]
    expected = _Expected(policy.expected_failures)
    default = policy.required_clients is None
    required = default_required(events) if default else policy.required_clients or ()
    items += _required_items(cells, required, default, expected)
    if default and required and not lost_tools(events, required):
        items.append(
            Item(
                f"the {len(required)} required clients show every tool",
                True,
                "default: every profile of every run required by default (not the probes or opt-in configurations); name them with required_clients",
            )
        )
    optional = opt_in(events) - set(required)  # never failed on, unless required by name
    items += _failing_items(cells, set(policy.fail_on), optional, expected)
    items += expected.stale_items()
    if not any(not i.passed for i in items[1:]) and len(items) == 1:
        items.append(
            Item(
                "no release-failing verdict",
                True,
                f"none of {', '.join(policy.fail_on) or 'nothing'} in {len(cells)} cells",
            )
        )
    return items


class _Expected:
    """The policy's expected failures, and which of them a cell matched (the rest are stale)."""

    def __init__(self, rules: tuple[dict, ...]) -> None:
        self.rules = rules
        self.matched: set[int] = set()

    def rule(self, cell: Cell) -> dict | None:
        for i, rule in enumerate(self.rules):
            if _matches(rule, cell):
                self.matched.add(i)
                return rule
        return None

    def stale_items(self) -> list[Item]:
        items = []
        for i, rule in enumerate(self.rules):
            if i not in self.matched:
                what = "::".join(x for x in (rule.get("tool"), rule.get("case")) if x) or "any tool"
                items.append(
                    Item(
                        f"expected failure still happens: {what}[{rule['client']}]",
                        False,
                        f"stale: it no longer fails ({rule.get('verdict', 'any failing verdict')}); remove it from the policy "
                        f"(reason given was: {rule['reason']})",
                    )
                )
        return items


def _profiles_item(events: list[Event]) -> Item:
    """Every profile was measured: a profile-error leaves its cells missing."""
    errors = [e for e in events if isinstance(e, ProfileError)]
    return Item(
        "every profile was measured",
        not errors,
        "no profile-error"
        if not errors
        else f"{len(errors)} profile-error event(s), e.g. {errors[0].profile}: {errors[0].error[:200]}"
        " (its cells are missing, so nothing about them passed)",
        unmeasured=bool(errors),
    )


def _required_items(
    cells: list[Cell], required: Iterable[str], default: bool, expected: _Expected
) -> list[Item]:
    """Each required client sees each tool (by default only the failures, one by one)."""
    items = []
    known = {e.profile for e in cells}
    for client in required:
        if client not in known:
            if not default:
                items.append(
                    Item(f"{client} sees every tool", False, f"no results for {client} in this run")
                )
            continue
        for cell in (c for c in cells if isinstance(c, DiscoveryCell) and c.profile == client):
            ok = cell.verdict in SHOWN
            rule = None if ok else expected.rule(cell)
            if default and ok:
                continue  # the default set: one summary item below, failures one by one
            why = _last_message(cell)
            items.append(
                Item(
                    f"{client} sees {cell.tool}",
                    ok or rule is not None,
                    cell.verdict
                    + (f": {why}" if why and not ok else "")
                    + (f" (expected failure: {rule['reason']})" if rule else ""),
                    cell_key(cell),
                )
            )
    return items


def _failing_items(
    cells: list[Cell], failing: Container[str], optional: Container[str], expected: _Expected
) -> list[Item]:
    """No cell with a release-failing verdict, unless an expected failure names it."""
    items = []
    for cell in cells:
        if cell.verdict not in failing or cell.profile in optional:
            continue
        rule = expected.rule(cell)
        reason = (cell.reason if isinstance(cell, CallCell) else "") or _last_message(cell)
        items.append(
            Item(
                f"no {cell.verdict} for {_label(cell)}",
                rule is not None,
                reason
                + (f" (expected failure: {rule['reason']})" if rule else "")
                + (f" [evidence: {cell.weakest_evidence}]" if cell.weakest_evidence else ""),
                cell_key(cell),
            )
        )
    return items


def to_markdown(items: list[Item], policy: Policy) -> str:
    """The checklist as Markdown for a release pull request."""
    from mcp_matrix.report.markdown import md

    failed = sum(not i.passed and not i.unmeasured for i in items)
    unmeasured = sum(not i.passed and i.unmeasured for i in items)
    verdict = "FAILED" if failed else "NOT MEASURED" if unmeasured else "PASSED"
    lines = [
        "## mcp-matrix release checklist",
        "",
        (
            f"Policy: `{md(policy.source)}` · **{verdict}** "
            f"({len(items) - failed - unmeasured} passed, {failed} failed"
            + (f", {unmeasured} not measured" if unmeasured else "")
            + ")"
        ),
        "",
    ]
    for i in items:
        note = " (not measured)" if not i.passed and i.unmeasured else ""
        lines.append(f"- [{'x' if i.passed else ' '}] {md(i.name)}{note} — {md(i.evidence)}")
    return "\n".join(lines) + "\n"


__all__ = [
    "Item",
    "Policy",
    "cell_key",
    "default_required",
    "evaluate",
    "exit_code",
    "lost_tools",
    "to_markdown",
]
