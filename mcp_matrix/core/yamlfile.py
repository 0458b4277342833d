"""User YAML files checked against a JSON Schema, with errors as ``FILE:LINE`` and a key path.

Every YAML input of mcp-matrix (client profiles, cases files, release policies) is read here,
so every one reports mistakes the same way: ``where`` is ``FILE:LINE`` and the message starts
with the key path (``discovery[2].with.limit: expected an integer, got string "64"``). This is
the one place that maps YAML and JSON Schema errors to ``InputError``.

- ``parse_yaml`` reads a file keeping the line of every key; a syntax error carries its line.
- ``schema_errors`` validates (part of) the data and words each problem with ``describe_error``
  (``core.schema_words``).
- ``sort_errors`` orders problems by file and line, dropping duplicates.
- ``load_yaml_checked`` does all three for a file that only needs its schema (``load_yaml_source``
  keeps the lines too, for a check that can only be made later).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from mcp_matrix.core.errors import (
    TOO_LONG_NUMBER,
    InputError,
    InputErrors,
    check_input_file,
    long_number_line,
)
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.schema_words import KeyPath, describe_error

__all__ = [
    "YamlSource",
    "key_path",
    "load_yaml_checked",
    "load_yaml_source",
    "parse_yaml",
    "schema_errors",
    "sort_errors",
]

# Far above any real profile, cases file or policy (hundreds of values); a file over it is
# refused before anything walks it: YAML aliases can expand a few lines into billions of values.
MAX_VALUES = 100_000


_NO_TIMESTAMPS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Loader(yaml.SafeLoader):
    """A SafeLoader that keeps dates as strings: ``2025-11-25`` is a protocol version."""

    yaml_implicit_resolvers = _NO_TIMESTAMPS


# libyaml's parser (when PyYAML was built with it) reads a file about 30 times faster; only the
# parsing moves to C: tags, dates, aliases and the checks below stay in the same Python code.
# A file it refuses is parsed again by the pure loader, whose error messages (and limits) are
# the documented ones, so what a user reads about a broken file does not depend on the build.
_FastLoader: type[yaml.SafeLoader | yaml.CSafeLoader] = _Loader
if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(yaml.CSafeLoader):
        """``_Loader`` with libyaml's parser."""

        yaml_implicit_resolvers = _NO_TIMESTAMPS

    _FastLoader = _CLoader


def key_path(path: Iterable[JSON]) -> str:
    """``("discovery", 2, "with", "limit")`` -> ``discovery[2].with.limit``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part))}]"
    return out or "(top level)"


@dataclass
class YamlSource:
    """One parsed YAML file: its data and the line of every key path in it."""

    path: Path
    data: Any = None
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line(self, path: KeyPath) -> int:
        """The line of ``path``, or of its nearest ancestor that has one (1 at worst)."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1

    def error(self, path: KeyPath, message: str) -> InputError:
        """An ``InputError`` at ``FILE:LINE`` of ``path``, its message led by the key path."""
        return InputError(f"{key_path(path)}: {message}", where=f"{self.path}:{self.line(path)}")

    def get(self, key: str, default: JSON = None) -> Any:
        """A top-level key of the data; ``default`` when it is missing or null."""
        value = self.data.get(key)
        return default if value is None else value


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """How many values ``node`` stands for with every alias expanded (each node counted once)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    memo[id(node)] = 1  # an alias to itself counts once; _record_lines reports it
    size = 1
    if isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(item, memo) for item in node.value)
    memo[id(node)] = size
    return size


def _record_lines(
    node: yaml.Node, path: KeyPath, src: YamlSource, errors: list, busy: set, noun: str
) -> None:
    """Note the line of every key and item under ``node``; flag duplicate keys."""
    src.lines.setdefault(path, node.start_mark.line + 1)
    if id(node) in busy:
        errors.append(src.error(path, f"a YAML alias refers to itself; {_a(noun)} must be a tree"))
        return
    busy.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue
            key, line = key_node.value, key_node.start_mark.line + 1
            src.lines[path + (key,)] = line  # the last one is the one YAML keeps
            if key in seen:
                errors.append(
                    src.error(
                        path + (key,),
                        f"duplicate key (also at line {seen[key]}); YAML keeps only the last",
                    )
                )
            seen[key] = line
            _record_lines(value_node, path + (key,), src, errors, busy, noun)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, path + (index,), src, errors, busy, noun)
    elif node.tag == "tag:yaml.org,2002:float" and not _finite(node.value):
        errors.append(src.error(path, f"{node.value} is not a number JSON can hold; quote text"))
    busy.discard(id(node))


def _finite(value: str) -> bool:
    """Whether a YAML float is a JSON number: ``.nan``, ``.inf`` and ``1.0e+999`` are not (a case
    sending one wrote ``NaN`` into the results stream, which no JSON reader, ours too, reads)."""
    try:
        return math.isfinite(float(value.replace("_", "")))
    except ValueError:  # ".inf", ".NaN" (which float() does not read), "1:30.5"
        return not re.fullmatch(r"[-+]?\.(inf|nan)", value, re.IGNORECASE)


def parse_yaml(
    path: Path, noun: str = "file", *, empty: str = "the file is empty"
) -> tuple[YamlSource, list[InputError]]:
    """Read and parse one YAML file, keeping the line of every key.

    Returns the source and its problems (none when it parsed). ``noun`` names the kind of file
    in messages ("profile", "cases file"); ``empty`` is the message for an empty document.
    """
    src = YamlSource(path)
    text = _read(path, noun)
    if isinstance(text, InputError):
        return src, [text]
    errors: list[InputError] = []
    failed = _parse(text, src, errors, noun)
    if failed is not None:
        return src, [failed]
    if src.data is None:
        errors.append(src.error((), empty))
    return src, errors


def _read(path: Path, noun: str) -> str | InputError:
    """The file's text, or why it cannot be YAML text at all."""
    try:
        check_input_file(path, noun)
    except InputError as exc:
        return exc
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return InputError(f"cannot read the {noun}: {exc}", where=str(path))
    if "\x00" in text:  # YAML refuses it anywhere; say where, not at which character offset
        line = text.count("\n", 0, text.index("\x00")) + 1
        return InputError(f"holds a NUL character; {_a(noun)} is text", where=f"{path}:{line}")
    return text


