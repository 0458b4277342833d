"""The counts of a replay: rates with their denominators, one tally per (profile, file), the report.

A tally keeps counters and a few examples, never the calls (memory is bounded however long the
file); parts of one file (its transcripts, replayed in parallel) are merged in file order. Every
rate is a percentage with its count and denominator, ``2.5% (1 of 40)``, never a bare ratio
(docs/design.md#rename-additively). ``divergence`` compares a replayed result with the recorded
one. The report document is ``format: mcp-matrix.replay``, ``version: 1`` (docs/evolution.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix import __version__
from mcp_matrix.core.replay_events import REPLAY_FORMAT, REPLAY_VERSION
from mcp_matrix.core.verdicts import REPLAY_CATEGORY
from mcp_matrix.run.classify import Answer, same_result

FORMAT = REPLAY_FORMAT  # the report's and its events' (--results) format
VERSION = REPLAY_VERSION

CATEGORIES = ("delivered", "loud", "silent", "unreachable", "broken")
CATEGORY_OF = REPLAY_CATEGORY
# Keys whose values change from one call to the next; dropped (at any depth) before a replayed
# result is compared with the recorded one. Extend with ``ignore_keys`` (``--ignore-key``).
VOLATILE_KEYS = frozenset(
    {
        "_meta",
        "timestamp",
        "time",
        "date",
        "now",
        "created_at",
        "createdAt",
        "updated_at",
        "updatedAt",
        "modified_at",
        "last_modified",
        "expires_at",
        "request_id",
        "requestId",
        "trace_id",
        "traceId",
        "span_id",
        "elapsed",
        "elapsed_ms",
        "duration",
        "duration_ms",
        "took_ms",
        "latency_ms",
        "etag",
        "nonce",
    }
)
# -- rates ---------------------------------------------------------------------------------


def rate_text(count: int, of: int) -> str:
    """``2.5% (1 of 40)``: a percentage always with its count and denominator."""
    if of <= 0:
        return f"no calls ({count} of {of})"
    return f"{100.0 * count / of:.1f}% ({count} of {of})"


def rate(count: int, of: int) -> dict:
    return {
        "count": count,
        "of": of,
        "percent": round(100.0 * count / of, 1) if of else None,
        "text": rate_text(count, of),
    }


# -- the tally of one (profile, file) ------------------------------------------------------


@dataclass
class TranscriptTally:
    calls: int = 0
    compared: int = 0
    diverged: int = 0
    first: dict | None = None  # {"id", "turn", "line", "why"} of the first diverging call


@dataclass
class Tally:
    """Counters for one profile over one calls file (bounded: no call is kept but the examples)."""

    profile: str
    file: str
    population: str
    max_examples: int = 3
    calls: int = 0
    categories: Counter = field(default_factory=Counter)
    verdicts: Counter = field(default_factory=Counter)
    examples: dict[str, list[dict]] = field(default_factory=dict)
    sometimes: Counter = field(
        default_factory=Counter
    )  # intermittent behaviour -> calls it would change
    retry: Counter = field(default_factory=Counter)
    compared: int = 0
    diverged: int = 0
    first_divergence: dict | None = None
    transcripts: dict[str, TranscriptTally] = field(default_factory=dict)
    reads: dict[str, Any] = field(default_factory=dict)
    alias: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        """Add a later part of the same file (parts are merged in file order)."""
        self.calls += other.calls
        self.compared += other.compared
        self.diverged += other.diverged
        for mine, theirs in (
            (self.categories, other.categories),
            (self.verdicts, other.verdicts),
            (self.sometimes, other.sometimes),
            (self.retry, other.retry),
            (self.alias, other.alias),
        ):
            mine.update(theirs)
        for category, items in other.examples.items():
            for item in items:
                self.example(category, item)
        self.first_divergence = self.first_divergence or other.first_divergence
        for key, t in other.transcripts.items():
            known = self.transcripts.get(key)
            if known is None:
                self.transcripts[key] = t
            else:
                known.calls, known.compared, known.diverged = (
                    known.calls + t.calls,
                    known.compared + t.compared,
                    known.diverged + t.diverged,
                )
                known.first = known.first or t.first
        for tool, value in other.reads.items():
            self.reads[tool] = add_numbers(self.reads.get(tool), value)
        for text in other.notes:
            self.note(text)

    def wants_example(self, category: str) -> bool:
        return len(self.examples.get(category, ())) < self.max_examples

    def example(self, category: str, item: dict) -> None:
        bucket = self.examples.setdefault(category, [])
        if len(bucket) < self.max_examples:
            bucket.append(item)

    def note(self, text: str) -> None:
        if len(self.notes) < 10 and text not in self.notes:
            self.notes.append(text)

    def to_json(self) -> dict:
        n = self.calls
        cats = CATEGORIES
        out: dict[str, Any] = {
            "profile": self.profile,
            "file": self.file,
            "population": self.population,
            "calls": n,
            "outcomes": {c: rate(self.categories.get(c, 0), n) for c in cats},
            "verdicts": dict(sorted(self.verdicts.items())),
            "examples": self.examples,
        }
        if self.sometimes:
            out["sometimes"] = {b: rate(c, n) for b, c in sorted(self.sometimes.items())}
        if self.population == "retry":
            r = self.retry
            out["retry"] = {
                "delivered_first_attempt": rate(r.get("first", 0), n),
                "recovered_on_retry": rate(r.get("recovered", 0), n),
                "permanent_loss": rate(r.get("measured", 0) + r.get("deterministic", 0), n),
                "failed_every_attempt": rate(r.get("measured", 0), n),
                "deterministic_not_retried": rate(r.get("deterministic", 0), n),
                "undecided": rate(r.get("unknown", 0), n),
                "silent": rate(r.get("silent", 0), n),
                "attempts": r.get("attempts", 0),
            }
        if self.compared or self.population == "transcript":
            out["divergence"] = {
                "compared": self.compared,
                "without_recording": n - self.compared,
                "diverged": rate(self.diverged, self.compared),
                "first": self.first_divergence,
            }
        if self.transcripts:
            ts = self.transcripts
            out["transcripts"] = {
                "count": len(ts),
                "diverged": rate(sum(1 for t in ts.values() if t.first), len(ts)),
                "each": [
                    {
                        "transcript": k,
                        "calls": t.calls,
                        "compared": t.compared,
                        "diverged": rate(t.diverged, t.compared),
                        "first_diverging": t.first,
                    }
                    for k, t in ts.items()
                ],
            }
        if self.reads:
            out["reads"] = self.reads
        if self.alias:
            a = self.alias
            uses = a.get("uses", 0)
            out["alias"] = {
                "uses": uses,
                "accepted": rate(a.get("accepted", 0), uses),
                "refused_under_both_names": rate(a.get("both", 0), uses),
                "refused_for_the_old_name": rate(a.get("name", 0), uses),
                "not_probed": rate(a.get("unprobed", 0), uses),
                "lost_or_unreachable": rate(a.get("other", 0), uses),
            }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class ReplayReport:
    measured: bool
    offline: bool
    target: Any
    server: Any
    baseline: str | None
    files: list[dict]
    profiles: list[str]
    retries: int
    tallies: list[Tally]
    ignore_keys: list[str]
    error: Any = None
    interrupted: bool = False

    def to_json(self, fail_on: Iterable[tuple[str, float]] = ()) -> dict:
        failing = self.failing(fail_on)
        return {
            "format": FORMAT,
            "version": VERSION,
            "mcp_matrix": __version__,
            "measured": self.measured,
            "offline": self.offline,
            "interrupted": self.interrupted,
            "error": self.error,
            "target": self.target,
            "server": self.server,
            "baseline": self.baseline,
            "retries": self.retries,
            "ignored_result_keys": self.ignore_keys,
            "files": self.files,
            "profiles": self.profiles,
            "results": [t.to_json() for t in self.tallies],
            "summary": {
                "fail_on": [{"measure": m, "above_percent": p} for m, p in fail_on],
                "failing": failing,
                "passed": not failing,
            },
        }

    def failing(self, fail_on: Iterable[tuple[str, float]]) -> list[dict]:
        """Each (profile, file) whose rate of a ``fail_on`` measure is above its threshold."""
        out = []
        for t in self.tallies:
            for measure, above in fail_on:
                count, of = measure_of(t, measure)
                if of and count and 100.0 * count / of > above:
                    out.append(
                        {
                            "profile": t.profile,
                            "file": t.file,
                            "population": t.population,
                            "measure": measure,
                            **rate(count, of),
                        }
                    )
        return out


# What ``--fail-on`` can name: every outcome but delivery, and the two population measures.
MEASURES = ("loud", "silent", "unreachable", "broken", "permanent-loss", "diverged")


def measure_of(t: Tally, measure: str) -> tuple[int, int]:
    """(count, denominator) of a ``--fail-on`` measure in one tally."""
    if measure == "permanent-loss":
        return (
            (t.retry.get("measured", 0) + t.retry.get("deterministic", 0), t.calls)
            if t.population == "retry"
            else (0, 0)
        )
    if measure == "diverged":
        return t.diverged, t.compared
    return t.categories.get(measure, 0), t.calls


# -- comparison with the recording -------------------------------------------------------------


def divergence(
    recorded: Mapping[str, Any],
    answer: Answer | None,
    ignore: frozenset[str] = VOLATILE_KEYS,
    failed: bool = False,
) -> str | None:
    """Why the replayed answer differs from the recorded result, or None when it is the same outcome.

    ``failed``: the replay failed even if the server answered (the client refused or rejected the
    result). Two errors are the same outcome whatever their wording; an error and a success differ; two
    successes are compared with ``same_result`` after dropping ``ignore`` keys at any depth:
    ``structuredContent`` alone when both carry it, else the content (JSON text parsed first).
    """
    recorded_error = recorded.get("isError") is True
    replay_error = failed or answer is None or not answer.ok
    if recorded_error or replay_error:
        if recorded_error == replay_error:
            return None
        return (
            "recorded a success, replay got an error"
            if replay_error
            else "recorded an error, replay succeeded"
        )
    assert answer is not None  # no answer is a replay error, decided above
    a, b = _normal(recorded, ignore), _normal(answer.result, ignore)
    if "structuredContent" in a and "structuredContent" in b:
        a, b = (
            {"structuredContent": a["structuredContent"]},
            {"structuredContent": b["structuredContent"]},
        )
    if same_result(Answer(result=a), Answer(result=b)):
        return None
    return (
        "a different structuredContent"
        if "structuredContent" in a
        else "a different result content"
    )


def _normal(result: Mapping[str, Any], ignore: frozenset[str]) -> dict:
    out: dict[str, Any] = {"isError": result.get("isError") is True}
    if result.get("structuredContent") is not None:
        out["structuredContent"] = _drop(result["structuredContent"], ignore)
    content = result.get("content")
    if isinstance(content, list):
        items = []
        for c in content:
            if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str):
                try:
                    items.append({"type": "text", "json": _drop(json.loads(c["text"]), ignore)})
                    continue
                except ValueError:
                    pass
                items.append({"type": "text", "text": c["text"]})
            else:
                items.append(_drop(c, ignore))
        out["content"] = items
    return out


def _drop(value: Any, ignore: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _drop(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_drop(v, ignore) for v in value]
    return value


def add_numbers(acc: Any, new: Any) -> Any:
    """Sum the numbers of two structured reads (counters summed over sessions); other values: the latest."""
    if isinstance(acc, dict) and isinstance(new, dict):
        return {k: add_numbers(acc.get(k), v) if k in acc else v for k, v in new.items()} | {
            k: v for k, v in acc.items() if k not in new
        }
    if (
        isinstance(acc, (int, float))
        and isinstance(new, (int, float))
        and not isinstance(acc, bool)
        and not isinstance(new, bool)
    ):
        return acc + new
    return new


__all__ = [
    "CATEGORIES",
    "CATEGORY_OF",
    "FORMAT",
    "MEASURES",
    "VERSION",
    "VOLATILE_KEYS",
    "ReplayReport",
    "Tally",
    "TranscriptTally",
    "add_numbers",
    "divergence",
    "measure_of",
    "rate",
    "rate_text",
]
