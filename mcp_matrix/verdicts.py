"""The one verdict vocabulary (DESIGN.md): order, symbols, colours, meanings, gates, replay.

Every other module derives what it needs from ``VERDICTS``; a new verdict is one row here.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_matrix.errors import InputError


@dataclass(frozen=True)
class Verdict:
    """One verdict: everything every writer, gate and replay needs to know about it."""

    name: str
    phase: str  # "discovery", "call", or "any" (skipped)
    symbol: str
    colour: str  # a rich style
    meaning: str
    fails_release: bool  # in the default --fail-on set
    replay: str | None  # what a replayed call with this verdict counts as (call verdicts only)


# Worst first: the order is the severity. Discovery and call verdicts share one scale so a
# cell's worst is well defined across phases.
VERDICTS: tuple[Verdict, ...] = (
    Verdict(
        "broken",
        "call",
        "✖",
        "bold red",
        "no usable answer: crash, timeout, malformed JSON-RPC",
        True,
        "broken",
    ),
    Verdict(
        "silent-corruption",
        "call",
        "≠",
        "bold magenta",
        "success reported, but values were changed",
        True,
        "silent",
    ),
    Verdict(
        "silent-loss",
        "call",
        "∅",
        "bold magenta",
        "success reported, but data the caller sent was lost",
        True,
        "silent",
    ),
    Verdict(
        "accepted-invalid",
        "call",
        "!",
        "magenta",
        "the case expected an error and the server accepted it",
        True,
        "silent",
    ),
    Verdict(
        "session-broken",
        "discovery",
        "☠",
        "red",
        "every request of the session fails because of one tool",
        False,
        None,
    ),
    Verdict(
        "server-dropped",
        "discovery",
        "⊘",
        "red",
        "the client drops every tool of the server because of one tool",
        False,
        None,
    ),
    # An unmutated call the server refused (or whose result the client rejected) is, for a
    # frozen caller, as loud as a refusal.
    Verdict(
        "failed",
        "call",
        "✗",
        "red",
        "an intact, valid call that the server rejected or answered wrongly",
        False,
        "loud",
    ),
    Verdict("hidden", "discovery", "–", "yellow", "the client drops this tool", False, None),
    Verdict(
        "unreachable",
        "call",
        "·",
        "dim",
        "the tool is not visible in this client",
        False,
        "unreachable",
    ),
    Verdict(
        "loud",
        "call",
        "⚠",
        "cyan",
        "refused with an error the model can read (costs a turn)",
        False,
        "loud",
    ),
    # A mutated call that succeeded and was compared with the intact call, while the server's
    # answers changed between calls: the difference may be the state's, so no finding is claimed
    # (the gate passes); for a replayed caller the data was still sent changed, unseen ("silent").
    Verdict(
        "unverified",
        "call",
        "≟",
        "yellow",
        "the call was changed and succeeded; the server's answers changed between calls, "
        "so whether the change mattered could not be shown",
        False,
        "silent",
    ),
    Verdict(
        "degraded",
        "discovery",
        "◐",
        "yellow",
        "visible, but the schema the model sees lost something",
        False,
        None,
    ),
    Verdict(
        "tolerated",
        "call",
        "≈",
        "green",
        "the call was changed, yet the server gave the same result",
        False,
        "delivered",
    ),
    Verdict("skipped", "any", "?", "dim", "not called (safety policy or no case)", False, None),
    Verdict(
        "intact",
        "call",
        "✓",
        "green",
        "the call arrived as intended and got the expected outcome",
        False,
        "delivered",
    ),
    Verdict(
        "visible",
        "discovery",
        "○",
        "green",
        "the client shows the tool with its schema unchanged (no call made)",
        False,
        None,
    ),
)

BY_NAME: dict[str, Verdict] = {v.name: v for v in VERDICTS}

# What each replay category means for whoever sent the call (seed "Renaming a tool parameter"):
# the words ``replay`` counts its calls in.
REPLAY_MEANING: dict[str, str] = {
    "delivered": "delivered intact",
    "loud": "refused loudly, with an error the caller can read",
    "silent": "reported as a success with data lost or changed: nobody is told",
    "unreachable": "not sent: the client does not show the tool",
    "broken": "got no usable answer (crash, timeout, garbage)",
}

# Derived views, kept for the writers that read them.
SEVERITY = tuple(v.name for v in VERDICTS)
SYMBOL = {v.name: v.symbol for v in VERDICTS}
COLOUR = {v.name: v.colour for v in VERDICTS}
MEANING = {v.name: v.meaning for v in VERDICTS}
RELEASE_FAILING = tuple(v.name for v in VERDICTS if v.fails_release)
REPLAY_CATEGORY = {v.name: v.replay for v in VERDICTS if v.replay}
DISCOVERY_VERDICTS = tuple(v.name for v in VERDICTS if v.phase == "discovery")
CALL_VERDICTS = tuple(v.name for v in VERDICTS if v.phase == "call")


def rank(verdict: str) -> int:
    """Lower is worse; unknown verdicts sort last."""
    return SEVERITY.index(verdict) if verdict in SEVERITY else len(SEVERITY)


def worst(verdicts) -> str | None:
    vs = list(verdicts)
    return min(vs, key=rank) if vs else None


def parse_verdicts(value: str, where: str) -> list[str]:
    """A comma-separated verdict list from a flag (``none`` for no verdict); unknown ones are input errors."""
    if value.strip() == "none":
        return []
    verdicts = [v.strip() for v in value.split(",") if v.strip()]
    for v in verdicts:
        if v not in SEVERITY:
            raise InputError(
                f"unknown verdict {v!r}; expected some of: {', '.join(SEVERITY)}", where=where
            )
    return verdicts
