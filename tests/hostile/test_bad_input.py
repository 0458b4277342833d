"""Bad input: every malformed file or argument is ONE clear error (exit 2) naming the file, the
line or key, and what was expected; never a traceback, and never a server started for nothing.

Most run the CLI's ``main`` in-process (tests/conftest.py ``run_cli_in_process``: the same
exit code and stderr, an escaping exception shows as a traceback); the FIFO and hang cases and
the real run keep a process of their own."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import run_cli, run_cli_in_process

# Refusing bad input is the CLI's own code, run in this process (a new process for each of these
# 50 tests cost a second each); the process boundary is kept where it is the point: a FIFO that
# would hang a reader, and a results file written by a real run.
cli = run_cli_in_process

PROFILE = """\
name: my-client
client: My client
versions: "1"
models: a test profile
extends: [base-ts-sdk]
identity:
  clientInfo: {name: my-client, version: "1"}
  protocolVersion: "2025-06-18"
  capabilities: {}
discovery:
  - use: BEHAVIOUR
    with: {limit: LIMIT}
    evidence:
      - level: observed
"""


def one_error(r, *words: str) -> str:
    """Exit 2 with exactly one error line that says each of ``words``; no traceback."""
    assert r.returncode == 2, r.stdout[-1000:] + r.stderr[-1000:]
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    errors = [line for line in r.stderr.splitlines() if line.startswith("mcp-matrix: error:")]
    assert len(errors) == 1, r.stderr
    assert all(w in errors[0] for w in words), errors[0]
    return errors[0]


def write(tmp_path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


# -- profiles ------------------------------------------------------------------------------


def test_a_profile_with_an_unknown_behaviour_names_file_line_key_and_the_near_miss(tmp_path):
    write(
        tmp_path,
        "profiles/my-client.yaml",
        PROFILE.replace("BEHAVIOUR", "max-tool").replace("LIMIT", "3"),
    )
    r = cli(
        "run",
        "--profiles-dir",
        str(tmp_path / "profiles"),
        "--server",
        "faulty",
        "--client",
        "my-client",
    )
    one_error(
        r,
        "my-client.yaml:11",
        "discovery[0].use",
        "unknown behaviour 'max-tool'",
        "did you mean 'max-tools'",
    )


def test_a_profile_param_of_the_wrong_type_says_what_was_expected(tmp_path):
    write(
        tmp_path,
        "profiles/my-client.yaml",
        PROFILE.replace("BEHAVIOUR", "max-tools").replace("LIMIT", '"forty"'),
    )
    r = cli(
        "run",
        "--profiles-dir",
        str(tmp_path / "profiles"),
        "--server",
        "faulty",
        "--client",
        "my-client",
    )
    one_error(r, "my-client.yaml:12", "discovery[0].with.limit", "expected an integer", '"forty"')


def test_a_profile_that_is_not_yaml_names_its_line(tmp_path):
    write(tmp_path, "profiles/my-client.yaml", "name: my-client\nclient: [unclosed\n")
    r = cli("profiles", "--profiles-dir", str(tmp_path / "profiles"))
    one_error(r, "my-client.yaml:", "YAML syntax error")


# -- cases -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "cases:\n  echo:\n    - name: x\n      expect: maybe\n",
            (":4", "cases.echo[0].expect", "success, error", '"maybe"'),
        ),
        (
            "cases:\n  echo:\n    - name: x\n      bogus: 1\n",
            (":4", "cases.echo[0].bogus", "unknown key 'bogus'", "valid keys"),
        ),
        (
            "cases:\n  echo:\n    - arguments: {text: x}\n",
            (":3", "cases.echo[0].name", "missing required key"),
        ),
        ("cases: [1, 2\n", (":1", "YAML syntax error")),
        ("cases:\n  echo:\n    - &a [*a]\n", (":3", "alias refers to itself")),
        ("", (":1", "empty")),
        (b"\xff\xfe\x00 not text", ("cannot read the cases file", "utf-8")),
        (
            "cases:\n  42:\n    - name: x\n",
            (":2", "cases.42", "a tool name must be a string", "an integer", '"42"'),
        ),
        ("cases:\n  null:\n    - name: x\n", ("cases.null", "a tool name must be a string")),
    ],
    ids=[
        "bad-enum",
        "unknown-key",
        "missing-name",
        "yaml-syntax",
        "alias-cycle",
        "empty",
        "not-utf8",
        "integer-tool-key",
        "null-tool-key",
    ],
)
def test_a_bad_cases_file_is_one_error_before_any_server_starts(tmp_path, text, words):
    cases = write(tmp_path, "cases.yaml", text)
    record = tmp_path / "calls.jsonl"
    r = cli(
        "run", "--server", f"faulty --record {record}", "--client", "continue", "--cases", cases
    )
    one_error(r, cases, *words)
    assert not record.exists()


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    cases = write(tmp_path, "cases.yaml", "\n".join(lines) + "\ncases: {}\n")  # 9^9 values expanded
    r = cli("run", "--server", "faulty", "--client", "continue", "--cases", cases)
    one_error(r, f"{cases}:1", "YAML aliases expanded", "at most 100000")


def test_a_cases_file_nested_too_deeply_is_one_error(tmp_path):
    cases = write(tmp_path, "cases.yaml", "cases: " + "[" * 20000 + "]" * 20000 + "\n")
    r = cli("run", "--server", "faulty", "--client", "continue", "--cases", cases)
    one_error(r, f"{cases}:1", "nested too deeply")


# -- release policy --------------------------------------------------------------------------


def test_a_bad_policy_names_its_line_and_the_valid_values(tmp_path):
    results = write(
        tmp_path,
        "r.jsonl",
        json.dumps({"event": "run-started", "format": "mcp-matrix.results", "version": 1}) + "\n",
    )
    policy = write(tmp_path, "policy.yaml", "required_clients: [continue]\nfail_on: [bogus]\n")
    r = cli("check", results, "--policy", policy)
    one_error(r, f"{policy}:2", "fail_on[0]", "expected one of", '"bogus"')


# -- snapshots -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            '{"format": "mcp-matrix.snapshot", "version": 1, "tools": [{"page": "x"}]}',
            ("tools[0]", "integer 'page'"),
        ),
        (
            '{"format": "mcp-matrix.snapshot", "version": 1,\n "tools": [\n',
            (":3", "not valid JSON"),
        ),
        (
            '{"format": "something-else"}',
            ("not an mcp-matrix snapshot", '"format": "mcp-matrix.snapshot"'),
        ),
        (
            '{"format": "mcp-matrix.snapshot", "version": 1, "tools": '
            + "[" * 50000
            + "]" * 50000
            + "}",
            ("nested too deeply",),
        ),
    ],
    ids=["bad-entry", "truncated", "wrong-format", "too-deep"],
)
@pytest.mark.parametrize("command", ["discover", "baseline"])
def test_a_bad_snapshot_is_one_error_naming_it(tmp_path, text, words, command):
    snap = write(tmp_path, "snap.json", text)
    if command == "discover":
        r = cli("discover", snap, "--client", "continue")
    else:
        r = cli("run", "--server", "faulty", "--client", "continue", "--baseline", snap)
    one_error(r, snap, *words)


# -- results ---------------------------------------------------------------------------------

START = json.dumps({"event": "run-started", "format": "mcp-matrix.results", "version": 1})


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (START + '\n{"event": "call", "verdict": \n{"event": "x"}\n', (":2", "not a JSON object")),
        ('{"event": "discovery"}\n', (":1", "first line must be a run-started event")),
        (START + "\n[1, 2]\n", (":2", "expected an object with an 'event' key")),
        (START + "\n" + "[" * 100000 + "\n", (":2", "nested too deeply")),
        (b"\xff\xfe\x00\x01", ("not UTF-8",)),
        ("", ("empty",)),
    ],
    ids=["bad-line", "not-results", "not-an-event", "too-deep", "binary", "empty"],
)
def test_a_bad_results_file_is_one_error_naming_file_and_line(tmp_path, text, words):
    results = write(tmp_path, "r.jsonl", text)
    r = cli("report", results, "--format", "md")
    one_error(r, results, *words)


# -- recorded calls (replay) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            '{"id": "a", "tool": "echo", "arguments": "x"}\n',
            (":1", "arguments", "expected an object"),
        ),
        ('{"id": "a", "tool": "echo", "arguments": {}}\nnot json\n', (":2", "not valid JSON")),
    ],
    ids=["arguments-not-object", "bad-json-line"],
)
def test_a_bad_recorded_calls_file_is_one_error_naming_file_line_and_key(tmp_path, text, words):
    calls = write(tmp_path, "live.jsonl", text)
    record = tmp_path / "calls.jsonl"
    r = cli("replay", calls, "--server", f"faulty --record {record}", "--client", "continue")
    one_error(r, calls, *words)
    assert not record.exists()


# -- arguments -------------------------------------------------------------------------------


BAD_ARGUMENTS = [
    (("--jobs", "0"), ("--jobs", "at least 1")),
    (("--fail-on", "bogus"), ("--fail-on", "unknown verdict 'bogus'", "broken")),
    (("--report", "badfmt:x"), ("--report", "FMT:FILE", "html", "'badfmt:x'")),
    (("--report", "html"), ("--report", "FMT:FILE")),
    (
        ("--http", "http://127.0.0.1:9/mcp", "--header", "NoColon"),
        ("--header", "KEY:VALUE", "'NoColon'"),
    ),
    (("--env", "NOEQUALS"), ("--env", "KEY=VALUE", "'NOEQUALS'")),
    (("--http", "ftp://example.com"), ("--http", "http://")),
    (("--server", "no-such-server"), ("--server", "unknown bundled server")),
    (("--timeout-call", "-1"), ("--timeout-call", "positive, finite")),
    (("--timeout-call", "nan"), ("--timeout-call", "positive, finite")),
    (("--timeout-initialize", "inf"), ("--timeout-initialize", "positive, finite")),
    (("--client", "claude-cod"), ("did you mean 'claude-code'",)),
]


@pytest.mark.parametrize(
    ("args", "words"), BAD_ARGUMENTS, ids=[" ".join(a[-2:]) for a, _ in BAD_ARGUMENTS]
)
def test_a_bad_argument_is_one_error_that_says_what_was_expected(tmp_path, args, words):
    record = tmp_path / "calls.jsonl"
    server = (
        () if "--server" in args or "--http" in args else ("--server", f"faulty --record {record}")
    )
    r = cli("run", *server, *args)
    one_error(r, *words)
    assert not record.exists()


def test_an_unknown_report_format_is_the_error_even_when_its_path_is_a_directory(tmp_path):
    """The format is what is wrong; the path is not checked for a format we cannot write
    (a clean-clone CI in a folder named ``x`` answered ``--report badfmt:x`` with 'is a directory')."""
    record = tmp_path / "calls.jsonl"
    r = cli("run", "--server", f"faulty --record {record}", "--report", f"badfmt:{tmp_path}")
    one_error(r, "--report", "FMT:FILE", "html", "'badfmt:")
    assert "is a directory" not in r.stderr and not record.exists()


# -- each kind of bad input the red-team pass used (issue 15), through the real CLI ------------

SNAP_HEAD = '{"format": "mcp-matrix.snapshot", "version": 2,\n "tools": [],\n "n": '
CASES_HEAD = "cases:\n  echo:\n    - name: x\n"


def _missing_verdict(tmp_path) -> str:
    """A results file our own run wrote, with one cell's ``verdict`` taken out."""
    results = tmp_path / "whole.jsonl"
    r = run_cli("run", "--server", "faulty", "--client", "continue", "--results", str(results))
    assert r.returncode in (0, 1), r.stderr[-2000:]
    lines = results.read_text(encoding="utf-8").splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith('{"outcome":'))
    cell = json.loads(lines[i])
    del cell["outcome"]["verdict"]  # what every call line naming it shares
    lines[i] = json.dumps(cell)
    return write(tmp_path, "r.jsonl", "\n".join(lines) + "\n"), f":{i + 1}", "missing key 'verdict'"


