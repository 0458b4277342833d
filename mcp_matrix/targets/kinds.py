"""Targets: what to connect to (a stdio command, a Streamable HTTP URL, a legacy HTTP+SSE URL,
or a bundled server).

A target turns into a connected transport; ``describe()`` is what reports show of it, with
secrets masked (header values, env values, and values of secret-looking arguments).

Each kind is one ``TargetKind`` in ``KINDS``: how it is named (``--NAME`` on the CLI,
``--mcp-NAME`` in the pytest plugin, ``NAME:VALUE`` as a ``diff`` side), parsed and checked,
which transport opens it, and how every report shows it (``describe_line``). The CLI, ``diff``,
``mcp_matrix.api.target``, the plugin and the writers read the registry, so a new kind is one
entry here and its transport. A URL and headers are checked in ``targets.inputs``; the server's
config key a report names is ``targets.server_key``'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.credentials import (
    argv_secrets,
    env_secrets,
    header_secrets,
    inherited_secrets,
    url_secrets,
    with_encodings,
)
from mcp_matrix.core.errors import InputError, did_you_mean
from mcp_matrix.core.text import MASK, redact, redact_json
from mcp_matrix.targets.inputs import check_url
from mcp_matrix.targets.launcher import (
    LauncherTransport,
    forget_resolutions,
    launcher_starts,
    refused_starts,
)
from mcp_matrix.targets.npx_command import npx_launcher, npx_refused
from mcp_matrix.targets.uvx_command import uv_refused, uvx_launcher
from mcp_matrix.targets.warm_start import (
    bundled_fork,
    module_argv,
    opted_out,
    server_command,
    starts,
    stop_user_templates,
    user_fork,
)
from mcp_matrix.wire.process import forget_starts
from mcp_matrix.wire.stdio import StdioTransport, server_environment
from mcp_matrix.wire.transport import Transport

# Bundled reference servers (installed as the package ``matrix_servers``).
BUNDLED: dict[str, tuple[str, ...]] = {
    "memory": ("matrix_servers.memory",),
    "memory-anyof": ("matrix_servers.memory", "--schema", "anyof"),
    "faulty": ("matrix_servers.faulty",),
    "gateway": ("matrix_servers.gateway",),
    "billing": ("matrix_servers.billing",),
    "strict": ("matrix_servers.strict",),
}


@dataclass(frozen=True)
class Target:
    kind: str  # a key of KINDS: "stdio" | "http" | "sse" | "server"
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
    cold_start: bool = False  # every server process as its command says, none forked warm

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
        """A Streamable HTTP endpoint."""
        check_url(url, kw.get("headers") or {}, "--http")
        return cls("http", url=url, **kw)

    @classmethod
    def sse(cls, url: str, **kw) -> Target:
        """A server on the legacy HTTP+SSE transport (2024-11-05): ``url`` is its GET stream;
        checked as an HTTP target is (the same URL and header rules)."""
        check_url(url, kw.get("headers") or {}, "--sse")
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
        return KINDS[self.kind].default_name(self)

    def _module_and_args(self) -> tuple[str, ...]:
        name, *args = shlex.split(self.server)
        return (*BUNDLED[name], *args)

    def server_argv(self) -> list[str]:
        """The bundled server's own command (``python -P -m MODULE ARGS``), as a user would type
        it: it never imports from the current directory (``warm_start.module_argv``)."""
        return module_argv(self._module_and_args())

    def launch_argv(self) -> list[str]:
        """``server_argv``, started from the warm template when it can be (``mcp_matrix.targets.warm_start``)
        and ``--cold-start`` was not given."""
        if self.cold_start:
            return self.server_argv()
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
        try:  # a Ctrl-C held since start-up stops the command here (probes race: pop is atomic)
            action = _BEFORE_CONNECTING.pop()
        except IndexError:
            pass
        else:
            action()
        return KINDS[self.kind].transport(self, connect_timeout)

    def describe(self) -> dict:
        """The target as reports show it: secrets masked (header and env values always; in the
        command and the URL, every value ``secrets()`` finds)."""
        secrets = self.secrets()
        kind = KINDS[self.kind]
        d: dict = {"kind": self.kind, **kind.describe(self, secrets)}
        if self.env:
            d["env"] = {k: MASK for k in self.env}
        if self.cwd:
            d["cwd"] = redact(self.cwd, secrets)
        if kind.command:
            d["inherit_env"] = self.inherit_env
        if self.name:
            d["name"] = redact(self.name, secrets)
        return d

    def secrets(self) -> list[str]:
        """Every secret value this target carries, in every form a server can echo it in (raw,
        URL-encoded, inside an HTTP Basic header), longest first: what every output masks.

        They are the values of ``--env`` (but a setting under a name that is not a credential's:
        ``credentials.env_secrets``) and ``--header`` (and a header's token after its
        scheme, decoded when Basic), URL userinfo and credential-looking query parameters (in
        the URL and in any argument or env value), secret-looking flags' values (``--api-key V``,
        ``--key=V``, ``-p V``), ``K=V`` arguments with a secret-looking ``K`` (``env API_KEY=V
        cmd``), credential-looking positional tokens (``sk-...``, ``ghp_...``, long random
        strings), and with ``--inherit-env`` the values of this environment's secret-looking
        variables."""
        values: list[str] = [*env_secrets(self.env), *self.headers.values()]
        for value in self.headers.values():
            values += header_secrets(value)
        argv = self.command or (tuple(shlex.split(self.server)) if self.server else ())
        values += argv_secrets(argv)
        for text in (self.url, *self.env.values()):
            values += url_secrets(text)
        if self.inherit_env and KINDS[self.kind].command:
            values += inherited_secrets(os.environ)
        return with_encodings(values)


# -- the kinds of target ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetOptions:
    """The options given around a target's value; each kind takes those that apply to it."""

    headers: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    inherit_env: bool = False
    name: str = ""
    server_transport: str = "stdio"
    cold_start: bool = False


