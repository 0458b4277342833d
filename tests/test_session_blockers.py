"""A tool whose name the model API refuses breaks the session, and that claim no offline run can
show: it is one root cause naming the tool, the rule and its evidence, while every other tool's
cell stays its own prediction (issue 23 section 4). The gate still fails on it.

Real runs: a stdio server of our own (tests/hostile/tiny_server.py) through the real CLI, with a
dotted name and a 70-character name among ordinary tools, in Claude Code, Google ADK (Gemini) and
the OpenAI Agents SDK (Codex takes names up to 128 since the Responses API does: openai/codex#46188).
The API judges what the client sends: its rules (``provider`` entries) run after the client's own,
so the culprit's cell shows the client's rewrites, and a tool the client never sends blames nothing
(the bundled probe server, paged, for Google ADK's first page).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_matrix.core.events import CallCell, DiscoveryCell, RunStarted
from mcp_matrix.report.cause_words import cause_where
from mcp_matrix.report.grid import session_blockers
from mcp_matrix.report.triage import build_triage
from mcp_matrix.run.results import read_typed
from tests.conftest import run_cli
from tests.hostile.conftest import tiny_server

CLIENTS = ("claude-code-278", "google-adk", "langchain")  # 64-character limits (openai-agents and
# claude-code 2.1.332 take 128: clients/calibrations/*/limit-long-name)
LONG = "search_the_entire_knowledge_base_for_documents_matching_a_query_string"  # 70 characters
DOTTED = "files.read"
ORDINARY = ("get_weather", "add")


def _tool(name: str, **properties: dict) -> dict:
    return {
        "name": name,
        "description": f"{name} for a test",
        "inputSchema": {"type": "object", "properties": properties, "required": list(properties)},
    }


TOOLS = {
    "get_weather": _tool("get_weather", city={"type": "string"}),
    DOTTED: _tool(DOTTED, path={"type": "string"}),
    LONG: _tool(LONG, q={"type": "string"}),
    "add": _tool("add", a={"type": "integer"}, b={"type": "integer"}),
}
CASES = """server: tiny
cases:
  get_weather:
    - name: ok
      arguments: {city: Paris}
  add:
    - name: ok
      arguments: {a: 1, b: 2}