def _fifo(tmp_path, name: str) -> str:
    path = tmp_path / name
    os.mkfifo(path)
    return str(path)


BAD_INPUT_KINDS = {
    # name: (make the file -> (path, *words the error says), the command on that path)
    "snapshot-huge-integer": (
        lambda t: (write(t, "snap.json", SNAP_HEAD + "9" * 10_001 + "}\n"), ":3", "10,000 digits"),
        lambda p: ("discover", p),
    ),
    "results-huge-integer": (
        lambda t: (
            write(t, "r.jsonl", START + '\n{"event": "call", "n": ' + "9" * 10_001 + "}\n"),
            ":2",
            "10,000 digits",
        ),
        lambda p: ("report", p, "--format", "md"),
    ),
    "calls-huge-integer": (
        lambda t: (
            write(
                t, "live.jsonl", '{"id": ' + "9" * 10_001 + ', "tool": "echo", "arguments": {}}\n'
            ),
            ":1",
            "10,000 digits",
        ),
        lambda p: ("replay", p, "--server", "faulty", "--client", "continue"),
    ),
    # NaN, Infinity and 1e999: Python's json reads them, and every JSON output of ours that
    # carried one (the json report, merge, diff and discover --json, the results of a case) was
    # invalid JSON; they are refused as the wire refuses them from a server
    "snapshot-nan": (
        lambda t: (write(t, "snap.json", SNAP_HEAD + '"x", "m": NaN}\n'), ":3", "holds NaN"),
        lambda p: ("discover", p, "--json"),
    ),
    "snapshot-1e999": (
        lambda t: (write(t, "snap.json", SNAP_HEAD + "1e999}\n"), ":3", "the number 1e999"),
        lambda p: ("diff", p, p, "--format", "json"),
    ),
    "results-nan": (
        lambda t: (
            write(t, "r.jsonl", START + '\n{"event": "call", "n": -Infinity}\n'),
            ":2",
            "holds -Infinity, which is not a JSON number",
        ),
        lambda p: ("merge", p, p),
    ),
    "calls-nan": (
        lambda t: (
            write(t, "live.jsonl", '{"id": 1, "tool": "echo", "arguments": {"x": NaN}}\n'),
            ":1",
            "holds NaN",
        ),
        lambda p: ("replay", p, "--server", "faulty", "--client", "continue"),
    ),
    "cases-nan": (
        lambda t: (
            write(t, "cases.yaml", CASES_HEAD + "      arguments: {x: .nan}\n"),
            ":4",
            ".nan is not a number JSON can hold",
        ),
        lambda p: ("run", "--server", "faulty", "--client", "continue", "--cases", p),
    ),
    "binary-snapshot": (
        lambda t: (write(t, "snap.json", bytes(range(256)) * 4), "not UTF-8"),
        lambda p: ("discover", p),
    ),
    "nul-in-cases-yaml": (
        lambda t: (
            write(t, "cases.yaml", CASES_HEAD + '      arguments: {text: "a\x00b"}\n'),
            ":4",
            "NUL character",
        ),
        lambda p: ("run", "--server", "faulty", "--client", "continue", "--cases", p),
    ),
    "results-missing-key": (_missing_verdict, lambda p: ("report", p, "--format", "md")),
    "fifo-snapshot": (
        lambda t: (_fifo(t, "snap.json"), "not a regular file"),
        lambda p: ("discover", p),
    ),
    "fifo-cases": (
        lambda t: (_fifo(t, "cases.yaml"), "not a regular file"),
        lambda p: ("run", "--server", "faulty", "--client", "continue", "--cases", p),
    ),
    "fifo-results": (
        lambda t: (_fifo(t, "r.jsonl"), "not a regular file"),
        lambda p: ("report", p, "--format", "md"),
    ),
    "directory-snapshot": (lambda t: (str(t), "is a directory"), lambda p: ("discover", p)),
}


