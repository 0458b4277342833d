"""The release checklist: a policy applied to results, each item passed or failed with its evidence.

A policy names the clients that must see every tool, the verdicts that fail a release
(default: every ``silent-*``, ``accepted-invalid``, ``broken``), and expected failures with a
reason. An expected failure that no longer happens fails the check as *stale*, so the list
stays honest (as the conformance suite's expected-failures baseline does). Policies come from
a YAML file or ``[tool.mcp-matrix]`` in pyproject.toml; both are validated the same way.

Schema evolution adds items (``evolution_items``, docs/evolution.md): no breaking change against
the ``baseline`` without an alias; each deprecated alias still accepted (its recorded calls
replayed against the live target, by the ``check`` command, which passes the report in); and an
alias retired only once the live, retry and transcript signals have been quiet for
``retire_quiet_days``. Nothing here contacts a server.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from mcp_matrix.core.errors import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNMEASURABLE,
    InputError,
    InputErrors,
    did_you_mean,
)
from mcp_matrix.core.events import (
    CallCell,
    Cell,
    DiscoveryCell,
    Event,
    ProfileError,
    typed_events,
)
from mcp_matrix.core.schemas import load_schema
from mcp_matrix.core.verdicts import SHOWN
from mcp_matrix.core.yamlfile import key_path, load_yaml_source
from mcp_matrix.report.grid import (
    LOST_TOOL,
    RELEASE_FAILING,
    calls_not_made,
    default_required,
    not_made_text,
    opt_in,
    runs,
)

POLICY_SCHEMA: dict = load_schema("policy")  # published: mcp_matrix/core/schemas/policy.schema.json


EVOLUTION_KEYS = ("baseline", "aliases", "recorded_calls", "retire_quiet_days")


@dataclass(frozen=True)
class Policy:
    # None: the default set, every profile of every run required by default (default_required)
    required_clients: tuple[str, ...] | None = None
    fail_on: tuple[str, ...] = RELEASE_FAILING
    expected_failures: tuple[dict, ...] = ()
    source: str = "default policy"
    extra: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict, compare=False)  # key path -> line in a YAML policy

    def where(self, *path: str | int) -> str:
        """``FILE:LINE`` of a key (``FILE: key.path`` where lines are not known: pyproject.toml)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return f"{self.source}:{self.lines[path[:end]]}"
        prefix = ("tool", "mcp-matrix") if self.source.endswith("pyproject.toml") else ()
        return f"{self.source}: {key_path(prefix + path)}"


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


