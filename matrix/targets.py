"""Targets: what to connect to (a stdio command, a Streamable HTTP URL, a legacy HTTP+SSE URL,
or a bundled server).

A target turns into a connected transport; ``describe()`` is what reports show of it, with
secrets masked (header values, env values, and values of secret-looking arguments).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from matrix.errors import InputError, did_you_mean
from matrix.warm_start import server_command
from matrix.wire.stdio import StdioTransport
from matrix.wire.transport import Transport

MASK = "***"
SECRET_WORDS = re.compile(r"(?i)(token|secret|passw|api[-_]?key|auth|credential|bearer|session)")

# Bundled reference servers (installed as the package ``matrix_servers``).
BUNDLED: dict[str, tuple[str, ...]] = {
    "memory": ("matrix_servers.memory",),
    "memory-anyof": ("matrix_servers.memory", "--schema", "anyof"),
    "faulty": ("matrix_servers.faulty",),
    "gateway": ("matrix_servers.gateway",),
    "billing": ("matrix_servers.billing",),
    "strict": ("matrix_servers.strict",),
}


def register_bundled(name: str, *module_and_args: str) -> None:
    BUNDLED[name] = tuple(module_and_args)


# Launchers whose basename says nothing about the server they start.
_LAUNCHERS = {
    "npx",
    "uvx",
    "pipx",
    "node",
    "deno",
    "bun",
    "bunx",
    "python",
    "python3",
    "uv",
    "docker",
    "env",
    "run",
}


@dataclass(frozen=True)
class ServerKey:
    """The name the user's client config gives the server (``claude mcp add NAME``), which real
    clients put in prefixed tool names (``mcp__NAME__tool``), and how it was chosen: it is the
    user's choice, not ``serverInfo.name``, so every report says when it is an assumption."""

    name: str
    source: str  # "--name", "bundled", "serverInfo.name", "command", "default"
    assumed: bool = True

    def sentence(self) -> str:
        if not self.assumed:
            return f"server name {self.name!r} (given with --name)"
        how = {
            "bundled": "the bundled server's name",
            "serverInfo.name": "the last segment of serverInfo.name",
            "command": "the command's basename",
        }.get(self.source, "no better guess")
        return f"server name assumed {self.name!r} ({how}); pass --name with the key of your client config"

    def to_json(self) -> dict:
        return {"name": self.name, "source": self.source, "assumed": self.assumed}


def slug(text: str) -> str:
    """A config key a user would type for ``text``: its last path segment, with characters outside
    ``[A-Za-z0-9_-]`` turned into ``-`` (``mcp-servers/everything`` -> ``everything``)."""
    last = re.split(r"[/\\:@]", text.strip().rstrip("/\\"))[-1]
    last = re.sub(r"\.(exe|cmd|bat|js|mjs|cjs|py)$", "", last, flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9_-]+", "-", last).strip("-_")[:64]


def server_key(target: Mapping | None, server_info: object) -> ServerKey:
    """The server's config key: ``--name`` when given, else a slug a user would type: the bundled
    server's name, the last segment of ``serverInfo.name``, or the command's basename."""
    target = target if isinstance(target, Mapping) else {}
    if target.get("name"):
        return ServerKey(str(target["name"]), "--name", assumed=False)
    if target.get("server"):
        return ServerKey(str(target["server"]).split()[0], "bundled")
    name = server_info.get("name") if isinstance(server_info, Mapping) else None
    if isinstance(name, str) and slug(name):
        return ServerKey(slug(name), "serverInfo.name")
    command = target.get("command")
    if isinstance(command, (list, tuple)):
        for arg, before in zip(command, ("", *command)):
            if before in ("-c", "-e", "--eval"):  # inline code names nothing
                break
            if not isinstance(arg, str) or arg.startswith("-") or arg == MASK:
                continue
            key = slug(arg)
            if key and key.lower() not in _LAUNCHERS and not re.fullmatch(r"python[0-9.]*", key):
                return ServerKey(key, "command")
    return ServerKey("server", "default")