"""


def _run(
    tmp_path: Path, names: tuple[str, ...], *extra: str, clients=CLIENTS
) -> tuple[subprocess.CompletedProcess, list]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    cases = tmp_path / "cases.yaml"
    cases.write_text(CASES, encoding="utf-8")
    results = tmp_path / "results.jsonl"
    server = tiny_server(tmp_path, {"tools": [TOOLS[n] for n in names]})
    args = ["run", "--stdio", server, "--name", "tiny", "--cases", str(cases)]
    args += ["--results", str(results), *extra]
    for client in clients:
        args += ["--client", client]
    done = run_cli(*args, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done, read_typed(results)


@pytest.fixture(scope="module")
def blocked(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list]:
    return _run(tmp_path_factory.mktemp("blocked"), tuple(TOOLS))


def _cells(events: list, kind: type) -> dict[tuple[str, str], object]:
    return {(e.profile, e.tool): e for e in events if isinstance(e, kind)}


def test_each_ordinary_tool_keeps_its_own_cell_and_its_calls_run_when_a_name_breaks_the_session(
    blocked,
):
    done, events = blocked
    discovery, calls = _cells(events, DiscoveryCell), _cells(events, CallCell)
    for client in CLIENTS:
        for tool in ORDINARY:
            assert discovery[(client, tool)].verdict == "visible", (client, tool)
            assert discovery[(client, tool)].model_name
            assert calls[(client, tool)].verdict == "intact", (client, tool)
        long = discovery[(client, LONG)]
        assert long.verdict == "session-broken"
        assert long.findings[-1].blast_radius == "session"
        assert long.findings[-1].evidence, "the provider rule cites its evidence"
    # the dotted name breaks only the client that sends it as it is; the others rename it
    assert discovery[("langchain", DOTTED)].verdict == "session-broken"
    # renamed with every word kept, its calls mapped back: visible, the rename a note
    assert discovery[("claude-code-278", DOTTED)].verdict == "visible"
    assert "name-sanitised" in {f.code for f in discovery[("claude-code-278", DOTTED)].findings}
    assert discovery[("claude-code-278", DOTTED)].model_name == "mcp__tiny__files_read"
    assert done.returncode == 1  # the gate: a session broken in a required client


def test_the_blocker_is_one_root_cause_with_the_culprit_the_rule_and_every_tool_as_blast_radius(
    blocked,
):
    done, events = blocked
    broken = [c for c in build_triage(events) if c.verdict == "session-broken"]
    by_culprit = {tuple(c.culprits): c for c in broken}
    assert set(by_culprit) == {(LONG,), (DOTTED,)}
    long = by_culprit[(LONG,)]
    assert sorted(long.clients) == sorted(CLIENTS) and long.tools == [LONG]
    assert long.code == "name-too-long" and long.evidence
    assert long.session_tools == len(TOOLS)
    where = cause_where(long)
    assert f"every tool of this server in each of these clients ({len(TOOLS)} tools)" in where
    assert "if the request is refused" in where
    assert by_culprit[(DOTTED,)].clients == ["langchain"]
    assert session_blockers(events) == {
        "claude-code-278": (4, (LONG,)),
        "google-adk": (4, (LONG,)),
        "langchain": (4, (DOTTED, LONG)),
    }
    # the terminal: the two causes, the blast radius, and the grid's key says what the mark means
    assert len(re.findall(r"^ *\d+\. session-broken ", done.stdout, re.MULTILINE)) == 2, done.stdout
    assert "every tool of this server in this client (4 tools)" in done.stdout
    assert "marks the tool that breaks the session in that client" in done.stdout


def test_the_ordinary_tools_cells_are_what_they_are_on_a_server_without_the_blocking_names(
    blocked, tmp_path
):
    """No false alarm: a cell is never worse than the client's own if the API accepted."""
    _, events = blocked
    _, plain = _run(tmp_path, ORDINARY)
    with_blocker, without = _cells(events, DiscoveryCell), _cells(plain, DiscoveryCell)
    calls, plain_calls = _cells(events, CallCell), _cells(plain, CallCell)
    for key, cell in without.items():
        other = with_blocker[key]
        assert (other.verdict, other.model_name, other.model_schema, other.findings) == (
            cell.verdict,
            cell.model_name,
            cell.model_schema,
            cell.findings,
        ), key
        assert calls[key].verdict == plain_calls[key].verdict == "intact", key


def test_a_session_broken_by_one_name_still_fails_the_gate_of_a_required_client(tmp_path):
    tools = ("get_weather", DOTTED, "add")
    required, _ = _run(
        tmp_path / "required",
        tools,
        "--fail-on",
        "none",
        "--require",
        "openai-agents",
        clients=("openai-agents",),
    )
    assert required.returncode == 1, required.stdout
    assert "release gate: FAILED" in required.stdout
    not_required, _ = _run(
        tmp_path / "none", tools, "--fail-on", "none", clients=("openai-agents",)
    )
    assert not_required.returncode == 0, not_required.stdout


def test_check_fails_a_results_file_whose_required_client_has_its_session_broken(tmp_path):
    _run(tmp_path, ("get_weather", DOTTED, "add"), "--fail-on", "none", clients=("openai-agents",))
    policy = tmp_path / "policy.yaml"
    policy.write_text("required_clients: [openai-agents]\n", encoding="utf-8")
    done = run_cli("check", str(tmp_path / "results.jsonl"), "--policy", str(policy))
    assert done.returncode == 1, done.stdout + done.stderr
    assert DOTTED in done.stdout, done.stdout


