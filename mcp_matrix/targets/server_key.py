"""The server's config key: the name the user's client config gives the server, which real clients
put in prefixed tool names (``mcp__NAME__tool``); ``--name`` when given, else a guess a report
says is one."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcp_matrix.core.text import MASK

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


def launched(command: Sequence[str]) -> str | None:
    """The package (or script) a launcher command runs, without its version or extras
    (``uvx mcp-server-time@2026.10.19`` -> ``mcp-server-time``, ``npx -y @scope/pkg@1.2`` ->
    ``@scope/pkg``), or None when ``command`` is not a launcher form ``targets.launcher`` knows:
    split on ``@`` as a path, the version would be the server's name."""
    from mcp_matrix.targets.npx_command import npx_args  # only a server that never answered
    from mcp_matrix.targets.uvx_command import uv_run_command, uvx_command

    found = uvx_command(command) or uv_run_command(command)
    if found is not None:
        return found[0]
    args = npx_args(command)
    if args is None:
        return None
    package = command[len(command) - len(args) - 1]
    return re.sub(r"(?<=.)@[^/@]*$", "", package)  # npm's PKG@VERSION (a scope keeps its @)


def server_key(target: Mapping | None, server_info: object) -> ServerKey:
    """The server's config key: ``--name`` when given, else a slug a user would type: the bundled
    server's name, the last segment of ``serverInfo.name``, the package a launcher runs, or the
    command's basename."""
    target = target if isinstance(target, Mapping) else {}
    if target.get("name"):
        return ServerKey(str(target["name"]), "--name", assumed=False)
    if target.get("server"):
        return ServerKey(str(target["server"]).split()[0], "bundled")
    name = server_info.get("name") if isinstance(server_info, Mapping) else None
    if isinstance(name, str) and slug(name):
        return ServerKey(slug(name), "serverInfo.name")
    command = target.get("command")
    if isinstance(command, (list, tuple)) and all(isinstance(a, str) for a in command):
        package = launched(command)
        if package and package != MASK and slug(package):
            return ServerKey(slug(package), "command")
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