def load_policy(path: str | Path | None) -> Policy:
    """A policy file (YAML), ``pyproject.toml``'s ``[tool.mcp-matrix]``, or the default."""
    if path is None:
        return Policy()
    p = Path(path)
    lines: dict = {}
    if p.name == "pyproject.toml":
        data = _from_pyproject(p)
    else:
        src = load_yaml_source(p, POLICY_SCHEMA, noun="policy file")
        data, lines = src.data or {}, src.lines
    return Policy(
        required_clients=tuple(data["required_clients"]) if "required_clients" in data else None,
        fail_on=tuple(data.get("fail_on", RELEASE_FAILING)),
        expected_failures=tuple(data.get("expected_failures", ())),
        source=str(p),
        extra={k: v for k, v in data.items() if k in EVOLUTION_KEYS},
        lines=lines,
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
    errors = sorted(
        Draft202012Validator(POLICY_SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path)
    )
    if errors:
        e = errors[0]
        path = key_path(("tool", "mcp-matrix", *e.absolute_path))
        raise InputError(f"{path}: {e.message}", where=str(p))
    return data


def lost_tools(events: Iterable[Event], required: Iterable[str]) -> list[DiscoveryCell]:
    """Discovery cells where a required client hides a tool, drops the server or breaks the session."""
    names = set(required)
    return [
        e
        for e in typed_events(events)
        if isinstance(e, DiscoveryCell) and e.profile in names and e.verdict in LOST_TOOL
    ]


def check_clients(names: Iterable[str], known: Iterable[str], where: str) -> None:
    """Every client a policy or flag names is a known profile (did you mean ...?)."""
    known = list(known)
    for name in names:
        if name not in known:
            raise InputError(
                f"unknown client profile {name!r}{did_you_mean(name, known)}; "
                f"see `mcp-matrix profiles`",
                where=where,
            )


def check_policy_clients(policy: Policy, known: Iterable[str]) -> None:
    """The policy's ``required_clients`` are known profiles: every unknown one is reported with
    its line and the nearest name, before anything runs."""
    known = list(known)
    errors = [
        InputError(
            f"required_clients[{i}]: unknown client profile {name!r}{did_you_mean(name, known)}; "
            "see `mcp-matrix profiles`",
            where=policy.where("required_clients", i),
        )
        for i, name in enumerate(policy.required_clients or ())
        if name not in known
    ]
    if errors:
        raise errors[0] if len(errors) == 1 else InputErrors(errors)


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
        "; ".join(f["message"] for f in cell.findings[-1:])
        if isinstance(cell, DiscoveryCell)
        else ""
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
    items: list[Item] = [_run_item(events)]
    errors = [e for e in events if isinstance(e, ProfileError)]
    items.append(
        Item(
            "every profile was measured",
            not errors,
            "no profile-error"
            if not errors
            else f"{len(errors)} profile-error event(s), e.g. {errors[0].profile}: {errors[0].error[:200]}"
            " (its cells are missing, so nothing about them passed)",
            unmeasured=bool(errors),
        )
    )
    items.append(_calls_item(events))
    matched: set[int] = set()

    def expected(cell: Cell) -> dict | None:
        for i, rule in enumerate(policy.expected_failures):
            if _matches(rule, cell):
                matched.add(i)
                return rule
        return None

    known = {e.profile for e in cells}
    default = policy.required_clients is None
    required = default_required(events) if default else policy.required_clients
    for client in required:
        if client not in known:
            if not default:
                items.append(
                    Item(f"{client} sees every tool", False, f"no results for {client} in this run")
                )
            continue
        for cell in (c for c in cells if isinstance(c, DiscoveryCell) and c.profile == client):
            ok = cell.verdict in SHOWN
            rule = None if ok else expected(cell)
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
    if default and required and not lost_tools(events, required):
        items.append(
            Item(
                f"the {len(required)} required clients show every tool",
                True,
                "default: every profile of every run required by default (not the probes or opt-in configurations); name them with required_clients",
            )
        )
    failing = set(policy.fail_on)
    optional = opt_in(events) - set(required)  # never failed on, unless required by name
    for cell in cells:
        if cell.verdict not in failing or cell.profile in optional:
            continue
        rule = expected(cell)
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
    for i, rule in enumerate(policy.expected_failures):
        if i not in matched:
            what = "::".join(x for x in (rule.get("tool"), rule.get("case")) if x) or "any tool"
            items.append(
                Item(
                    f"expected failure still happens: {what}[{rule['client']}]",
                    False,
                    f"stale: it no longer fails ({rule.get('verdict', 'any failing verdict')}); remove it from the policy "
                    f"(reason given was: {rule['reason']})",
                )
            )
    if not any(not i.passed for i in items[1:]) and len(items) == 1:
        items.append(
            Item(
                "no release-failing verdict",
                True,
                f"none of {', '.join(policy.fail_on) or 'nothing'} in {len(cells)} cells",
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


# -- schema evolution: the baseline, deprecated aliases, and their retirement --------------------

QUIET_DAYS = 50  # docs/design.md#rename-additively: "about fifty days" once the live, retry and replay signals are quiet
SIGNALS = ("live", "retry", "transcript")


@dataclass(frozen=True)
class AliasRule:
    """One entry of the policy's ``aliases``, its call files resolved against the policy's folder."""

    tool: str
    old: str
    new: str
    calls: tuple[Path, ...] = ()
    retire: bool = False

    @property
    def label(self) -> str:
        return f"{self.tool}.{self.old} -> {self.new}"


def policy_path(policy: Policy, value: str) -> Path:
    """A path from the policy file, relative to the folder the policy file is in."""
    p = Path(value)
    if p.is_absolute() or policy.source == "default policy":
        return p
    return Path(policy.source).parent / p


def alias_rules(policy: Policy) -> list[AliasRule]:
    out = []
    for a in policy.extra.get("aliases", ()):
        calls = a.get("calls", ())
        calls = [calls] if isinstance(calls, str) else list(calls)
        out.append(
            AliasRule(
                a["tool"],
                a["old"],
                a["new"],
                tuple(policy_path(policy, c) for c in calls),
                bool(a.get("retire", False)),
            )
        )
    return out


def signal_files(policy: Policy, rule: AliasRule | None = None) -> list[tuple[Path, str | None]]:
    """The recorded-call files that carry the frozen-caller signals: ``recorded_calls`` and the alias's own."""
    out: dict[Path, str | None] = {}
    for entry in policy.extra.get("recorded_calls", ()):
        file, population = (
            (entry, None) if isinstance(entry, str) else (entry["file"], entry.get("population"))
        )
        out.setdefault(policy_path(policy, file), population)
    for path in rule.calls if rule else ():
        out.setdefault(path, None)
    return list(out.items())


def evolution_items(
    policy: Policy,
    *,
    new: Any,
    baseline: Any,
    profiles: list,
    now: Any,
    alias_replay: Callable[[AliasRule], dict] | None = None,
) -> list[Item]:
    """The evolution items of the release checklist, each passed or failed with its evidence.

    ``new`` and ``baseline`` are snapshots (``None`` when not available); ``profiles`` the
    client profiles that must keep working (the policy's ``required_clients``); ``now`` an aware
    datetime; ``alias_replay(rule)`` replays the rule's recorded old-name calls against the live
    target and returns the replay report (``format: mcp-matrix.replay``); None when there is no
    live target. Nothing here contacts a server.
    """
    rules = alias_rules(policy)
    items: list[Item] = []
    if policy.extra.get("baseline"):
        items += _breaking_items(policy, new, baseline, profiles, rules)
    for rule in rules:
        retiring = rule.retire or _absent(new, rule)
        if not rule.retire:
            items.append(_accepted_item(rule, new, alias_replay))
        if retiring:
            items.append(_retirement_item(policy, rule, now))
    return items


def _absent(new: Any, rule: AliasRule) -> bool:
    """The new schema no longer declares the old name (the alias is retired in fact)."""
    if new is None:
        return False
    tool = next(
        (t for _, t in new.tools if isinstance(t, dict) and t.get("name") == rule.tool), None
    )
    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
    props = schema.get("properties") if isinstance(schema, dict) else None
    return not (isinstance(props, dict) and rule.old in props)


def _breaking_items(
    policy: Policy, new: Any, baseline: Any, profiles: list, rules: list[AliasRule]
) -> list[Item]:
    """(a) No breaking change against the baseline for the required clients, unless an alias covers it."""
    from mcp_matrix.evolution.diff import diff_snapshots

    who = ", ".join(p.name for p in profiles) or "no client"
    name = f"no breaking change against the baseline for {who}"
    if baseline is None or new is None:
        missing = (
            "the baseline snapshot"
            if baseline is None
            else "a snapshot of the new version (run with a target)"
        )
        return [Item(name, False, f"cannot compare: {missing} is missing")]
    diff = diff_snapshots(baseline, new, profiles)
    breaking = [c for c in diff.changes if c.severity == "breaking"]
    if not breaking:
        return [
            Item(
                name,
                True,
                f"{len(diff.changes)} changes from {baseline.source or 'the baseline'}, none breaking "
                f"for {who}",
            )
        ]
    items = []
    for change in breaking:
        rule = next(
            (r for r in rules if r.tool == change.tool and change.param in (r.old, r.new)), None
        )
        why = "; ".join(change.reasons) or change.message
        if rule is not None:
            items.append(
                Item(
                    f"breaking change {change.id} is covered by an alias",
                    True,
                    f"{change.message} ({why}); covered by the policy's alias {rule.label}: "
                    + (
                        "its retirement is checked below"
                        if rule.retire
                        else "it must still be accepted (below)"
                    ),
                )
            )
        else:
            items.append(
                Item(
                    f"no breaking change {change.id} without an alias",
                    False,
                    f"{change.message} ({why}); keep the old name as a deprecated alias mapped at the "
                    "boundary, and list it under aliases in the policy",
                )
            )
    return items


def _accepted_item(
    rule: AliasRule, new: Any, alias_replay: Callable[[AliasRule], dict] | None
) -> Item:
    """(b) The deprecated alias is still accepted: its recorded old-name calls, replayed, are not refused for the name."""
    name = f"deprecated alias {rule.label} is still accepted"
    declared = (
        ""
        if new is None or not _absent(new, rule)
        else f"the new schema of {rule.tool} no longer declares {rule.old}; "
    )
    if not rule.calls:
        return Item(
            name, False, declared + "no recorded calls listed under calls: to prove it with"
        )
    if alias_replay is None:
        return Item(
            name,
            False,
            declared + "needs a live target to replay the recorded calls: run check with "
            "--server, --stdio or --http",
        )
    report = alias_replay(rule)
    if not report.get("measured", True):
        return Item(name, False, f"the target could not be measured: {report.get('error')}")
    keys = (
        "accepted",
        "refused_under_both_names",
        "refused_for_the_old_name",
        "lost_or_unreachable",
        "not_probed",
    )
    total: dict[str, int] = dict.fromkeys(("uses", *keys), 0)
    bad_in: dict[str, int] = {}  # profile -> old-name calls not accepted for the name's sake
    examples: list[str] = []
    for r in report.get("results", []):
        a = r.get("alias") or {}
        total["uses"] += a.get("uses", 0)
        for k in keys:
            total[k] += a.get(k, {}).get("count", 0)
        bad = sum(a.get(k, {}).get("count", 0) for k in keys[2:])
        bad_in[r["profile"]] = bad_in.get(r["profile"], 0) + bad
        examples += [
            f"{e['id']} ({e['reason']})" for e in r.get("examples", {}).get("alias-refused", [])[:1]
        ]
    uses, accepted, both, refused, other, unprobed = (total[k] for k in ("uses", *keys))
    files = ", ".join(p.name for p in rule.calls)
    if uses == 0:
        return Item(
            name,
            False,
            declared
            + f"no recorded call in {files} uses {rule.old} on {rule.tool}: nothing proves it",
        )
    from mcp_matrix.evolution.replay import rate_text

    words = (
        f"replayed the calls using {rule.old} in {files} through {', '.join(bad_in)}: "
        f"{rate_text(accepted, uses)} accepted, {rate_text(both, uses)} refused under both names (not about the name), "
        f"{rate_text(refused, uses)} refused because of the old name"
    )
    if other:
        words += f", {rate_text(other, uses)} lost silently, unreachable or broken"
    if unprobed:
        words += f", {rate_text(unprobed, uses)} refused and not probed with {rule.new} (the tool is not repeat-safe)"
    failing = [c for c, bad in bad_in.items() if bad]
    if failing:
        words += f"; failing in {', '.join(failing)}"
    if examples:
        words += f"; e.g. {examples[0]}"
    return Item(name, not (refused or other or unprobed), declared + words)


def _retirement_item(policy: Policy, rule: AliasRule, now: Any) -> Item:
    """(c) Retiring an alias: only when every frozen-caller signal has been quiet for retire_quiet_days."""
    import datetime as _dt

    from mcp_matrix.evolution.calls_file import calls_file, iter_calls

    days = int(policy.extra.get("retire_quiet_days", QUIET_DAYS))
    name = f"retiring alias {rule.label}: live, retry and transcript signals quiet for {days} days"
    last: dict[str, tuple[Any, str, str] | None] = {}
    undated: dict[str, int] = {}
    seen: set[str] = set()
    for path, population in signal_files(policy, rule):
        source = calls_file(path, population, given_by=f"{policy.source}: recorded_calls")
        seen.add(source.population)
        last.setdefault(source.population, None)
        for call, _ in iter_calls(source):
            if (
                call.tool != rule.tool
                or not isinstance(call.arguments, dict)
                or rule.old not in call.arguments
            ):
                continue
            if call.timestamp is None:
                undated[source.population] = undated.get(source.population, 0) + 1
                continue
            best = last.get(source.population)
            if best is None or call.timestamp > best[0]:
                last[source.population] = (call.timestamp, call.id, path.name)
    window = _dt.timedelta(days=days)
    parts, quiet = [], True
    for population in SIGNALS:
        if population not in seen:
            quiet = False
            parts.append(
                f"{population}: not measured (list a {population} calls file under recorded_calls)"
            )
            continue
        if undated.get(population):
            quiet = False
            parts.append(
                f"{population}: {undated[population]} calls using {rule.old} carry no timestamp"
            )
            continue
        found = last.get(population)
        if found is None:
            parts.append(f"{population}: no call uses {rule.old}")
            continue
        moment, call_id, file = found
        age = now - moment
        ok = age >= window
        quiet = quiet and ok
        parts.append(
            f"{population}: last use {moment.strftime('%Y-%m-%dT%H:%M:%SZ')} ({call_id} in {file}), "
            f"{age.days} days before {now.date().isoformat()}"
            + ("" if ok else f": not quiet (quiet from {(moment + window).date().isoformat()})")
        )
    how = "marked retire: true" if rule.retire else f"the new schema no longer declares {rule.old}"
    verdict = "allowed" if quiet else "blocked"
    return Item(name, quiet, f"retirement {verdict} ({how}); " + "; ".join(parts))
