"""The one terminal sanitiser: untrusted text (tool names, server info, stderr, reasons) made
safe to print, for every command and the progress line.

A server controls most of what we print. Printed raw, a name or a stderr line can clear the
screen (CSI), retitle the window or write the clipboard (OSC 0/2, OSC 52), plant a link
(OSC 8), ring the bell, fake a new line, or, through rich, inject markup (``close[/bold]tag``
raises ``MarkupError``; ``[link=...]`` styles). Every such character is shown as a visible
escape instead (``\\x1b[2J`` stays readable, and acts on nothing), and markup is escaped.

- ``safe(text)``: plain text with every non-printable character shown as an escape
  (``\\n``, ``\\x1b``, ``\\u202e``); ``fold=True`` folds line breaks to one space first (prose).
- ``markup(text)``: ``safe`` plus rich-markup escaping, for f-strings passed to ``console.print``.
- ``terminal_console()``: the one way commands make a rich console: no markup guessing
  (highlight, emoji codes), and, when piped, no width limit, so tables never shrink to ellipses.
- ``redact(text, secrets)`` / ``redact_json(text, secrets)``: the one masking of secret values
  (``mcp_matrix.targets.kinds.Target.secrets`` lists them, in every encoding a transport derives): plain
  text, or JSON text masked inside its strings only. Every writer and stream goes through them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schemas import format_words

if TYPE_CHECKING:
    from rich.console import Console

_BREAKS = re.compile(r"[ \t]*(?:\r\n|[\r\n\u2028\u2029\x85])[ \t\r\n\u2028\u2029\x85]*")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

MASK = "***"

# Wide enough for any grid a run prints; when piped, rich would otherwise assume 80 columns.
PIPE_WIDTH = 10_000


def _escape_char(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def safe(text: object, fold: bool = False) -> str:
    """``text`` as a string a terminal shows but never obeys.

    Non-printable characters (C0/C1 controls incl. ESC and BEL, DEL, bidi overrides and other
    format characters, line and paragraph separators, lone surrogates) become visible escapes.
    With ``fold``, runs of line breaks become one space first (a stderr tail or a reason read
    as one line); without it (names), a newline is shown as ``\\n``.
    """
    s = text if isinstance(text, str) else str(text)
    if fold:
        s = _BREAKS.sub(" ", s)
    if s.isprintable():
        return s
    return "".join(ch if ch.isprintable() or ch == " " else _escape_char(ch) for ch in s)


def markup(text: object, fold: bool = False) -> str:
    """``safe(text)`` escaped for rich markup, to splice into a markup string."""
    from rich.markup import escape  # here: a process that never prints through rich skips it

    return escape(safe(text, fold=fold))


def terminal_console(stderr: bool = False, **kw: Any) -> Console:
    """A rich console for command output: no highlighting or ``:emoji:`` codes (both would
    rewrite a server's text), and, when not a terminal (a pipe, a CI log), plain text at the
    width the content needs rather than 80 columns with cells cut to ellipses."""
    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, emoji=False, **kw)
    if not console.is_terminal and "width" not in kw:
        console.width = PIPE_WIDTH
    return console


# What XML 1.0 forbids even as a reference (C0 controls but tab and line breaks, U+FFFE, U+FFFF,
# lone surrogates), and what a CI page shows obeyed: line and paragraph separators (U+0085,
# U+2028, U+2029), bidi controls (U+061C, U+200E-F, U+202A-E, U+2066-9: a name that reads
# backwards) and U+FEFF.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x85\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff"
    "\ufffe\uffff\ud800-\udfff]"
)


def escape_invisible(text: str) -> str:
    """``text`` with each such character as its ``\\uXXXX`` escape, tabs and line breaks kept:
    for a document a CI page shows (a JUnit file, SARIF messages)."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _json_forms(secret: str) -> set[str]:
    """``secret`` as it appears raw and inside JSON strings (escaped, ASCII-escaped)."""
    return {secret, json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1]}


def _longest_first(secrets: Sequence[str]) -> list[str]:
    return sorted({s for s in secrets if s}, key=len, reverse=True)


def redact(text: str, secrets: Sequence[str]) -> str:
    """Plain text with every secret (raw or JSON-escaped) replaced by ``***``; longer secrets
    first, so a secret that contains another is masked whole. For ids and names too (the
    pytest plugin's test ids): the same value always masks the same way."""
    for secret in _longest_first(secrets):
        for form in _json_forms(secret):
            if form and form in text:
                text = text.replace(form, MASK)
    return text


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"(?=(\s*:)?)')


def redact_json(text: str, secrets: Sequence[str], keys: Collection[str] = ()) -> str:
    """JSON text with every secret inside its strings (keys and values) replaced by ``***``.

    Only string tokens are touched, so a secret like ``true`` or ``8080`` (``--env DEBUG=true``)
    never turns a literal or a number into invalid JSON; each string that holds a secret is
    decoded, masked and encoded again, so a secret next to an escape is not cut in half. A
    string that is a word of the published formats whole (``format_words``: a key such as
    ``text`` or ``tools``, a fixed value such as ``visible``, when ``--env LOG_FORMAT=text``) is
    kept, as a key or a value: masked, the document would no longer read (and the word is in it
    anyway). ``keys``: more words kept whole as keys.
    """
    ordered = _longest_first(secrets)
    if not any(f in text for s in ordered for f in _json_forms(s)):
        return text  # the usual case: no secret anywhere, no need to look at each string
    words = format_words()

    def one(match: re.Match) -> str:
        token = match.group(0)
        value = json.loads(token)
        if value in words or (match.group(1) is not None and value in keys):
            return token
        clean = value
        for secret in ordered:
            clean = clean.replace(secret, MASK)
        return token if clean == value else json.dumps(clean, ensure_ascii=False)

    return _JSON_STRING.sub(one, text)


def redact_value(value: JSON, secrets: Sequence[str]) -> Any:
    """A decoded JSON value (a snapshot document) with the secrets masked in every string."""
    if not any(secrets):
        return value
    return json.loads(redact_json(json.dumps(value, ensure_ascii=False, default=str), secrets))


__all__ = [
    "MASK",
    "PIPE_WIDTH",
    "escape_invisible",
    "markup",
    "redact",
    "redact_json",
    "redact_value",
    "safe",
    "terminal_console",
]
