"""The profile loader: bundled profiles load, malformed ones fail with FILE:LINE, key path and expectation."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from mcp_matrix.behaviours import registry
from mcp_matrix.core.errors import InputError
from mcp_matrix.core.evidence import LEVELS
from mcp_matrix.profiles.loader import (
    ProfileErrors,
    bundled_profiles_dir,
    load_profiles,
    profile_schema,
    profile_summary,
    select_profiles,
)

BUNDLED = sorted(bundled_profiles_dir().glob("*.yaml"))


@pytest.fixture
def behaviours():
    """The registry; these tests use the real ``max-tools`` and ``strip-keywords``."""
    reg = registry.load_all()
    assert reg["max-tools"].phase == reg["strip-keywords"].phase == "discovery"
    return reg


IDENTITY = """\
identity:
  clientInfo: {name: test-client, version: "1.0"}
  protocolVersion: "2025-11-25"
"""


def header(name: str, **extra: str) -> str:
    lines = [f"name: {name}", "client: Test Client", 'versions: ">=1.0"', "models: the test era"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def write(directory: Path, name: str, body: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(body))
    return path


def line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def load_error(*paths: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_profiles(paths)
    return caught.value


def error_at(path: Path, needle: str) -> InputError:
    """The error of loading ``path``, asserted to be at the line that holds ``needle``."""
    error = load_error(path)
    assert error.where == f"{path}:{line_of(path, needle)}"
    return error


MAX_TOOLS = """\
discovery:
  - use: max-tools
    with: {limit: 40}
    evidence:
      - {level: doc, source: "https://example.com/limits"}
