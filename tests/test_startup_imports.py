"""A CLI process imports what its command uses, not the whole tool.

The suite starts hundreds of ``python -m mcp_matrix ...`` processes and users start one per command;
each used to import every command, writer and dependency (about a second of CPU) before doing
anything. These tests run the real CLI (``python -m mcp_matrix``, through ``runpy`` so the process can
list ``sys.modules`` when it exits) and assert on the names of the modules it imported, never on
times, so a top-level import that pulls a heavy module back into a cheap command fails here.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

import pytest

from mcp_matrix.commands.cli import COMMANDS, SUMMARIES, build_parser, commands_needed
from tests.conftest import NEUTRAL_CWD
from tests.report import events as ev
from tests.servers.conftest import RAW_HANDSHAKE

# What only some commands need: HTML (jinja2), JUnit (xml), an HTTP target (httpx), evolution
# (diff, replay, check) and calibration; the heaviest of the tool's own modules.
ONLY_SOME = (
    "jinja2",
    "xml.etree.ElementTree",
    "httpx",
    "mcp_matrix.evolution",
    "mcp_matrix.calibrate",
    "mcp_matrix.gate.release",
    "mcp_matrix.report.html",
    "mcp_matrix.report.junit",
    "mcp_matrix.report.sarif",
)
# What any command that reads profiles or a live server needs, and --version never does.
LIBRARY = (
    "rich",
    "yaml",
    "jsonschema",
    "fastjsonschema",
    "regex",
    "mcp_matrix.api",
    "mcp_matrix.run.matrix",
    "mcp_matrix.targets.snapshot",
    "mcp_matrix.profiles.loader",
    "mcp_matrix.behaviours.registry",
    "mcp_matrix.report.terminal",
)


# ``python -m mcp_matrix ARGV``, and at exit the names in sys.modules as the last line of stderr
# (``-X importtime`` would miss the command modules: importlib.import_module is not timed).
LIST_MODULES = """
import atexit, json, runpy, sys
atexit.register(lambda: sys.__stderr__.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n"))
runpy.run_module("mcp_matrix", run_name="__main__", alter_sys=True)
"""


def imported(*argv: str) -> set[str]:
    """Every module ``python -m mcp_matrix ARGV`` imported by the time it exited (exit code 0)."""
    proc = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NEUTRAL_CWD,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set(json.loads(proc.stderr.rstrip().rsplit("\n", 1)[-1]))
    assert "mcp_matrix.commands.cli" in names  # the list was read: the CLI itself is in it
    return names


def among(names: set[str], wanted: tuple[str, ...]) -> list[str]:
    """The ``wanted`` modules (or packages: a submodule counts) that are in ``names``."""
    return sorted(w for w in wanted if any(n == w or n.startswith(w + ".") for n in names))


def test_version_imports_no_command_and_no_dependency():
    names = imported("--version")
    assert among(names, ONLY_SOME + LIBRARY) == []
    assert among(names, tuple(f"mcp_matrix.commands.{c}" for c in COMMANDS)) == []


def test_a_command_imports_its_own_module_and_no_other_command():
    names = imported("merge", "--help")
    others = tuple(f"mcp_matrix.commands.{c}" for c in COMMANDS if c != "merge")
    assert "mcp_matrix.commands.merge" in names
    assert among(names, others) == []


def test_help_imports_no_command_and_no_dependency():
    # the overview prints each command's name and one-line help (SUMMARIES), never its flags
    names = imported("--help")
    assert among(names, tuple(f"mcp_matrix.commands.{c}" for c in COMMANDS)) == []
    assert among(names, ONLY_SOME + LIBRARY) == []


def test_help_still_names_every_command_with_its_own_help_line():
    # the overview's lines are the table in mcp_matrix.commands.cli; each command's module registers the same
    overview = subprocess.run(
        [sys.executable, "-m", "mcp_matrix", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NEUTRAL_CWD,
        stdin=subprocess.DEVNULL,
    )
    assert overview.returncode == 0, overview.stderr[-2000:]
    flat = " ".join(overview.stdout.split())
    full = build_parser(None)  # every command registered by its own module
    helps = {a.dest: a.help for a in full._subparsers._group_actions[0]._choices_actions}
    assert helps == SUMMARIES
    for name in COMMANDS:
        assert f"{name} {' '.join(SUMMARIES[name].split())}" in flat


def test_a_command_help_after_h_or_an_unknown_option_registers_that_command():
    assert commands_needed(["-h", "run"]) == ("run",)
    assert commands_needed(["--bogus", "snapshot", "-o", "x"]) == ("snapshot",)
    assert (
        commands_needed(["--help"]) == commands_needed([]) == commands_needed(["--version"]) == ()
    )


@pytest.mark.parametrize("command", ["run", "snapshot", "discover", "report", "profiles"])
def test_a_common_command_imports_no_writer_evolution_calibration_or_httpx(command):
    assert among(imported(command, "--help"), ONLY_SOME) == []


def test_listing_the_profiles_imports_no_run_writer_or_httpx():
    names = imported("profiles", "--json")
    assert "mcp_matrix.profiles.loader" in names
    assert (
        among(
            names,
            ONLY_SOME[:3] + ("mcp_matrix.api", "mcp_matrix.run.matrix", "mcp_matrix.report.html"),
        )
        == []
    )


@pytest.mark.parametrize(
    ("fmt", "needs", "not_needed"),
    [
        (
            "md",
            "mcp_matrix.report.markdown",
            ("jinja2", "xml.etree.ElementTree", "mcp_matrix.report.html"),
        ),
        ("html", "jinja2", ("xml.etree.ElementTree", "mcp_matrix.report.markdown")),
        ("junit", "xml.etree.ElementTree", ("jinja2", "mcp_matrix.report.html")),
    ],
)
def test_a_report_imports_the_writer_of_its_format_only(tmp_path, fmt, needs, not_needed):
    results = ev.write_jsonl(ev.full_run(), tmp_path / "results.jsonl")
    names = imported("report", str(results), "--format", fmt, "-o", str(tmp_path / "out"))
    assert needs in names
    assert (
        among(names, not_needed + ("httpx", "mcp_matrix.run.matrix", "mcp_matrix.evolution")) == []
    )


# The memory server run by its own ``main`` (as ``python -m matrix_servers.memory`` runs it),
# then the names in its sys.modules written to the file given first.
SERVER_MODULES = """
import json, sys
from matrix_servers.memory.__main__ import main
main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(sorted(sys.modules), out)
"""


def serve(tmp_path, requests: list[dict]) -> tuple[dict[int, dict], set[str]]:
    """The memory server's answers by id to the handshake and ``requests`` (stdin closed once
    each is answered, as a client ends), and the modules it had imported when it ended."""
    modules = tmp_path / "modules.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_MODULES, str(modules), "--db", str(tmp_path / "m.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=NEUTRAL_CWD,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        for message in [*RAW_HANDSHAKE, *requests]:
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        answers = [json.loads(lines.get(timeout=120)) for _ in range(1 + len(requests))]
        proc.stdin.close()
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return {a["id"]: a for a in answers}, set(json.loads(modules.read_text(encoding="utf-8")))


def test_a_server_session_that_only_lists_tools_never_imports_jsonschema(tmp_path):
    answers, names = serve(tmp_path, [{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    assert sorted(answers) == [1, 2] and answers[2]["result"]["tools"]
    assert "mcp_types" in names  # the SDK itself is imported: the list is the server's
    assert among(names, ("jsonschema",)) == []


def test_a_tools_call_imports_jsonschema_and_its_arguments_are_still_validated(tmp_path):
    call = {"name": "memory_stats", "arguments": {"agent": "x"}}  # it takes no arguments
    answers, names = serve(
        tmp_path, [{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}]
    )
    result = answers[2]["result"]
    assert result["isError"] is True
    assert "Invalid arguments for memory_stats" in result["content"][0]["text"]
    assert "jsonschema" in names
