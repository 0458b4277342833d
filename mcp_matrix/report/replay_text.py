"""The ``replay`` report on the terminal: plain sentences per (profile, calls file).

The categories are counted in ``mcp_matrix.core.verdicts.REPLAY_MEANING``'s words; what each population
of frozen callers makes of them is ``CONSEQUENCE``. Everything that came from a server or a
calls file is escaped (``markup``).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from mcp_matrix.core.text import markup
from mcp_matrix.core.verdicts import REPLAY_MEANING
from mcp_matrix.evolution.model import POPULATION_LABEL

CONSEQUENCE = {
    "live": "a live conversation recovers within a turn or two once it reads the error",
    "retry": "a queued retry has no model to adapt: it fails again until its budget is spent",
    "transcript": "a transcript replay runs on in a different world: a false negative",
}


def counted(n: int, of: int, noun: str = "calls") -> str:
    """``20 of 20 calls (100.0%)``: the count, the denominator, then the percentage."""
    pct = f"{100.0 * n / of:.1f}%" if of else "no calls"
    return f"{n} of {of} {noun} ({pct})"


def sentences(result: dict) -> list[str]:
    """Plain words for one (profile, file): what happened to its calls."""
    who, pop, n = result["profile"], result["population"], result["calls"]
    out = []
    outcomes = result["outcomes"]
    parts = [
        f"{counted(o['count'], n)} {REPLAY_MEANING[c]}" for c, o in outcomes.items() if o["count"]
    ]
    out.append(f"{pop}: in {who}, " + ("; ".join(parts) if parts else "no calls") + ".")
    retry = result.get("retry")
    if retry:
        loss = retry["permanent_loss"]
        lost = "permanent loss" if loss["count"] else "no permanent loss"
        out.append(f"retry: {counted(loss['count'], n)} fail on every attempt in {who}: {lost}.")
        if retry["recovered_on_retry"]["count"]:
            out.append(
                f"retry: {counted(retry['recovered_on_retry']['count'], n)} recovered on a later attempt in {who}."
            )
        if retry["undecided"]["count"]:
            out.append(
                f"retry: {counted(retry['undecided']['count'], n)} failed once and were not sent again "
                "(the tool is not repeat-safe and the failure is not a validation error): undecided."
            )
    div = result.get("divergence")
    if div and div["compared"]:
        d = div["diverged"]
        if pop == "transcript":
            ts = result.get("transcripts") or {}
            firsts = [
                f"{t['transcript']} turn {t['first_diverging'].get('turn')} ({t['first_diverging']['id']})"
                for t in ts.get("each", [])
                if t["first_diverging"]
            ]
            shown = ", ".join(firsts[:8]) + (
                f" and {len(firsts) - 8} more" if len(firsts) > 8 else ""
            )
            tail = f"; first diverging call: {shown}" if firsts else ""
            tcount = ts.get("diverged", {})
            out.append(
                f"transcript: {counted(d['count'], div['compared'])} diverge from the recording in {who}"
                + (
                    f", in {counted(tcount['count'], tcount['of'], 'transcripts')}"
                    if tcount
                    else ""
                )
                + (": a false negative for whoever replays them" if d["count"] else "")
                + tail
                + "."
            )
        elif d["count"]:
            first = div["first"] or {}
            out.append(
                f"{pop}: {counted(d['count'], div['compared'], 'recorded results')} differ on replay in {who} "
                f"(first: {first.get('id')}, line {first.get('line')})."
            )
    for behaviour, r in (result.get("sometimes") or {}).items():
        out.append(
            f"{pop}: {who} sometimes changes {counted(r['count'], n)} (intermittent: {behaviour}); "
            "those variants were not sent, so a write is not made twice."
        )
    alias = result.get("alias")
    if alias:
        out.append(
            f"alias: {alias['uses']} calls use the old name in {who}: {alias['accepted']['text']} accepted, "
            f"{alias['refused_for_the_old_name']['text']} refused because of the old name."
        )
    for tool, values in (result.get("reads") or {}).items():
        numbers = ", ".join(
            f"{k} {v}" for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)
        )
        out.append(f"{pop}: after the replay in {who}, {tool}: {numbers or 'no counters'}.")
    return out


def write_terminal(doc: dict, console: Console, examples: bool = True) -> None:
    if not doc["measured"]:
        err = doc.get("error") or {}
        console.print(
            f"[red]could not measure the target[/]: {markup(str(err.get('message') or err))}"
        )
        return
    mode = (
        "offline, against a snapshot: the server is modelled (it validates against the inputSchema it lists)"
        if doc["offline"]
        else "live"
    )
    console.print(
        f"[bold]mcp-matrix replay[/] ({mode}); {len(doc['profiles'])} client profile(s)"
        + (f"; caching clients hold {markup(doc['baseline'])}" if doc["baseline"] else "")
    )
    by_file: dict[str, list[dict]] = {}
    for r in doc["results"]:
        by_file.setdefault(r["file"], []).append(r)
    for f in doc["files"]:
        pop = f["population"]
        console.print(
            f"\n[bold]{markup(f['file'])}[/] — {POPULATION_LABEL[pop]} ({f.get('calls', 0)} calls; "
            f"population from {f['population_from']}): {CONSEQUENCE[pop]}"
        )
        for r in by_file.get(f["file"], []):
            for line in sentences(r):
                console.print("  " + markup(line))
            if examples:
                for items in r["examples"].values():
                    for item in items[:1]:
                        console.print(
                            f"    [dim]e.g. {markup(str(item['id']))} (line {item['line']}): "
                            f"{markup(str(item.get('reason', ''))[:160])}[/]"
                        )
            for note in r.get("notes", []):
                console.print(f"    [yellow]note[/]: {markup(note)}")
    failing = doc["summary"]["failing"]
    if failing:
        console.print(
            "\n[red]over the threshold[/]: "
            + "; ".join(
                markup(f"{x['measure']} {x['text']} in {x['profile']} ({Path(x['file']).name})")
                for x in failing
            )
        )
    else:
        console.print("\nnothing over the threshold")


__all__ = ["CONSEQUENCE", "counted", "sentences", "write_terminal"]
