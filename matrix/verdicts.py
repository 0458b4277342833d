"""Verdicts, their order of severity, and how every writer shows them (DESIGN.md)."""

from __future__ import annotations

from matrix.errors import InputError

# Worst first. Discovery and call verdicts share one scale so a cell's worst is well defined.
SEVERITY = (
    "broken",
    "silent-corruption",
    "silent-loss",
    "accepted-invalid",
    "session-broken",
    "server-dropped",
    "failed",
    "hidden",
    "unreachable",
    "loud",
    "degraded",
    "tolerated",
    "skipped",
    "intact",
    "visible",
)

SYMBOL = {
    "broken": "💥",
    "silent-corruption": "≠",
    "silent-loss": "∅",
    "accepted-invalid": "!",
    "session-broken": "☠",
    "server-dropped": "⊘",
    "failed": "✗",
    "hidden": "–",
    "unreachable": "·",
    "loud": "⚠",
    "degraded": "◐",
    "tolerated": "≈",
    "skipped": "?",
    "intact": "✓",
    "visible": "✓",
}

COLOUR = {
    "broken": "bold red",
    "silent-corruption": "bold magenta",
    "silent-loss": "bold magenta",
    "accepted-invalid": "magenta",
    "session-broken": "red",
    "server-dropped": "red",
    "failed": "red",
    "hidden": "yellow",
    "unreachable": "dim",
    "loud": "cyan",
    "degraded": "yellow",
    "tolerated": "green",
    "skipped": "dim",
    "intact": "green",
    "visible": "green",
}

MEANING = {
    "visible": "the client shows the tool with its schema unchanged",
    "degraded": "visible, but the schema the model sees lost something",
    "hidden": "the client drops this tool",
    "server-dropped": "the client drops every tool of the server because of one tool",
    "session-broken": "every request of the session fails because of one tool",
    "intact": "the call arrived as intended and got the expected outcome",
    "tolerated": "the call was changed, yet the server gave the same result",
    "loud": "refused with an error the model can read (costs a turn)",
    "silent-loss": "success reported, but data the caller sent was lost",
    "silent-corruption": "success reported, but values were changed",
    "accepted-invalid": "the case expected an error and the server accepted it",
    "failed": "an intact, valid call that the server rejected or answered wrongly",
    "unreachable": "the tool is not visible in this client",
    "broken": "no usable answer: crash, timeout, malformed JSON-RPC",
    "skipped": "not called (safety policy or no case)",
}


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
            raise InputError(f"unknown verdict {v!r}; expected some of: {', '.join(SEVERITY)}", where=where)
    return verdicts
