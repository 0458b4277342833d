"""The one terminal sanitiser, through the real CLI: a hostile server's names, server info and
stderr reach no command's terminal output raw, piped or on a (forced) colour terminal."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from mcp_matrix.core.text import markup, safe, terminal_console
from tests.conftest import NEUTRAL_CWD
from tests.hostile.conftest import tiny_server

# Each one acts on a terminal when printed raw (or crashes rich): CSI screen clear, OSC 8 link,
# OSC 52 clipboard write, OSC 0 window title, BEL, a C1 CSI, a bidi override, rich markup.
HOSTILE = {
    "clear": "a\x1b[2Jclear",
    "link": "\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07",
    "clipboard": "x\x1b]52;c;cm0gLXJmIH4=\x07y",
    "title": "\x1b]0;pwned\x07t",
    "bell": "bell\x07",
    "c1": "c1\x9b31m",
    "bidi": "txt\u202eexe.sh",
    "markup": "close[/bold]tag",
    "link-markup": "[link=http://evil.example/]x[/link]",
    "newline": "new\nline",
}
# What must never appear in output: the raw attacks (rich's own colour codes are plain CSI ... m).
RAW = ("\x1b[2J", "\x1b]", "\x07", "\x9b", "\u202e")


def tools() -> list[dict]:
    return [
        {
            "name": name,
            "description": f"{name} says {name}",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            "annotations": {"readOnlyHint": True},
        }
        for name in HOSTILE.values()
    ]


def mcp(*args: str, colour: bool = False, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("FORCE_COLOR", None)
    env.pop("NO_COLOR", None)
    if colour:  # rich treats both streams as a colour terminal: styles, the progress line
        env["FORCE_COLOR"] = "1"
        env["COLUMNS"] = "120"
    return subprocess.run(
        [sys.executable, "-m", "mcp_matrix", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=NEUTRAL_CWD,
        env=env,
    )


def assert_clean(r: subprocess.CompletedProcess) -> None:
    for stream in (r.stdout, r.stderr):
        assert "Traceback" not in stream and "MarkupError" not in stream, stream[-2000:]
        for raw in RAW:
            assert raw not in stream, (raw, stream[-2000:])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A snapshot, a results file and the stdio command of a server with hostile names
    everywhere: tool names, descriptions, serverInfo.version and its stderr."""
    d = tmp_path_factory.mktemp("hostile")
    leak = HOSTILE["link"] + HOSTILE["markup"] + HOSTILE["title"]
    cmd = tiny_server(d, {"tools": tools(), "leak": leak})
    snap = d / "snap.json"
    r = mcp("snapshot", "--stdio", cmd, "-o", str(snap))
    assert r.returncode == 0, r.stderr
    assert_clean(r)
    results = d / "r.jsonl"
    r = mcp(
        "run",
        "--stdio",
        cmd,
        "--client",
        "claude-code",
        "--client",
        "cursor",
        "--results",
        str(results),
        "--fail-on",
        "none",
        colour=True,
    )
    return {"dir": d, "cmd": cmd, "snap": snap, "results": results, "run": r}


def test_the_sanitiser_shows_every_control_character_as_a_visible_escape():
    assert safe("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert safe("new\nline") == "new\\nline"
    assert safe("one\r\n  two", fold=True) == "one two"
    assert safe("c1\x9b") == "c1\\x9b" and safe("\u202e") == "\\u202e"
    assert safe("plain text [ok]") == "plain text [ok]"


def test_markup_in_a_name_is_printed_as_text_not_parsed():
    console = terminal_console(width=80, record=True, file=io.StringIO())
    trailing = markup("ends in \\")
    console.print(
        f"[bold]{markup(HOSTILE['markup'])}[/] {markup(HOSTILE['link-markup'])} [dim]{trailing}[/]"
    )
    assert (
        console.export_text().strip()
        == "close[/bold]tag [link=http://evil.example/]x[/link] ends in \\"
    )


def test_a_piped_console_is_not_cut_to_80_columns():
    console = terminal_console(file=io.StringIO())
    assert not console.is_terminal and console.width > 1000


@pytest.mark.parametrize("colour", [False, True], ids=["piped", "colour-terminal"])
def test_run_with_its_progress_line_prints_hostile_names_as_escapes(hostile, colour):
    r = (
        hostile["run"]
        if colour
        else mcp("run", "--stdio", hostile["cmd"], "--client", "claude-code", "--fail-on", "none")
    )
    assert_clean(r)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "close[/bold]tag" in r.stdout  # shown, not swallowed
    assert "\\x1b]0;pwned\\x07t" in r.stdout


@pytest.mark.parametrize("colour", [False, True], ids=["piped", "colour-terminal"])
@pytest.mark.parametrize("command", ["snapshot", "discover", "report", "check", "diff"])
def test_every_command_prints_hostile_names_as_escapes(hostile, command, colour, tmp_path):
    snap, results = str(hostile["snap"]), str(hostile["results"])
    if command == "snapshot":
        args = ["snapshot", snap]
    elif command == "discover":
        args = ["discover", snap]
    elif command == "report":
        args = ["report", results, "--format", "terminal"]
    elif command == "check":
        policy = tmp_path / "policy.yaml"
        policy.write_text("required_clients: [claude-code]\n")
        args = ["check", results, "--policy", str(policy)]
    else:
        old = json.loads(hostile["snap"].read_text())
        old["tools"] = old["tools"][:3]
        old_path = tmp_path / "old.json"
        old_path.write_text(json.dumps(old))
        args = ["diff", str(old_path), snap]
    r = mcp(*args, colour=colour)
    assert_clean(r)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    out = r.stdout + r.stderr
    assert "close[/bold]tag" in out


def test_profiles_show_prints_a_hostile_profile_note_as_text(tmp_path):
    (tmp_path / "evil.yaml").write_text(
        # YAML escapes (a raw ESC is not valid YAML): the loaded strings hold the raw characters.
        'name: evil\nclient: "Evil \\e]0;t\\a [/bold]"\nversions: "1"\nextends: [claude-code]\n'
        'models: "models \\e[2J this [red]x[/red]"\n',
        encoding="utf-8",
    )
    for args in (
        ["profiles", "--profiles-dir", str(tmp_path)],
        ["profiles", "show", "evil", "--profiles-dir", str(tmp_path)],
    ):
        r = mcp(*args, colour=True)
        assert_clean(r)
        if r.returncode == 0:
            assert "evil" in r.stdout
        else:  # the profile loader may refuse control characters: then it says so, as input error
            assert r.returncode == 2 and "evil.yaml" in r.stderr
