"""The server's name in a client config (the key in mcp__KEY__tool), not serverInfo.name."""

from __future__ import annotations

from mcp_matrix.targets.server_key import server_key, slug
from mcp_matrix.targets.snapshot import Snapshot


def test_the_default_is_the_last_segment_of_serverinfo_name():
    key = server_key({"kind": "stdio", "command": ["npx", "x"]}, {"name": "mcp-servers/everything"})
    assert (key.name, key.source, key.assumed) == ("everything", "serverInfo.name", True)
    assert "assumed 'everything'" in key.sentence() and "--name" in key.sentence()


def test_without_serverinfo_the_command_basename_skipping_launchers_and_options():
    assert server_key(
        {"command": ["npx", "-y", "@modelcontextprotocol/server-everything"]}, None
    ).name == ("server-everything")
    assert server_key({"command": ["/usr/bin/python3", "-m", "my_server"]}, {}).name == "my_server"
    assert (
        server_key({"command": ["/opt/bin/mcp-server-time.exe"]}, {"name": ""}).name
        == "mcp-server-time"
    )


def test_without_serverinfo_a_launcher_command_is_named_by_its_package_not_its_version():
    named = {
        "uvx mcp-server-time@2026.10.19": "mcp-server-time",
        "uvx mcp-server-time[cli]@1.0 --local-timezone UTC": "mcp-server-time",
        "uv tool run --python 3.12 mcp-server-fetch": "mcp-server-fetch",
        "npx -y @scope/pkg@1.2": "pkg",
        "npx pkg@^1.0.0 --port 3": "pkg",
        "npm exec -y -- server-memory@latest": "server-memory",
        "uv --directory /srv/weather run weather.py": "weather",
    }
    for command, name in named.items():
        assert server_key({"command": command.split()}, None).name == name, command


def test_a_name_given_with_name_is_used_as_is_even_one_a_client_rejects():
    key = server_key({"name": "my server/x"}, {"name": "mcp-servers/everything"})
    assert (key.name, key.assumed) == ("my server/x", False)


def test_a_slug_has_only_the_characters_a_user_would_type():
    assert slug("Acme Corp: Tools!") == "Tools"
    assert slug("weird name") == "weird-name"
    assert slug("///") == ""


def test_a_snapshot_names_its_server_by_the_config_key():
    snap = Snapshot(
        {"target": {"kind": "stdio", "command": ["x"]}, "serverInfo": {"name": "org/thing"}}
    )
    assert snap.server_name == "thing"
    assert (
        Snapshot({"target": {"kind": "server", "server": "memory --schema anyof"}}).server_name
        == "memory"
    )
