"""load_yaml_checked: any YAML input file is reported as FILE:LINE and a key path, in words."""

from __future__ import annotations

import pytest
import yaml

from mcp_matrix.core import yamlfile
from mcp_matrix.core.errors import InputError, InputErrors
from mcp_matrix.core.yamlfile import MAX_VALUES, load_yaml_checked, parse_yaml

BUILT_WITH = yamlfile._FastLoader  # before any test swaps it

SCHEMA = {
    "type": "object",
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "limits": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"timeout": {"type": "integer"}, "retries": {"type": "integer"}},
        },
    },
}


@pytest.fixture(autouse=True, params=["libyaml", "pure"])
def loader(request, monkeypatch):
    """Every test reads with libyaml's parser (when PyYAML has it) and with the pure one, the
    fallback where it has not: what a user is told must not depend on how PyYAML was built."""
    if request.param == "pure":
        monkeypatch.setattr(yamlfile, "_FastLoader", yamlfile._Loader)
    return request.param


def load_error(tmp_path, text: str) -> tuple[str, InputError]:
    path = tmp_path / "policy.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(InputError) as caught:
        load_yaml_checked(path, SCHEMA, noun="policy file")
    return str(path), caught.value


def test_a_valid_file_returns_its_data_with_dates_kept_as_strings(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("name: 2025-11-25\nlimits: {timeout: 5}\n", "utf-8")
    assert load_yaml_checked(path, SCHEMA) == {"name": "2025-11-25", "limits": {"timeout": 5}}


def test_a_yaml_syntax_error_names_its_line(tmp_path):
    path, error = load_error(tmp_path, "name: ok\nlimits: 1\n  timeout: 5\nretries: 2\n")
    assert not isinstance(error, InputErrors)
    assert error.where == f"{path}:3"
    assert error.message == "YAML syntax error: mapping values are not allowed here"


def test_an_unknown_key_says_did_you_mean_and_lists_the_valid_keys(tmp_path):
    path, error = load_error(tmp_path, "name: ok\nlimits:\n  timeuot: 5\n")
    assert error.where == f"{path}:3"
    assert error.message == (
        "limits.timeuot: unknown key 'timeuot' (did you mean 'timeout'?); "
        "valid keys: timeout, retries"
    )


def test_a_wrong_type_names_the_key_path_and_the_value(tmp_path):
    path, error = load_error(tmp_path, "name: ok\nlimits:\n  retries: many\n")
    assert error.where == f"{path}:3"
    assert error.message == 'limits.retries: expected an integer, got string "many"'


def test_every_problem_is_reported_at_once_in_line_order(tmp_path):
    path, error = load_error(tmp_path, "limits:\n  timeout: soon\nextra: 1\n")
    assert isinstance(error, InputErrors)
    assert [(e.where, e.message) for e in error.errors] == [
        (f"{path}:1", "name: missing required key"),
        (f"{path}:2", 'limits.timeout: expected an integer, got string "soon"'),
        (f"{path}:3", "extra: unknown key 'extra'; valid keys: name, limits"),
    ]
    assert str(error).count("\n") == 2


def test_an_empty_file_or_a_missing_one_does_not_talk_about_profiles(tmp_path):
    path, error = load_error(tmp_path, "")
    assert (error.where, error.message) == (f"{path}:1", "(top level): the file is empty")
    with pytest.raises(InputError, match="no such policy file"):
        load_yaml_checked(tmp_path / "nowhere.yaml", SCHEMA, noun="policy file")


def test_libyaml_parses_when_pyyaml_has_it():
    fast = issubclass(BUILT_WITH, getattr(yaml, "CSafeLoader", ()))
    assert fast == bool(getattr(yaml, "__with_libyaml__", False))


def parse_problems(tmp_path, text: str) -> list[tuple[str, str]]:
    path = tmp_path / "cases.yaml"
    path.write_text(text, "utf-8")
    _, errors = parse_yaml(path, "cases file")
    return [(e.where.removeprefix(str(path)), e.message) for e in errors]


def test_every_key_keeps_its_line_and_a_duplicate_key_is_named(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_text("a: 1\nb:\n  - x\n  - c: 2\na: 3\n", "utf-8")
    src, errors = parse_yaml(path, "cases file")
    assert src.data == {"a": 3, "b": ["x", {"c": 2}]}
    assert src.lines[("b", 1, "c")] == 4
    assert src.lines[("a",)] == 5
    assert [(e.where, e.message) for e in errors] == [
        (f"{path}:5", "a: duplicate key (also at line 1); YAML keeps only the last")
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: ok\nb: x\x00y\n", (":2", "holds a NUL character; a cases file is text")),
        ("a: 1" + "2" * 10_001 + "\n", (":1", "holds an integer of more than 10,000 digits")),
        ("cases: " + "[" * 1100 + "]" * 1100 + "\n", (":1", "nested too deeply to read")),
        (
            "a: &a [*a]\n",
            (":1", "a[0]: a YAML alias refers to itself; a cases file must be a tree"),
        ),
        ("a: !!python/object:os.system x\n", (":1", "YAML tags are not allowed")),
        ("a: [1, 2\nb: 3\n", (":2", "YAML syntax error:")),
    ],
    ids=["nul", "huge-int", "too-deep", "self-alias", "tag", "unclosed"],
)
def test_bad_input_is_one_error_naming_the_line(tmp_path, text, problem):
    [(where, message)] = parse_problems(tmp_path, text)
    assert where == problem[0] and message.startswith(problem[1]), (where, message)


def test_an_alias_bomb_is_refused_before_it_is_expanded(tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    [(where, message)] = parse_problems(tmp_path, "\n".join(lines) + "\n")
    assert where == ":1"
    assert "with its YAML aliases expanded" in message and f"at most {MAX_VALUES}" in message