def test_results_written_before_blockers_were_kept_apart_still_read_as_one_cause():
    """A file from before: every tool ``session-broken``, the culprit named in each copy."""
    rule = {
        "code": "name-invalid",
        "message": "model-facing name 'files.read' has characters the model API does not allow",
        "blast_radius": "session",
        "evidence": [{"level": "observed", "source": "clients/calibrations/x.json"}],
    }
    blamed = {**rule, "message": f"because of tool 'files.read': {rule['message']}"}
    blamed["culprit"] = DOTTED
    events = [
        RunStarted(profiles=({"name": "openai-agents", "client": "openai-agents"},)),
        DiscoveryCell(
            profile="openai-agents", tool="add", verdict="session-broken", findings=(blamed,)
        ),
        DiscoveryCell(
            profile="openai-agents", tool=DOTTED, verdict="session-broken", findings=(rule,)
        ),
        DiscoveryCell(
            profile="openai-agents",
            tool="get_weather",
            verdict="session-broken",
            findings=(blamed,),
        ),
    ]
    assert session_blockers(events) == {}
    (cause,) = build_triage(events)
    assert cause.culprits == [DOTTED] and cause.session_tools == 0
    assert "takes down 3 tools" in cause_where(cause)


def _diff(tmp_path: Path, old: tuple[str, ...], new: tuple[str, ...] | list) -> dict:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    new_tools = [TOOLS[n] for n in new] if isinstance(new, tuple) else new
    done = run_cli(
        "diff",
        "stdio:" + tiny_server(tmp_path / "old", {"tools": [TOOLS[n] for n in old]}),
        "stdio:" + tiny_server(tmp_path / "new", {"tools": new_tools}),
        "--name",
        "tiny",
        "--client",
        "claude-code-278",
        "--client",
        "langchain",
        "--format",
        "json",
        "--fail-on",
        "none",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_diff_puts_a_new_blocking_name_on_its_tool_and_leaves_the_other_tools_alone(tmp_path):
    doc = _diff(tmp_path, ORDINARY, (*ORDINARY, LONG))
    by_tool = {c["tool"]: c for c in doc["changes"]}
    assert set(by_tool) == {LONG}, by_tool
    effects = {e["profile"]: e for e in by_tool[LONG]["clients"]}
    assert effects["langchain"]["effect"] == "session-broken"
    assert "over the limit of 64" in effects["langchain"]["message"]


def test_diff_names_a_change_that_makes_a_client_drop_the_whole_server(tmp_path):
    """The whole-list outcome keeps its own words (found with this work: it was left out)."""
    untyped = dict(TOOLS["add"], inputSchema={"anyOf": [{"type": "object", "properties": {}}]})
    doc = _diff(tmp_path, ORDINARY, [TOOLS["get_weather"], untyped])
    effects = [e for c in doc["changes"] if c["tool"] == "add" for e in c["clients"]]
    dropped = [e for e in effects if e["effect"] == "server-dropped"]
    assert dropped and dropped[0]["profile"] == "claude-code-278", effects
    assert "every tool of the server is lost in this client because of add" in dropped[0]["message"]


# -- the simulation alone (offline: the same discovery every command runs) ----------------------


def _names_view(profile: str, names: list[str]):
    from tests.behaviours.conftest import discover

    return discover(profile, [_tool(n, x={"type": "string"}) for n in names], "tiny")


@pytest.mark.parametrize("profile", CLIENTS)
def test_many_blocking_names_each_get_their_own_cell_and_the_rest_stay_visible(profile):
    longs = [f"{LONG}_{i}" for i in range(7)]
    names = [n for pair in zip(longs, [f"tool_{i}" for i in range(7)]) for n in pair]
    out = _names_view(profile, names)
    verdicts = {t.tool: t.verdict for t in out.tools}
    assert {verdicts[n] for n in longs} == {"session-broken"}
    assert {verdicts[f"tool_{i}"] for i in range(7)} == {"visible"}
    assert out.culprits == tuple(longs)
    for n in longs:  # each culprit's own finding names its own name
        assert n in out.by_tool()[n].findings[-1].message
    assert [t.tool for t in out.tools] == names  # the list's order is kept


def test_a_name_collision_the_client_refuses_blames_the_second_tool_only():
    """A rule of the list (Agents SDK: two tools of one name end the agent run)."""
    out = _names_view("openai-agents", ["dup", "get_weather", "dup", "add"])
    assert [t.verdict for t in out.tools] == [
        "visible",
        "visible",
        "session-broken",
        "visible",
    ]
    assert out.tools[2].findings[-1].code == "name-collision"


# -- the API judges what the client sends (provider rules run after the client's own) -----------

CITY = {  # a schema each client rewrites its own way (LangChain inlines the $ref, drops titles)
    "type": "object",
    "title": "Args",
    "$defs": {"city": {"type": "string", "title": "City"}},
    "properties": {"city": {"$ref": "#/$defs/city"}},
    "required": ["city"],
}
PAGE_TWO = f"{LONG}_page_two"
SENT_CLIENTS = ("langchain", "google-adk", "claude-code-278")  # all pages, first page, all pages


@pytest.fixture(scope="module")
def sent(tmp_path_factory) -> list:
    """A real run on the bundled probe server, three tools a page: a short-named twin of the
    70-character tool (same schema and description) on page one, another long name on page two."""
    folder = tmp_path_factory.mktemp("sent")
    listed = [
        {"name": "lookup_city", "description": "Look a city up.", "inputSchema": CITY},
        {"name": LONG, "description": "Look a city up.", "inputSchema": CITY},
        TOOLS["add"],
        {"name": PAGE_TWO, "description": "Look a city up.", "inputSchema": CITY},
    ]
    (folder / "tools.json").write_text(json.dumps({"tools": listed}), encoding="utf-8")
    server = (
        f"{sys.executable} -m matrix_servers.probe --tools {folder / 'tools.json'} --page-size 3"
    )
    args = ["run", "--stdio", server, "--name", "tiny", "--results", str(folder / "r.jsonl")]
    done = run_cli(*args, *(a for c in SENT_CLIENTS for a in ("--client", c)), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return read_typed(folder / "r.jsonl")


def test_the_blocking_tools_cell_shows_the_name_and_schema_the_client_sends(sent):
    """The API refuses what the client sends, so the culprit carries every rewrite of the client
    (before, the name rule ran first in these profiles and the cell showed nothing of them)."""
    cells = _cells(sent, DiscoveryCell)
    for client in SENT_CLIENTS:
        culprit, twin = cells[(client, LONG)], cells[(client, "lookup_city")]
        assert culprit.verdict == "session-broken", client
        assert culprit.model_schema == twin.model_schema, client  # the client's schema rewrites
        assert culprit.findings[:-1] == twin.findings, client  # and their findings
        assert culprit.findings[-1].code == "name-too-long", client
        assert culprit.findings[-1].blast_radius == "session", client
    assert cells[("langchain", LONG)].model_schema == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert cells[("claude-code-278", LONG)].model_name == f"mcp__tiny__{LONG}"  # its template
    assert cells[("langchain", LONG)].model_name == LONG


def test_a_name_the_client_never_sends_breaks_no_session_and_the_blocker_stays_its_own_cause(
    sent,
):
    """Google ADK reads the first page only: the long name on page two never reaches the API
    (before, the API's name rule judged it ahead of the pagination and blamed it)."""
    cells = _cells(sent, DiscoveryCell)
    assert cells[("google-adk", PAGE_TWO)].verdict == "hidden"
    assert cells[("google-adk", PAGE_TWO)].findings[-1].code == "page-not-read"
    assert cells[("langchain", PAGE_TWO)].verdict == "session-broken"  # it reads every page
    assert session_blockers(sent) == {
        "claude-code-278": (4, (LONG, PAGE_TWO)),
        "google-adk": (4, (LONG,)),
        "langchain": (4, (LONG, PAGE_TWO)),
    }
    broken = [c for c in build_triage(sent) if c.verdict == "session-broken"]
    assert {tuple(c.culprits) for c in broken} == {(LONG,), (PAGE_TWO,)}
    page_two = next(c for c in broken if c.culprits == [PAGE_TWO])
    assert sorted(page_two.clients) == ["claude-code-278", "langchain"]
    for client in SENT_CLIENTS:  # the other tools keep their own cells
        assert cells[(client, "lookup_city")].verdict in ("visible", "degraded"), client
        assert cells[(client, "add")].verdict == "visible", client


PROVIDER_PROBES = {  # each list has one tool a model API refuses, with a schema clients rewrite
    "long": LONG,
    "longer": "x" * 140,
    "dotted": DOTTED,
    "spaced": "get weather now",
    "digit": "1password_lookup",
}
RICH = {
    "type": "object",
    "$defs": {"unused": {"type": "string"}},
    "properties": {
        "q": {"type": ["string", "null"], "minLength": 1, "format": "date", "title": "Q"},
        "o": {"type": "object"},
    },
}


def _provider_probes() -> dict[str, list[dict]]:
    tools = {
        k: {"name": n, "description": "d" * 5000, "inputSchema": RICH}
        for k, n in PROVIDER_PROBES.items()
    }
    tools["bad-key"] = dict(tools["long"], name="lookup")
    tools["bad-key"]["inputSchema"] = dict(RICH, properties={"bad key!": {"type": "string"}})
    tools["root-anyof"] = dict(tools["long"], name="pick")
    tools["root-anyof"]["inputSchema"] = dict(
        RICH, anyOf=[{"required": ["q"]}, {"required": ["o"]}]
    )
    tools["ref-cycle"] = dict(tools["long"], name="tree")
    node = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
    }
    tools["ref-cycle"]["inputSchema"] = dict(
        RICH, properties={"n": {"$ref": "#/$defs/n"}}, **{"$defs": {"n": node}}
    )
    cycle = tools.pop("ref-cycle")  # a run the cycle fails whole (LlamaIndex) keeps the others
    bare = [
        dict(t, inputSchema={"type": "object"}) for k, t in tools.items() if k in PROVIDER_PROBES
    ]
    ends = [_tool("get_weather", city={"type": "string"}), TOOLS["add"]]
    lists = {"rich": list(tools.values()), "cycle": [cycle], "bare": bare}
    return {k: [ends[0], *v, ends[1]] for k, v in lists.items()}


def test_in_every_profile_a_tool_the_api_refuses_holds_every_rewrite_of_the_client():
    """On these lists, before: 17 profiles (77 of 176 culprit cells) set the culprit aside
    ahead of their own renames, schema or description rewrites."""
    from dataclasses import replace

    from mcp_matrix.simulate.discovery import initial_state, run_discovery
    from tests.behaviours.conftest import load, profile_names

    culprits = 0
    for name in profile_names():
        profile = load(name)
        own = replace(profile, discovery=tuple(u for u in profile.discovery if not u.provider))
        for probe, tools in _provider_probes().items():
            state = initial_state([(0, t) for t in tools], "srv")
            final, alone = run_discovery(profile, state), run_discovery(own, state)
            for index in final.blocked:
                culprits += 1
                tool, client = final.tools[index], alone.tools[index]
                assert (tool.name, tool.schema, tool.description) == (
                    client.name,
                    client.schema,
                    client.description,
                ), (name, probe)
                assert tool.findings[:-1] == client.findings, (name, probe)
    assert culprits > 150  # the lists do trip the API's rules


def test_a_child_replacing_an_api_rule_keeps_its_role_unless_it_says_otherwise():
    from tests.behaviours.conftest import load

    def role(profile: str, entry: str) -> bool:
        return next(u.provider for u in load(profile).discovery if u.id == entry)

    assert role("claude-code-278", "api-name-rules")  # replaced in place: still the API's
    assert role("zed", "root-combinators")
    assert not role(
        "claude-code-278", "root-combinators"
    )  # Claude Code's own drop (provider: false)
    assert not role("claude-code-278", "tool-name")


def test_profiles_show_marks_the_api_rules_and_their_order():
    from tests.conftest import run_cli_in_process

    shown = run_cli_in_process("profiles", "show", "claude-code-278")
    marked = [line.split()[0] for line in shown.stdout.splitlines() if "(model API" in line]
    assert marked == ["tool-name", "forbid-property-keys"], shown.stdout  # not its own drop
    as_json = json.loads(run_cli_in_process("profiles", "show", "claude-code-278", "--json").stdout)
    assert [u["id"] for u in as_json["discovery"] if u["provider"]] == [
        "api-name-rules",
        "forbid-property-keys",
    ]
