"""A recorded-calls line is parsed with the one strict decoder made at import, not a new one.

Lines come as bytes (``calls_file.iter_calls`` reads the file in binary); ``json.loads`` of
bytes with hooks built a decoder and its scanner, and sniffed the encoding, for every line.
Counted (decoders built), never timed; the calls and every refusal are as before."""

from __future__ import annotations

import json

import pytest

from mcp_matrix.core.errors import InputError
from mcp_matrix.evolution.calls_file import parse_line


def counting_decoders(monkeypatch) -> list:
    built: list = []
    real = json.JSONDecoder

    class Counted(real):  # type: ignore[misc,valid-type]
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(json, "JSONDecoder", Counted)
    return built


def line(i: int) -> bytes:
    doc = {"id": f"c{i}", "tool": "t", "arguments": {"x": i / 3, "s": "é"}}
    return (json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8")


def test_byte_lines_build_no_decoder(monkeypatch):
    built = counting_decoders(monkeypatch)
    calls = [parse_line(line(i), "calls.jsonl", i) for i in range(1, 51)]
    assert [c.arguments for c in calls] == [{"x": i / 3, "s": "é"} for i in range(1, 51)]
    assert built == []  # fails before: 50, one a line


A = b'{"id": "a", "tool": "t", "arguments": '
NOT_A_NUMBER = "which is not a JSON number (RFC 8259 section 6): no JSON output could hold it"


@pytest.mark.parametrize(
    "raw, outcome",
    [  # each as json.loads of the bytes with the hooks gave it (read off the code before)
        (b"\xef\xbb\xbf" + A + b"{}}\n", {}),
        (A + b'{"s": "\xff"}}\n', "calls.jsonl:7: not UTF-8 text: invalid start byte"),
        (A + b'{"n": NaN}}\n', f"calls.jsonl:7: holds NaN, {NOT_A_NUMBER}"),
        (A + b'{"n": -Infinity}}\n', f"calls.jsonl:7: holds -Infinity, {NOT_A_NUMBER}"),
        (
            A + b'{"n": 1e999}}\n',
            (
                "calls.jsonl:7: holds the number 1e999, beyond a double's range (read as "
                "Infinity): no JSON output could hold it"
            ),
        ),
        (A + b'{"s": "\xed\xa0\x80"}}\n', {"s": "\ud800"}),  # surrogates pass, as before
        ((A + b"{}}").decode().encode("utf-16"), {}),
        ((A + b"{}}").decode().encode("utf-16-le"), {}),
        (A + b'{"x": 1.5}', "calls.jsonl:7: not valid JSON: Expecting ',' delimiter (column 49)"),
        (A + b'{"x": 1}} x', "calls.jsonl:7: not valid JSON: Extra data (column 49)"),
        (b"[]", "calls.jsonl:7: expected a JSON object (one recorded call), got an array"),
        (
            b"\x00\x00\x00{",
            (
                "calls.jsonl:7: not valid JSON: Expecting property name enclosed in double "
                "quotes (column 2)"
            ),
        ),
        (b'{"', "calls.jsonl:7: not valid JSON: Unterminated string starting at (column 2)"),
    ],
)
def test_every_line_parses_or_is_refused_as_before(raw, outcome):
    try:
        got: object = parse_line(raw, "calls.jsonl", 7).arguments
    except InputError as exc:
        got = str(exc)
    assert got == outcome
