"""load_yaml_checked: any YAML input file is reported as FILE:LINE and a key path, in words."""

from __future__ import annotations

import pytest

from matrix.errors import InputError, InputErrors
from matrix.yamlfile import load_yaml_checked

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