@dataclass(frozen=True)
class Target:
    kind: str  # "stdio" | "http" | "sse" | "server"
    command: tuple[str, ...] = ()
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    inherit_env: bool = False
    server: str = ""  # bundled name, possibly with extra args ("memory --schema anyof")
    server_transport: str = "stdio"
    name: str = (
        ""  # the name the user's client config gives this server (prefixes like mcp__NAME__tool)
    )

    @classmethod
    def stdio(cls, command: str | list[str], **kw) -> Target:
        try:
            argv = shlex.split(command) if isinstance(command, str) else list(command)
        except ValueError as exc:  # an unbalanced quote
            raise InputError(
                f"cannot split the command {command!r}: {exc}", where="--stdio"
            ) from None
        if not argv or not argv[0].strip():
            raise InputError("--stdio needs a command (it was empty)", where="--stdio")
        return cls("stdio", command=tuple(argv), **kw)

    @classmethod
    def http(cls, url: str, **kw) -> Target:
        if not re.match(r"^https?://", url):
            raise InputError(f"expected an http:// or https:// URL, got {url!r}", where="--http")
        import httpx  # here, not at the top: a stdio target's process never imports it

        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
            raise InputError(f"not a valid URL: {exc}", where="--http") from None
        if not parsed.host:
            raise InputError(f"the URL names no host: {mask_url(url)!r}", where="--http")
        for key, value in (kw.get("headers") or {}).items():
            for part, text in (("name", key), ("value", value)):
                try:
                    text.encode("latin-1")
                except UnicodeEncodeError:
                    raise InputError(
                        f"the header {part} of {key!r} has characters HTTP cannot carry (only Latin-1)",
                        where="--header",
                    ) from None
            if not key or any(c in key for c in " \t\r\n:") or any(c in value for c in "\r\n\0"):
                raise InputError(f"not a valid header: {key!r}", where="--header")
        return cls("http", url=url, **kw)

    @classmethod
    def sse(cls, url: str, **kw) -> Target:
        """A server on the legacy HTTP+SSE transport (2024-11-05): ``url`` is its GET stream."""
        if not re.match(r"^https?://", url):
            raise InputError(f"expected an http:// or https:// URL, got {url!r}", where="--sse")
        return cls("sse", url=url, **kw)

    @classmethod
    def bundled(cls, spec: str, transport: str = "stdio", **kw) -> Target:
        try:
            argv = shlex.split(spec)
        except ValueError as exc:
            raise InputError(f"cannot split {spec!r}: {exc}", where="--server") from None
        if not argv or argv[0] not in BUNDLED:
            name = argv[0] if argv else ""
            raise InputError(
                f"unknown bundled server {name!r}{did_you_mean(name, BUNDLED)}; "
                f"expected one of: {', '.join(sorted(BUNDLED))}",
                where="--server",
            )
        return cls("server", server=spec, server_transport=transport, **kw)

    @property
    def display_name(self) -> str:
        if self.name:
            return self.name
        if self.kind == "server":
            return shlex.split(self.server)[0]
        return ""

    def _module_and_args(self) -> tuple[str, ...]:
        name, *args = shlex.split(self.server)
        return (*BUNDLED[name], *args)

    def server_argv(self) -> list[str]:
        """The bundled server's own command (``python -m MODULE ARGS``), as a user would type it."""
        return [sys.executable, "-m", *self._module_and_args()]

    def launch_argv(self) -> list[str]:
        """``server_argv``, started from the warm template when it can be (``matrix.warm_start``)."""
        return server_command(self._module_and_args())

    def open(self, connect_timeout: float = 30.0) -> Transport:
        """A started transport; raises WireError if the server cannot be started."""
        t = self.transport(connect_timeout)
        try:
            t.start()
        except BaseException:  # a failed start or Ctrl-C: never leave a half-started server running
            t.close()
            raise
        return t

    def transport(self, connect_timeout: float = 30.0) -> Transport:
        """The transport to this target, not yet started: a caller that must end the server
        whatever happens (Ctrl-C included) holds it before ``start()`` runs the server."""
        if self.kind == "stdio":
            t: Transport = StdioTransport(
                self.command, env=self.env, cwd=self.cwd, inherit_env=self.inherit_env
            )
        elif self.kind == "http":
            from matrix.wire.http import HttpTransport  # httpx, for HTTP targets only

            t = HttpTransport(self.url, headers=self.headers)
        elif self.kind == "sse":
            from matrix.wire.sse import SseTransport

            t = SseTransport(self.url, headers=self.headers, connect_timeout=connect_timeout)
        elif self.server_transport in ("http", "sse"):
            from matrix.bundled_http import bundled_http_server

            t = bundled_http_server(self.launch_argv(), self.server_transport, connect_timeout)
        else:
            t = StdioTransport(self.launch_argv(), env=self.env, inherit_env=True)
        return t

    def describe(self) -> dict:
        """The target as reports show it: secrets masked."""
        d: dict = {"kind": self.kind}
        if self.kind == "stdio":
            d["command"] = mask_argv(self.command)
        elif self.kind in ("http", "sse"):
            d["url"] = mask_url(self.url)
            d["headers"] = {k: MASK for k in self.headers}
        else:
            d["server"] = shlex.join(mask_argv(shlex.split(self.server)))
            d["transport"] = self.server_transport
        if self.env:
            d["env"] = {k: MASK for k in self.env}
        if self.cwd:
            d["cwd"] = self.cwd
        if self.kind == "stdio":
            d["inherit_env"] = self.inherit_env
        if self.name:
            d["name"] = self.name
        return d

    def secrets(self) -> list[str]:
        """Every secret value this target carries, so writers can scrub them from any text."""
        values = [v for v in self.headers.values()] + [v for v in self.env.values()]
        values += [
            v.split(None, 1)[1] for v in self.headers.values() if len(v.split(None, 1)) == 2
        ]  # Bearer X
        argv = self.command or (tuple(shlex.split(self.server)) if self.server else ())
        for arg, masked in zip(argv, mask_argv(argv)):
            if arg != masked:
                values.append(arg.split("=", 1)[-1])
        if self.url:  # a password or a token in the URL, as mask_url hides them
            values += re.findall(r"//[^/@:]+:([^/@]+)@", self.url)
            values += re.findall(
                r"(?i)[?&][^=&]*(?:token|key|secret|auth)[^=&]*=([^&#]+)", self.url
            )
        # Longest first, so a secret that contains another is masked whole.
        return sorted({v for v in values if v and len(v) >= 4}, key=len, reverse=True)


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