"""


# ---------------------------------------------------------------------------------------------
# Bundled profiles


def test_the_bundled_profiles_directory_holds_the_yaml_profiles():
    directory = bundled_profiles_dir()
    assert directory.is_dir()
    assert directory.name == "clients"
    assert BUNDLED, f"no *.yaml in {directory}"


def test_the_installed_package_data_directory_wins_when_it_exists(tmp_path, monkeypatch):
    from importlib.resources.readers import MultiplexedPath

    from mcp_matrix.profiles import files

    (tmp_path / "some-client.yaml").write_text("name: some-client\n")
    monkeypatch.setattr(files.resources, "files", lambda package: MultiplexedPath(str(tmp_path)))
    assert bundled_profiles_dir() == tmp_path


@pytest.fixture(scope="module")
def bundled():
    return load_profiles()


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_every_bundled_profile_loads_resolves_and_validates(path, bundled, behaviours):
    profile = bundled[path.stem]
    assert profile.source == str(path)
    if not profile.abstract:
        assert profile.identity.protocol_version
        assert profile.identity.client_info.get("name")
    for phase, uses in profile.phases().items():
        for use in uses:
            spec = behaviours[use.name]
            assert spec.phase == phase
            assert Draft202012Validator(spec.params_schema).is_valid(dict(use.params))
            assert use.evidence and all(e.level in LEVELS for e in use.evidence)
            assert Path(use.declared_in).is_file()
    json.dumps(profile_summary(profile))


def test_the_profile_schema_is_valid_draft_2020_12_and_its_levels_are_the_evidence_levels():
    schema = profile_schema()
    Draft202012Validator.check_schema(schema)
    assert tuple(schema["$defs"]["evidence"]["properties"]["level"]["enum"]) == LEVELS


# ---------------------------------------------------------------------------------------------
# One test per error class


def test_a_yaml_syntax_error_names_the_file_and_line(tmp_path):
    path = write(
        tmp_path,
        "broken",
        header("broken") + IDENTITY + "discovery:\n  - use: max-tools\n    with: {limit: 40\n",
    )
    error = load_error(path)
    assert error.where.startswith(f"{path}:")
    assert error.where == f"{path}:{line_of(path, 'with: {limit')}"
    assert "YAML syntax error" in error.message


def test_a_missing_required_key_is_named_with_what_it_means(tmp_path):
    path = write(tmp_path, "no-client", "name: no-client\nversions: '1'\nmodels: m\n" + IDENTITY)
    error = load_error(path)
    assert error.where == f"{path}:1"
    assert error.message.startswith("client: missing required key (The product modelled")


def test_a_name_that_differs_from_the_file_stem_is_an_error(tmp_path):
    path = write(tmp_path, "claude-code", header("claude") + IDENTITY)
    error = error_at(path, "name:")
    assert "name: 'claude' must equal the file stem 'claude-code'" in error.message


def test_an_unknown_behaviour_suggests_the_closest_name_and_lists_the_phase(tmp_path):
    path = write(
        tmp_path, "typo", header("typo") + IDENTITY + MAX_TOOLS.replace("max-tools", "max-tool")
    )
    error = error_at(path, "use: max-tool")
    assert (
        "discovery[0].use: unknown behaviour 'max-tool' (did you mean 'max-tools'?)"
        in error.message
    )
    assert "discovery behaviours: " in error.message and "strip-keywords" in error.message


def test_a_behaviour_listed_under_the_wrong_phase_names_its_phase(tmp_path):
    path = write(
        tmp_path,
        "wrong-phase",
        header("wrong-phase") + IDENTITY + MAX_TOOLS.replace("discovery:", "call:"),
    )
    error = error_at(path, "use: max-tools")
    assert "call[0].use: 'max-tools' is a discovery behaviour, listed under call" in error.message


def test_an_unknown_param_lists_the_valid_params_with_did_you_mean(tmp_path):
    path = write(
        tmp_path, "bad-param", header("bad-param") + IDENTITY + MAX_TOOLS.replace("limit:", "limt:")
    )
    error = error_at(path, "limt")
    assert "discovery[0].with.limt: unknown param 'limt' (did you mean 'limit'?)" in error.message
    assert "max-tools takes: limit, policy" in error.message


def test_a_mistyped_param_says_the_expected_type(tmp_path):
    body = header("typed") + IDENTITY + MAX_TOOLS.replace("{limit: 40}", '\n      limit: "40"')
    path = write(tmp_path, "typed", body)
    error = error_at(path, "limit:")
    assert 'discovery[0].with.limit: expected an integer, got string "40"' in error.message


def test_a_mistyped_param_inside_a_list_names_the_item(tmp_path):
    body = (
        header("items")
        + IDENTITY
        + textwrap.dedent(
            """\
        discovery:
          - use: strip-keywords
            with:
              keywords:
                - format
                - 3
            evidence: [{level: code, source: "org/repo/src/schema.ts@abc123"}]
        """
        )
    )
    path = write(tmp_path, "items", body)
    error = error_at(path, "- 3")
    assert "discovery[0].with.keywords[1]: expected a string, got integer 3" in error.message


def test_an_entry_without_evidence_is_an_error(tmp_path):
    body = (
        header("no-evidence") + IDENTITY + "discovery:\n  - use: max-tools\n    with: {limit: 40}\n"
    )
    path = write(tmp_path, "no-evidence", body)
    error = error_at(path, "use: max-tools")
    assert (
        "discovery[0].evidence: missing required key (Where the claim comes from" in error.message
    )


def test_an_empty_evidence_list_is_an_error(tmp_path):
    body = (
        header("empty-evidence") + IDENTITY + "discovery:\n  - use: max-tools\n    evidence: []\n"
    )
    path = write(tmp_path, "empty-evidence", body)
    error = error_at(path, "evidence: []")
    assert "discovery[0].evidence: expected at least 1 item, got 0" in error.message


def test_an_unknown_evidence_level_lists_the_levels(tmp_path):
    path = write(
        tmp_path,
        "bad-level",
        header("bad-level") + IDENTITY + MAX_TOOLS.replace("level: doc", "level: docs"),
    )
    error = error_at(path, "level: docs")
    assert (
        'discovery[0].evidence[0].level: expected one of observed, code, issue, doc, assumed, got "docs"'
        " (did you mean 'doc'?)"
    ) in error.message


def test_an_unknown_parent_suggests_the_closest_profile(tmp_path):
    write(tmp_path, "base-ts-sdk", header("base-ts-sdk", abstract="true") + MAX_TOOLS)
    path = write(tmp_path, "child", header("child", extends="[base-ts-skd]") + IDENTITY)
    error = load_error(tmp_path)
    assert error.where == f"{path}:{line_of(path, 'extends:')}"
    assert (
        "extends[0]: unknown profile 'base-ts-skd' (did you mean 'base-ts-sdk'?)" in error.message
    )


def test_a_cycle_in_extends_shows_the_cycle(tmp_path):
    first = write(tmp_path, "a", header("a", extends="[b]") + IDENTITY)
    write(tmp_path, "b", header("b", extends="[a]") + IDENTITY)
    error = load_error(tmp_path)
    assert error.where == f"{first}:{line_of(first, 'extends:')}"
    assert "extends[0]: cycle in extends: a -> b -> a" in error.message


def test_removing_an_id_that_is_not_inherited_is_an_error(tmp_path):
    write(tmp_path, "base", header("base", abstract="true") + MAX_TOOLS)
    body = header("child", extends="[base]") + IDENTITY + "remove:\n  - max-tool\n"
    path = write(tmp_path, "child", body)
    error = load_error(tmp_path)
    assert error.where == f"{path}:{line_of(path, '- max-tool')}"
    assert (
        "remove[0]: no inherited entry has id 'max-tool' (did you mean 'max-tools'?)"
        in error.message
    )
    assert "inherited ids: max-tools" in error.message


def test_a_profile_name_defined_in_two_files_names_both(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = write(tmp_path / "one", "same", header("same") + IDENTITY)
    second = write(tmp_path / "two", "same", header("same") + IDENTITY)
    with pytest.raises(InputError) as caught:
        load_profiles([tmp_path / "one"], extra_dirs=[tmp_path / "two"])
    error = caught.value
    assert error.where == f"{second}:1"
    assert f"name: profile 'same' is defined twice: in {first} and in {second}" in error.message


# ---------------------------------------------------------------------------------------------
# More input errors


def test_an_unknown_top_level_key_suggests_the_closest_key(tmp_path):
    path = write(tmp_path, "top", header("top") + IDENTITY + "discovry: []\n")
    error = error_at(path, "discovry")
    assert (
        "discovry: unknown key 'discovry' (did you mean 'discovery'?); valid keys: name, client"
        in error.message
    )


def test_a_duplicate_yaml_key_is_an_error_rather_than_silently_overwritten(tmp_path):
    path = write(tmp_path, "dup", header("dup") + IDENTITY + "client: Other\n")
    error = error_at(path, "client: Other")
    assert "client: duplicate key (also at line 2)" in error.message


def test_two_entries_with_one_id_in_a_phase_are_an_error(tmp_path):
    path = write(
        tmp_path,
        "twice",
        header("twice") + IDENTITY + MAX_TOOLS + MAX_TOOLS.replace("discovery:\n", ""),
    )
    error = load_error(path)
    assert (
        error.where == f"{path}:{path.read_text().splitlines().index('  - use: max-tools', 9) + 1}"
    )
    assert (
        "discovery[1].use: duplicate id 'max-tools' in discovery (also discovery[0])"
        in error.message
    )


def test_a_runnable_profile_needs_an_identity_of_its_own_or_inherited(tmp_path):
    path = write(tmp_path, "anon", header("anon") + MAX_TOOLS)
    error = load_error(path)
    assert error.where == f"{path}:1"
    assert "identity: missing required key, and no parent declares one" in error.message


def test_every_schema_error_of_a_file_is_reported_at_once_in_line_order(tmp_path):
    body = "name: Many\nclient: 3\nversions: '1'\nmodels: m\nabstract: maybe\n"
    path = write(tmp_path, "many", body)
    error = load_error(path)
    assert isinstance(error, ProfileErrors)
    assert [e.where for e in error.errors] == [f"{path}:1", f"{path}:2", f"{path}:5"]
    text = str(error)
    assert 'name: "Many" does not match ^[a-z0-9][a-z0-9-]*$' in text
    assert 'client: expected a string, got integer 3 (quote it in YAML: "3")' in text
    assert 'abstract: expected true or false, got string "maybe"' in text


def test_an_empty_file_says_what_a_profile_needs(tmp_path):
    path = write(tmp_path, "empty", "")
    error = load_error(path)
    assert error.where == f"{path}:1"
    assert (
        "the file is empty; expected a mapping with name, client, versions, models" in error.message
    )


def test_a_yaml_tag_is_refused_because_a_profile_is_data_only(tmp_path):
    path = write(tmp_path, "tagged", "name: tagged\nclient: !!python/name:os.system x\n")
    error = load_error(path)
    assert error.where == f"{path}:2"
    assert "YAML tags are not allowed, a profile is data only" in error.message


def test_a_missing_path_is_an_input_error(tmp_path):
    error = load_error(tmp_path / "nowhere")
    assert error.where == str(tmp_path / "nowhere")


# ---------------------------------------------------------------------------------------------
# extends semantics


@pytest.fixture
def family(tmp_path):
    write(
        tmp_path,
        "base",
        header("base", abstract="true")
        + IDENTITY
        + textwrap.dedent(
            """\
            discovery:
              - use: strip-keywords
                with: {keywords: [format]}
                evidence: [{level: code, source: "org/sdk/src/x.ts@1"}]
              - use: max-tools
                evidence: [{level: doc, source: "https://example.com"}]
            """
        ),
    )
    write(
        tmp_path,
        "other-base",
        header("other-base", abstract="true")
        + IDENTITY.replace("test-client", "other-client")
        + textwrap.dedent(
            """\
            discovery:
              - use: strip-keywords
                id: strip-more
                with: {keywords: [pattern]}
                evidence: [{level: issue, source: "https://example.com/issues/1"}]
            """
        ),
    )
    return tmp_path


def test_parent_entries_come_first_and_an_entry_with_the_same_id_replaces_in_place(
    family, behaviours
):
    write(
        family,
        "child",
        header("child", extends="[base]")
        + textwrap.dedent(
            """\
            discovery:
              - use: strip-keywords
                id: strip-child
                with: {keywords: [title]}
                evidence: [{level: observed, source: "run 2026-06-01"}]
              - use: strip-keywords
                with: {keywords: [format, minLength]}
                evidence: [{level: assumed}]
            """
        ),
    )
    child = load_profiles([family])["child"]
    assert [u.id for u in child.discovery] == ["strip-keywords", "max-tools", "strip-child"]
    replaced = child.discovery[0]
    defaults = behaviours["strip-keywords"].defaults()
    assert replaced.params == {**defaults, "keywords": ["format", "minLength"]}
    assert replaced.weakest_evidence == "assumed"
    assert replaced.declared_in == str(family / "child.yaml")
    assert child.discovery[1].declared_in == str(family / "base.yaml")


def test_parents_apply_in_the_listed_order_and_identity_comes_from_the_last_parent_with_one(family):
    write(family, "child", header("child", extends="[base, other-base]"))
    child = load_profiles([family])["child"]
    assert [u.id for u in child.discovery] == ["strip-keywords", "max-tools", "strip-more"]
    assert child.identity.client_info["name"] == "other-client"
    assert child.extends == ("base", "other-base")
    assert child.abstract is False


def test_a_profile_s_own_identity_wins_over_its_parents(family):
    own = IDENTITY.replace("test-client", "mine")
    write(family, "child", header("child", extends="[base]") + own)
    assert load_profiles([family])["child"].identity.client_info["name"] == "mine"


def test_remove_drops_an_inherited_entry_and_declaring_it_again_moves_it_last(family):
    write(family, "drop", header("drop", extends="[base]") + "remove: [max-tools]\n")
    write(
        family,
        "move",
        header("move", extends="[base]")
        + "remove: [strip-keywords]\n"
        + MAX_TOOLS.replace("max-tools", "strip-keywords").replace(
            "{limit: 40}", "{keywords: [a]}"
        ),
    )
    profiles = load_profiles([family])
    assert [u.id for u in profiles["drop"].discovery] == ["strip-keywords"]
    assert [u.id for u in profiles["move"].discovery] == ["max-tools", "strip-keywords"]


def test_params_take_the_behaviour_defaults_and_profiles_share_no_mutable_state(family, behaviours):
    write(family, "child", header("child", extends="[base]"))
    profiles = load_profiles([family])
    base, child = profiles["base"], profiles["child"]
    assert dict(base.discovery[1].params) == behaviours["max-tools"].defaults()
    assert base.discovery[0].params == child.discovery[0].params
    child.discovery[0].params["keywords"].append("mutated")
    assert base.discovery[0].params["keywords"] == ["format"]


def test_an_unquoted_date_stays_a_string(tmp_path):
    write(tmp_path, "dated", header("dated") + IDENTITY.replace('"2025-11-25"', "2025-11-25"))
    assert load_profiles([tmp_path])["dated"].identity.protocol_version == "2025-11-25"


# ---------------------------------------------------------------------------------------------
# Selection and summary


def test_select_profiles_returns_runnable_profiles_and_rejects_unknown_and_abstract_names(family):
    write(family, "child", header("child", extends="[base]"))
    profiles = load_profiles([family])
    assert [p.name for p in select_profiles(profiles)] == ["child"]
    assert [p.name for p in select_profiles(profiles, ["child", "child"])] == ["child"]
    with pytest.raises(
        InputError, match=r"unknown profile 'chlid' \(did you mean 'child'\?\); profiles: child"
    ):
        select_profiles(profiles, ["chlid"])
    with pytest.raises(
        InputError, match="'base' is an abstract base profile .*profiles built on it: child"
    ):
        select_profiles(profiles, ["base"])


def test_the_summary_is_json_keyed_like_the_format_with_the_weakest_evidence(family, behaviours):
    write(family, "child", header("child", extends="[base, other-base]"))
    summary = profile_summary(load_profiles([family])["child"])
    assert json.loads(json.dumps(summary)) == summary
    assert summary["weakest_evidence"] == "doc"
    assert summary["identity"]["clientInfo"]["name"] == "other-client"
    assert [e["use"] for e in summary["discovery"]] == [
        "strip-keywords",
        "max-tools",
        "strip-keywords",
    ]
    assert summary["discovery"][1]["with"] == behaviours["max-tools"].defaults()
    assert summary["call"] == [] and summary["extends"] == ["base", "other-base"]