def _no_name(target: Target) -> str:
    return ""


@dataclass(frozen=True)
class TargetKind:
    """One kind of target as every front end knows it.

    ``build`` parses and checks the value (``--NAME VALUE``, ``--mcp-NAME VALUE`` or the diff
    side ``NAME:VALUE``; a bare value matching ``bare`` too), ``transport`` makes the transport
    that opens it (not yet started), ``describe`` is its part of ``Target.describe`` (secrets
    masked) and ``line`` the one line every report prints of such a description."""

    name: str
    metavar: str
    help: str
    what: str  # "this stdio server": the pytest plugin's help says "run the matrix against ..."
    side_help: str  # how a diff side names it
    build: Callable[[Any, TargetOptions], Target]  # the value: a str (a stdio command: a list too)
    transport: Callable[[Target, float], Transport]
    describe: Callable[[Target, Sequence[str]], dict]
    line: Callable[[Mapping], str]
    prefix: bool = True  # a diff side may name it NAME:VALUE
    bare: str = ""  # a diff side matching this is this kind as it stands (an http:// URL)
    command: bool = False  # a command we start: env, cwd and --inherit-env apply
    default_name: Callable[[Target], str] = _no_name  # its config key when --name is not given

    @property
    def option(self) -> str:
        return f"--{self.name}"

    @property
    def plugin_option(self) -> str:
        return f"--mcp-{self.name}"

    def side_value(self, arg: str) -> str | None:
        """The value a diff side gives this kind, or None when the side names another."""
        if self.bare and re.match(self.bare, arg):
            return arg
        if self.prefix and arg.startswith(self.name + ":"):
            return arg[len(self.name) + 1 :].strip()
        return None


def _stdio_transport(target: Target, connect_timeout: float) -> Transport:
    """The command, forked from a warm template of it when it is a Python program that can be
    (``warm_start.user_fork``), or the process a launcher (``npx``, ``npm exec``, ``uvx``)
    started in the run's first session (``launcher``), with the environment and directory the
    command gets either way."""
    env = server_environment(target.env, target.inherit_env)
    launcher = (
        None
        if target.cold_start or opted_out()
        else npx_launcher(target.command) or uvx_launcher(target.command)
    )
    if launcher is not None:
        return LauncherTransport(target.command, launcher, env, target.cwd, connect_timeout)
    fork = (
        None if target.cold_start else user_fork(target.command, env, target.cwd, connect_timeout)
    )
    return StdioTransport(target.command, env=env, cwd=target.cwd, fork=fork)


_runs = 0  # runs going on in this process (the API may run several at once)
_runs_lock = threading.Lock()


@contextlib.contextmanager
def run_servers() -> Iterator[None]:
    """One run's server processes: when the last run going on in this process ends, the user's
    warm templates and launcher resolutions end with it, and ``--verbose``'s counts start again.
    A caller of the API (or the pytest plugin) that edits its server between two runs gets the
    code as edited, not the template the first run imported; the next run starts them anew."""
    global _runs
    with _runs_lock:
        _runs += 1
    try:
        yield
    finally:
        with _runs_lock:
            _runs -= 1
            last = _runs == 0
        if last:
            forget_resolutions()
            forget_starts()
            # the run has ended (its results too): a Ctrl-C now stops only the templates' ends;
            # a template not ended yet ends with this process (atexit) or its lifeline
            with contextlib.suppress(KeyboardInterrupt):
                stop_user_templates()


def server_starts(target: Target) -> str:
    """How a stdio target's server processes were started in this process, its command masked
    (``warm_start.starts``): what ``--verbose`` says."""
    secrets = target.secrets()

    def shown(argv: Sequence[str]) -> str:
        # each argument masked before quoting: shlex.join would split a secret holding a quote
        return shlex.join(redact(arg, secrets) for arg in argv)

    if target.cold_start:
        return starts(target.command, shown(target.command), cold_start=True)
    refused = npx_refused(target.command) or uv_refused(target.command)
    if refused:
        return refused_starts(target.command, refused, shown)
    resolved = launcher_starts(target.command, shown)
    return resolved or starts(target.command, shown(target.command))


