"""Which values a target carries are credentials: on a command line, in a URL, in an HTTP
header or in an environment a server inherits (``mcp_matrix.targets.kinds.Target.secrets`` gathers
them, every output masks them).

Apart from ``mcp_matrix.targets.kinds`` because it is one job: telling a secret by its name or its
shape, and the forms (URL-encoded, inside HTTP Basic) a server can echo it in.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from mcp_matrix.core.text import redact

# A name (flag, variable, header, query parameter) whose value is a credential: these words, and
# pass, pwd, pw and the short words of ``_SHORT_NAME`` as whole words (API_KEY, --key, ?sig=, but
# not --monkey).
_LONG_NAME = re.compile(
    r"(?i)token|secret|passw|passcode|passphrase|pincode|api[-_]?key|apikey|auth|credential|bearer"
    r"|session|cookie|signature|private|(^|[-_.])(pass|pwd|pw)($|[-_.])"
)
# The short words that also name other things: a version pin, a sort key, a signature scheme.
_SHORT_NAME = re.compile(r"(?i)(^|[-_.])(key|pin\d*|otp|sig|dsn|pat)($|[-_.])")

# A name ending in one of these words holds something about a credential, not the credential:
# OTP_VERSION (Erlang/OTP's release, set in every erlang Docker image), SECRET_VERSION=latest
# (a Secret Manager version alias), --key-version 3.
_ABOUT_WORDS = frozenset({"version", "versions"})
_NAME_WORD = re.compile(r"[-_.]+|(?<=[a-z0-9])(?=[A-Z])")  # snake, kebab, dotted and camelCase


def _is_secret_name(name: str) -> bool:
    bare = name.strip().lstrip("-")
    if _NAME_WORD.split(bare)[-1].lower() in _ABOUT_WORDS:
        return False
    return bool(_LONG_NAME.search(bare) or _SHORT_NAME.search(bare))


# A version (26.2.5.6, v1.2.3, 1.0.0-rc.1) or a release tag: what ``--pin`` pins a package to.
_VERSION = re.compile(r"(?i)v?\d+(\.\d+)+([-+][0-9a-z][0-9a-z.+-]*)?")
RELEASE_WORDS = frozenset(
    {"latest", "stable", "next", "canary", "beta", "alpha", "nightly", "current", "edge"}
    | {"preview", "insiders", "unstable", "oldstable", "lts"}
)


def is_version(value: str) -> bool:
    """Whether ``value`` names a release: a dotted version number or a release tag."""
    return value.lower() in RELEASE_WORDS or bool(_VERSION.fullmatch(value))


def _is_secret(name: str, value: str) -> bool:
    """Whether ``value`` given under ``name`` is a credential: under a credential's name, unless
    the name is only one of the short, ambiguous words (``--pin``, ``KEY``, ``?sig=``) and the
    value is a version (``--pin latest``, ``NODE_PIN=20.1.0``): a PIN (``PIN2=5555``), a key or a
    signature is never one. Under ``token``, ``secret``, ``password`` and the other long words,
    every value is."""
    if not _is_secret_name(name):
        return False
    return bool(_LONG_NAME.search(name)) or not is_version(value)


# A positional argument that is a credential by its shape: a known token prefix, or a long
# random string (letters and digits, no path or file name).
_TOKEN_PREFIX = re.compile(
    r"^(sk|pk|rk)[-_]|^(ghp|gho|ghu|ghs|ghr)_|^github_pat_|^glpat-|^xox[abposr]-|^xapp-"
    r"|^(AKIA|ASIA)[A-Z0-9]{12}|^AIza|^ya29\.|^npm_|^pypi-|^hf_|^shp(at|ss)_|^eyJ[\w-]+\.",
)
_RANDOM_TOKEN = re.compile(r"[A-Za-z0-9_+=~-]{24,}")


def looks_like_credential(token: str) -> bool:
    """Whether a bare token is a credential by its shape (a known prefix, or 24+ characters of
    mixed letters and digits with 12+ distinct ones): true of API keys, false of names and paths."""
    if len(token) < 12 or any(c.isspace() for c in token):
        return False
    if _TOKEN_PREFIX.match(token):
        return True
    return bool(
        _RANDOM_TOKEN.fullmatch(token)
        and any(c.isdigit() for c in token)
        and any(c.isalpha() for c in token)
        and len(set(token)) >= 12
    )


def argv_secrets(argv: Sequence[str]) -> list[str]:
    """The secret values on a command line: see ``Target.secrets``."""
    out: list[str] = []
    flag = ""  # the flag before this argument, when its value is a secret
    for arg in argv:
        name, eq, value = arg.partition("=")
        if flag and not arg.startswith("-"):
            if _flag_secret(flag, arg):
                out.append(arg)  # --api-key VALUE, -p VALUE
        elif eq and value and _is_secret(name, value):
            out.append(value)  # --token=V, API_KEY=V (env prefixes, docker -e KEY=V)
        elif not arg.startswith("-") and ":" in arg and _is_secret_name(arg.split(":", 1)[0]):
            header = arg.split(":", 1)[1].strip()  # "Authorization: Bearer X" as an argument
            out += [header, *header_secrets(header)]
        elif not arg.startswith("-") and looks_like_credential(value if eq else arg):
            out.append(value if eq else arg)
        out += url_secrets(arg)
        secret_flag = arg == "-p" or (arg.startswith("--") and _is_secret_name(arg))
        flag = arg if secret_flag and not eq else ""
    return out


def _flag_secret(flag: str, value: str) -> bool:
    if flag == "-p":
        return not _port(value)  # -p 8080 names a port
    return _is_secret(flag, value)  # --pin latest names a release


def _port(value: str) -> bool:
    return value.isdigit() and len(value) <= 5


_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://([^/?#@\s:]*)(?::([^/?#@\s]*))?@")
_QUERY = re.compile(r"[?&;]([^=&#;\s]+)=([^&#;\s]*)")


def url_secrets(text: str) -> list[str]:
    """Secrets inside the URLs of ``text``: the userinfo password (or a userinfo-only token), and
    the values of credential-looking query parameters (``?access_token=``, ``?password=``,
    ``?sig=``); with the Basic header a client derives from the userinfo."""
    out: list[str] = []
    for match in _USERINFO.finditer(text):
        user, password = match.group(1), match.group(2)
        if password:
            out += [password, _basic(unquote(user), unquote(password))]
        elif user:  # https://TOKEN@host: the token is the username
            out += [user, _basic(unquote(user), "")]
    if "://" in text:
        for name, value in _QUERY.findall(text):
            if value and _is_secret(unquote_plus(name), unquote_plus(value)):
                out.append(value)
    return out


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def header_secrets(value: str) -> list[str]:
    """A header value's token after its scheme (``Bearer X``), and a Basic token's decoded
    ``user:password`` and password."""
    parts = value.split(None, 1)
    if len(parts) != 2:
        return []
    scheme, token = parts[0], parts[1].strip()
    out = [token]
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(token, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return out
        out += [decoded, decoded.partition(":")[2]]
    return out


INHERITED_MIN = 8  # an inherited value shorter than this is not masked (XDG_SESSION_TYPE=x11)


# ``--env`` values that are settings, never credentials (a log level, an environment's name, a
# switch, a stream, a port): shown as given under a name that is not a credential's. Masked,
# ``--env READ_ONLY=true`` turned every ``readOnlyHint: true`` into ``***`` and ``LOG_LEVEL=info``
# every "information" a server wrote.
SETTING_WORDS = frozenset(
    {"true", "false", "yes", "no", "on", "off", "null", "none", "enabled", "disabled"}
    | {"trace", "debug", "info", "notice", "warn", "warning", "error", "critical", "fatal"}
    | {"silent", "quiet", "verbose", "development", "dev", "production", "prod", "test"}
    | {"testing", "staging", "local", "stdout", "stderr", "stdio", "http", "https", "sse", "json"}
)
_SMALL_NUMBER = re.compile(r"\d{1,5}")


def env_secrets(env: Mapping[str, str]) -> list[str]:
    """The secret ``--env`` values: every value under a credential's name (but a version under
    one of its short words, see ``_is_secret``), and any other but a setting or a release
    (``SETTING_WORDS`` in any case, a number of up to five digits, ``is_version``)."""
    return [
        value
        for key, value in env.items()
        if (_is_secret(key, value) if _is_secret_name(key) else not _is_setting(value))
    ]


def _is_setting(value: str) -> bool:
    return (
        value.lower() in SETTING_WORDS or bool(_SMALL_NUMBER.fullmatch(value)) or is_version(value)
    )


# The shell's working directories: "PWD" reads as a password's name, but its value is a path.
_NOT_SECRET_VARIABLES = frozenset({"PWD", "OLDPWD"})


def inherited_secrets(environ: Mapping[str, str]) -> list[str]:
    """The secrets of an environment a server inherits whole (``--inherit-env``): the values of
    secret-looking variables (``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``) and passwords in any
    value's URL (``DATABASE_URL``)."""
    out: list[str] = []
    for key, value in environ.items():
        if key in _NOT_SECRET_VARIABLES:
            continue
        if _is_secret(key, value) and len(value) >= INHERITED_MIN:
            out.append(value)
        out += url_secrets(value)
    return out


MIN_SECRET = 4  # shorter values would mask ordinary words and numbers everywhere


def with_encodings(values: Sequence[str]) -> list[str]:
    """``values`` and their URL-encoded forms (how a client puts them in a URL or a form),
    each at least ``MIN_SECRET`` characters, longest first. A value that is not UTF-8 (its
    bytes kept as lone surrogates, as Python reads ``--env X=$'\\xff'``) is encoded as those
    bytes, as a transport sends them."""
    out: set[str] = set()
    raw = "surrogateescape"
    for value in values:
        encoded = (quote(value, safe="", errors=raw), quote_plus(value, errors=raw))
        for form in (value, unquote(value), *encoded, quote(value, errors=raw)):
            if len(form) >= MIN_SECRET:
                out.add(form)
    return sorted(out, key=len, reverse=True)


def mask_url(url: str) -> str:
    """A URL with its userinfo password and credential-looking query values masked."""
    return redact(url, with_encodings(url_secrets(url)))