def parse_pairs(items: Sequence[str], sep: str, flag: str) -> dict[str, str]:
    """``K:V`` headers (values stripped) or ``K=V`` environment entries, from a repeatable flag."""
    out = {}
    for item in items:
        if sep not in item:
            raise InputError(f"expected KEY{sep}VALUE, got {item!r}", where=flag)
        key, value = item.split(sep, 1)
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


def scrub_json(text: str, secrets: Sequence[str]) -> str:
    """JSON text with every secret inside its strings (keys and values) replaced by ``***``.

    Only string tokens are touched, so a secret like ``true`` or ``8080`` (``--env DEBUG=true``)
    never turns a literal or a number into invalid JSON; each string that holds a secret is
    decoded, scrubbed and encoded again, so a secret next to an escape is not cut in half.
    Give longer secrets first (a secret inside another is then masked with it).
    """
    forms = [
        f
        for s in secrets
        if s
        for f in {s, json.dumps(s)[1:-1], json.dumps(s, ensure_ascii=False)[1:-1]}
    ]
    if not any(f in text for f in forms):
        return text  # the usual case: no secret anywhere, no need to look at each string

    def one(match: re.Match) -> str:
        token = match.group(0)
        value = json.loads(token)
        clean = value
        for secret in secrets:
            if secret:
                clean = clean.replace(secret, MASK)
        return token if clean == value else json.dumps(clean, ensure_ascii=False)

    return _JSON_STRING.sub(one, text)


def mask_argv(argv) -> list[str]:
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
        elif arg.startswith("-") and "=" in arg and SECRET_WORDS.search(arg.split("=", 1)[0]):
            out.append(arg.split("=", 1)[0] + "=" + MASK)
        elif arg.startswith("-") and SECRET_WORDS.search(arg):
            out.append(arg)
            mask_next = True
        else:
            out.append(arg)
    return out


def mask_url(url: str) -> str:
    url = re.sub(r"//([^/@:]+):([^/@]+)@", rf"//\1:{MASK}@", url)
    return re.sub(
        r"([?&][^=&]*(?:token|key|secret|auth)[^=&]*=)[^&]+", rf"\1{MASK}", url, flags=re.IGNORECASE
    )
