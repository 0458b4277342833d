"""The one verdict vocabulary (docs/design.md#verdicts): order, symbols, colours, meanings, gates, replay.

Every other module derives what it needs from ``VERDICTS`` (the rows of ``V``): the sets below
(``LOST``, ``SHOWN``, ``INTENDED``, ``FINE``, ...) are the only verdict sets of the package, the
classifier names its verdicts as ``V.<ROW>``, the HTML page's colours are ``VerdictRow.css``, and a
test checks the published schemas' enums and the advice table against the rows. A new verdict is
one row here (then the branch that produces it).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_matrix.core.errors import InputError


@dataclass(frozen=True)
class VerdictRow:
    """One verdict: everything every writer, gate and replay needs to know about it."""

    name: str
    phase: str  # "discovery", "call", or "any" (skipped)
    symbol: str
    colour: str  # a rich style
    meaning: str
    fails_release: bool  # in the default --fail-on set
    replay: str | None  # what a replayed call with this verdict counts as (call verdicts only)
    css: tuple[str, str]  # the HTML page's cell colours: (background, text)
    # its own fix advice (mcp_matrix.report.advice.BY_VERDICT): "always" given after the specific
    # pieces, "fallback" only when nothing more specific applies, None: no advice of its own
    advice: str | None = None
    loses: str | None = None  # a discovery verdict that loses the tool: "tool", "server", "session"
    shown: bool = False  # the model is shown the tool (a call can reach it)
    intended: bool = False  # exactly as intended: not a finding (a report's finding count)
    fine: bool = False  # nothing to fix: no triage cause and no advice (intended, or harmless)
    silent_change: bool = False  # success reported on a call changed on the way, shown to matter


# Worst first: the order is the severity. Discovery and call verdicts share one scale so a
# cell's worst is well defined across phases.
class V:
    """The verdict table: one row per verdict, a named constant each (``V.INTACT``)."""

    BROKEN = VerdictRow(
        "broken",
        "call",
        "✖",
        "bold red",
        "no usable answer: crash, timeout, malformed JSON-RPC",
        True,
        "broken",
        css=("#7f0019", "#fff"),
        advice="always",
    )
    SILENT_CORRUPTION = VerdictRow(
        "silent-corruption",
        "call",
        "≠",
        "bold magenta",
        "success reported, but values were changed",
        True,
        "silent",
        css=("#a0157c", "#fff"),
        advice="always",
        silent_change=True,
    )
    SILENT_LOSS = VerdictRow(
        "silent-loss",
        "call",
        "∅",
        "bold magenta",
        "success reported, but data the caller sent was lost",
        True,
        "silent",
        css=("#c2188f", "#fff"),
        advice="always",
        silent_change=True,
    )
    ACCEPTED_INVALID = VerdictRow(
        "accepted-invalid",
        "call",
        "!",
        "magenta",
        "the case expected an error and the server accepted it",
        True,
        "silent",
        css=("#e26bbf", "#fff"),
        advice="always",
    )
    SESSION_BROKEN = VerdictRow(
        "session-broken",
        "discovery",
        "☠",
        "red",
        "every request of the session fails because of one tool",
        False,
        None,
        css=("#c62828", "#fff"),
        advice="fallback",
        loses="session",
    )
    SERVER_DROPPED = VerdictRow(
        "server-dropped",
        "discovery",
        "⊘",
        "red",
        "the client drops every tool of the server because of one tool",
        False,
        None,
        css=("#e53935", "#fff"),
        advice="fallback",
        loses="server",
    )
    # An unmutated call the server refused (or whose result the client rejected) is, for a
    # frozen caller, as loud as a refusal.
    FAILED = VerdictRow(
        "failed",
        "call",
        "✗",
        "red",
        "an intact, valid call that the server rejected or answered wrongly",
        False,
        "loud",
        css=("#ef6c61", "#fff"),
        advice="fallback",
    )
    HIDDEN = VerdictRow(
        "hidden",
        "discovery",
        "–",
        "yellow",
        "the client drops this tool",
        False,
        None,
        css=("#f2b33d", "#3a2600"),
        advice="fallback",
        loses="tool",
    )
    UNREACHABLE = VerdictRow(
        "unreachable",
        "call",
        "·",
        "dim",
        "the tool is not visible in this client",
        False,
        "unreachable",
        css=("#d7d7dc", "#444"),
        advice="fallback",
    )
    LOUD = VerdictRow(
        "loud",
        "call",
        "⚠",
        "cyan",
        "refused with an error the model can read (costs a turn)",
        False,
        "loud",
        css=("#7fd3e6", "#06343f"),
        advice="fallback",
    )
    # A mutated call that succeeded and was compared with the intact call, while the server's
    # answers changed between calls: the difference may be the state's, so no finding is claimed
    # (the gate passes); for a replayed caller the data was still sent changed, unseen ("silent").
    UNVERIFIED = VerdictRow(
        "unverified",
        "call",
        "≟",
        "yellow",
        "the call was changed and succeeded; the server's answers changed between calls, "
        "so whether the change mattered could not be shown",
        False,
        "silent",
        css=("#e9e4c4", "#3a3000"),
    )
    DEGRADED = VerdictRow(
        "degraded",
        "discovery",
        "◐",
        "yellow",
        "visible, but the schema the model sees lost something",
        False,
        None,
        css=("#f7e08a", "#3a3000"),
        advice="fallback",
        shown=True,
    )
    TOLERATED = VerdictRow(
        "tolerated",
        "call",
        "≈",
        "green",
        "the call was changed, yet the server gave the same result",
        False,
        "delivered",
        css=("#b9e4b0", "#143d0c"),
        fine=True,
    )
    SKIPPED = VerdictRow(
        "skipped",
        "any",
        "?",
        "dim",
        "not called (safety policy or no case)",
        False,
        None,
        css=("#ececf0", "#555"),
        fine=True,
    )
    INTACT = VerdictRow(
        "intact",
        "call",
        "✓",
        "green",
        "the call arrived as intended and got the expected outcome",
        False,
        "delivered",
        css=("#4caf50", "#fff"),
        fine=True,
        intended=True,
    )
    VISIBLE = VerdictRow(
        "visible",
        "discovery",
        "○",
        "green",
        "the client shows the tool with its schema unchanged (no call made)",
        False,
        None,
        css=("#4caf50", "#fff"),
        fine=True,
        intended=True,
        shown=True,
    )


VERDICTS: tuple[VerdictRow, ...] = tuple(r for r in vars(V).values() if isinstance(r, VerdictRow))

BY_NAME: dict[str, VerdictRow] = {v.name: v for v in VERDICTS}

# What each replay category means for whoever sent the call (docs/design.md#rename-additively):
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

# The verdict sets every other module reads (worst first); never spelled elsewhere.
LOST = tuple(v.name for v in VERDICTS if v.loses)  # the client loses the tool: gate, triage
SHOWN = tuple(v.name for v in VERDICTS if v.shown)  # the tool reaches the model
INTENDED = tuple(v.name for v in VERDICTS if v.intended)  # not a finding
FINE = tuple(v.name for v in VERDICTS if v.fine)  # nothing to fix
SILENT_CHANGE = tuple(v.name for v in VERDICTS if v.silent_change)
ADVISED = tuple(v.name for v in VERDICTS if v.advice)  # the keys of advice.BY_VERDICT
ADVICE_ALWAYS = tuple(v.name for v in VERDICTS if v.advice == "always")


def is_finding(verdict: str) -> bool:
    """A cell worth listing: anything but exactly as intended (``INTENDED``)."""
    return verdict not in INTENDED


def css_rules() -> str:
    """The HTML page's ``.v-<verdict>`` rules, one per colour pair, in severity order (verdicts
    that share colours share a rule)."""
    by_colours: dict[tuple[str, str], list[str]] = {}
    for v in VERDICTS:
        by_colours.setdefault(v.css, []).append(v.name)
    return "\n".join(
        ", ".join(f".v-{name}" for name in names) + f" {{ background: {bg}; color: {fg}; }}"
        for (bg, fg), names in by_colours.items()
    )


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