@pytest.mark.parametrize("kind", list(BAD_INPUT_KINDS))
def test_each_bad_input_kind_is_exit_2_naming_the_file_never_a_traceback_or_a_hang(tmp_path, kind):
    make, command = BAD_INPUT_KINDS[kind]
    path, *words = make(tmp_path)
    r = run_cli(
        *command(path), timeout=120
    )  # a FIFO read would wait for ever: the timeout fails it
    one_error(r, path, *words)


SNAPSHOT_DAMAGE = {
    # found by H4's adversarial pass: each loaded, and discover, diff and replay crashed on it
    "server-info-number": lambda doc: doc.update(serverInfo=5),
    "supported-versions-number": lambda doc: doc["eras"]["modern"].update(supportedVersions=5),
}


@pytest.mark.parametrize("damage", list(SNAPSHOT_DAMAGE))
def test_a_damaged_snapshot_that_loads_is_read_by_every_command_without_a_traceback(
    tmp_path, damage
):
    whole = tmp_path / "whole.json"
    r = run_cli("snapshot", "--server", "memory", "-o", str(whole))
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(whole.read_text(encoding="utf-8"))
    assert doc["eras"]["modern"]["answered"] is True  # the era the damage is read in
    SNAPSHOT_DAMAGE[damage](doc)
    damaged = write(tmp_path, "damaged.json", json.dumps(doc))
    calls = write(tmp_path, "live.jsonl", '{"id": 1, "tool": "memory_stats", "arguments": {}}\n')
    for args in (
        ("discover", damaged),
        ("diff", str(whole), damaged),
        ("replay", calls, "--snapshot", damaged, "--population", "live"),
    ):
        done = cli(*args, "--client", "claude-code", "--client", "python-sdk-modern")
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_a_file_named_with_control_characters_is_named_as_escapes_in_the_error(tmp_path):
    """An error names its file: one named with ESC and BEL (a CI artifact an attacker named,
    passed by a glob) reached the terminal raw, a screen cleared or a bell rung. Every
    ``mcp-matrix: error:`` line shows such characters as escapes."""
    bad = write(tmp_path, "r\x1b[2J\x07.jsonl", "garbage\n")
    for args in (("report", bad), ("merge", bad, bad), ("check", bad)):
        r = cli(*args)
        one_error(r, "r\\x1b[2J\\x07.jsonl:1", "not a JSON object")
        assert "\x1b" not in r.stderr and "\x07" not in r.stderr, r.stderr