def _http_transport(target: Target, connect_timeout: float) -> Transport:
    from mcp_matrix.wire.http import HttpTransport  # httpx, for HTTP targets only

    return HttpTransport(target.url, headers=target.headers)


def _sse_transport(target: Target, connect_timeout: float) -> Transport:
    from mcp_matrix.wire.sse import SseTransport

    return SseTransport(target.url, headers=target.headers, connect_timeout=connect_timeout)


def _bundled_transport(target: Target, connect_timeout: float) -> Transport:
    if target.server_transport in ("http", "sse"):
        from mcp_matrix.targets.bundled_http import bundled_http_server

        return bundled_http_server(target.launch_argv(), target.server_transport, connect_timeout)
    fork = None if target.cold_start else bundled_fork(target._module_and_args())
    return StdioTransport(target.server_argv(), env=target.env, inherit_env=True, fork=fork)


def _url_part(target: Target, secrets: Sequence[str]) -> dict:
    return {"url": redact(target.url, secrets), "headers": {k: MASK for k in target.headers}}


def _url_line(kind: str) -> Callable[[Mapping], str]:
    return lambda d: f"{kind}: {d.get('url') or ''}"


def _command_line(d: Mapping) -> str:
    command = d.get("command")
    return "stdio: " + (
        " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
    )


def _bundled_line(d: Mapping) -> str:
    return f"bundled server {d.get('server') or ''} ({d.get('transport') or 'stdio'})"


def _url_kind(name: str, **kw: Any) -> TargetKind:
    """A kind whose value is a URL with headers (``http``, ``sse``): checked, described and
    printed alike; ``Target.NAME`` builds it."""
    build = getattr(Target, name)
    return TargetKind(
        name=name,
        metavar="URL",
        build=lambda v, o: build(v, headers=o.headers, name=o.name),
        describe=_url_part,
        line=_url_line(name),
        **kw,
    )


BUNDLED_TRANSPORTS = ("stdio", "http", "sse")  # how a bundled server may be run


KINDS: dict[str, TargetKind] = {
    k.name: k
    for k in (
        TargetKind(
            name="stdio",
            what="this stdio server",
            metavar="CMD",
            help='spawn a stdio server, e.g. --stdio "npx my-server --flag"',
            side_help="stdio:CMD",
            build=lambda v, o: Target.stdio(
                v,
                env=o.env,
                cwd=o.cwd,
                inherit_env=o.inherit_env,
                name=o.name,
                cold_start=o.cold_start,
            ),
            transport=_stdio_transport,
            describe=lambda t, secrets: {"command": [redact(a, secrets) for a in t.command]},
            line=_command_line,
            command=True,
        ),
        _url_kind(
            "http",
            what="this Streamable HTTP server",
            help="a Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp",
            side_help="an http(s):// URL (Streamable HTTP)",
            transport=_http_transport,
            prefix=False,
            bare=r"^https?://",
        ),
        _url_kind(
            "sse",
            what="this legacy HTTP+SSE server",
            help="a legacy HTTP+SSE server (protocol 2024-11-05), e.g. http://127.0.0.1:8000/sse",
            side_help="sse:URL (legacy HTTP+SSE)",
            transport=_sse_transport,
        ),
        TargetKind(
            name="server",
            what="a bundled reference server",
            metavar="NAME",
            help='a bundled reference server, e.g. memory or "memory --schema anyof"',
            side_help="server:NAME [ARGS] (bundled)",
            build=lambda v, o: Target.bundled(
                v, transport=o.server_transport, env=o.env, name=o.name, cold_start=o.cold_start
            ),
            transport=_bundled_transport,
            describe=lambda t, secrets: {
                "server": redact(t.server, secrets),
                "transport": t.server_transport,
            },
            line=_bundled_line,
            default_name=lambda t: shlex.split(t.server)[0],
        ),
    )
}


def describe_line(described: object) -> str:
    """One line for a target as ``Target.describe`` recorded it (masked): what every report
    prints. A description from an older results file without a kind is read by its keys."""
    if not isinstance(described, Mapping):
        return "" if described is None else str(described)
    kind = KINDS.get(str(described.get("kind") or ""))
    if kind is None:
        kind = KINDS["http"] if described.get("url") else KINDS["server"]
        if not described.get("url") and not described.get("server"):
            return json.dumps(dict(described), ensure_ascii=False, default=str)
    return kind.line(described)


_BEFORE_CONNECTING: list[Callable[[], None]] = []


def before_connecting(action: Callable[[], None] | None) -> None:
    """Run ``action`` once, when the next transport is made (None: forget the one set): the CLI
    delivers a Ctrl-C pressed while it started there, inside a run's interrupt handling (so its
    results still end with ``run-finished``), not before the run has begun."""
    _BEFORE_CONNECTING[:] = [action] if action is not None else []


def scrub_json(text: str, secrets: Sequence[str], keys: Collection[str] = ()) -> str:
    """JSON text with every secret masked inside its strings but ``keys`` as keys
    (``mcp_matrix.core.text.redact_json``)."""
    return redact_json(text, secrets, keys)