def _parse(text: str, src: YamlSource, errors: list[InputError], noun: str) -> InputError | None:
    """Parse ``text`` into ``src`` (data and lines; duplicate keys go to ``errors``), or the one
    problem that stopped it."""
    path = src.path
    loader = _FastLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.YAMLError as exc:
            if _FastLoader is _Loader:
                raise
            if "maximum nesting depth" in str(exc):  # libyaml's limit (1,000 levels)
                raise RecursionError from exc
            loader.dispose()
            loader = _Loader(text)
            node = loader.get_single_node()
        if node is not None:
            size = _expanded_size(node, {})
            if size > MAX_VALUES:
                return InputError(
                    f"holds {size} values with its YAML aliases expanded; "
                    f"{_a(noun)} may hold at most {MAX_VALUES}",
                    where=f"{path}:1",
                )
            _record_lines(node, (), src, errors, set(), noun)
            src.data = loader.construct_document(node)
    except RecursionError:
        return InputError(
            f"nested too deeply to read; {_a(noun)} is a shallow tree", where=f"{path}:1"
        )
    except yaml.MarkedYAMLError as exc:
        return _syntax_error(exc, text, path, noun)
    except yaml.YAMLError as exc:
        return InputError(f"YAML syntax error: {exc}", where=f"{path}:1")
    except ValueError:  # an integer over mcp_matrix.INT_DIGITS digits
        return InputError(TOO_LONG_NUMBER, where=f"{path}:{long_number_line(text) or 1}")
    finally:
        loader.dispose()
    return None


def _syntax_error(exc: yaml.MarkedYAMLError, text: str, path: Path, noun: str) -> InputError:
    """A YAML error at its line (within the file), with its context; a tag is refused as such."""
    mark = exc.problem_mark or exc.context_mark
    line = min(mark.line + 1, len(text.splitlines()) or 1) if mark else 1
    message = f"YAML syntax error: {exc.problem or exc}"
    if isinstance(exc, yaml.constructor.ConstructorError):
        message = f"YAML tags are not allowed, {_a(noun)} is data only: {exc.problem}"
    elif exc.context:
        message += f" ({exc.context}"
        message += f" at line {exc.context_mark.line + 1})" if exc.context_mark else ")"
    return InputError(message, where=f"{path}:{line}")


def schema_errors(
    src: YamlSource,
    validator: Draft202012Validator,
    data: JSON,
    base: KeyPath = (),
    noun: str = "key",
    owner: str = "",
) -> list[InputError]:
    """Every problem of ``data`` (found at ``base`` in ``src``) against ``validator``, in words."""
    found = []
    for error in validator.iter_errors(data):
        for path, message in describe_error(error, noun, owner):
            found.append(src.error(base + path, message))
    return found


def sort_errors(errors: Iterable[InputError]) -> list[InputError]:
    """The distinct errors in file and line order (then by message)."""
    unique = {str(e): e for e in errors}

    def order(e: InputError) -> tuple:
        file, _, line = e.where.rpartition(":")
        return (file, int(line), e.message) if line.isdigit() else (e.where, 0, e.message)

    return sorted(unique.values(), key=order)


def load_yaml_source(path: Path, schema: dict, noun: str = "file") -> YamlSource:
    """Parse ``path`` and validate it against ``schema``; the source (data and the line of every
    key, for errors found later), or an ``InputError``.

    One problem is raised as itself, several as one ``InputErrors`` listing each in line order.
    """
    if not path.exists():
        raise InputError(f"no such {noun}", where=str(path))
    src, errors = parse_yaml(path, noun)
    if not errors:
        errors = schema_errors(src, Draft202012Validator(schema), src.data)
    if errors:
        errors = sort_errors(errors)
        if len(errors) == 1:
            raise errors[0]
        raise InputErrors(errors)
    return src


def load_yaml_checked(path: Path, schema: dict, noun: str = "file") -> Any:
    """``load_yaml_source``'s data."""
    return load_yaml_source(path, schema, noun).data
