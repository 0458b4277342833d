"""What the modelled server reads of a call's arguments, asked again after a caller changed
them in place, is read from what they hold now.

``unlisted`` and ``sorted_words`` keep their answer for the last objects (the modelled server
and ``deliver.unread`` or the replay's memo ask about the very same ones); since 6da3240 a hit
was checked by identity only. A listed schema is never changed in place (every compiled check
and fingerprint is kept by its object). The saving is counted in test_schema_server_reads_once."""

from __future__ import annotations

import json

from mcp_matrix.run.call_servers import SchemaServer, sorted_words, unlisted


def tool() -> dict:
    return {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {}}}}


def test_a_key_added_in_place_is_unlisted():
    listed, arguments = tool(), {"a": 1}
    assert unlisted(listed, arguments) == ({"a": 1}, ())
    arguments["surprise"] = 1
    assert unlisted(listed, arguments) == ({"a": 1}, ("/surprise",))  # fails before: ()


def test_after_the_server_read_them_too():
    listed, arguments = tool(), {"a": 1}
    assert SchemaServer({"t": listed}).answer("t", arguments).ok
    arguments["surprise"] = 1
    assert unlisted(listed, arguments) == ({"a": 1}, ("/surprise",))  # fails before: ()


def test_words_of_arguments_changed_in_place_are_theirs():
    arguments: dict = {"a": 1}
    assert sorted_words(arguments) == '{"a": 1}'
    arguments["a"] = True
    assert sorted_words(arguments) == json.dumps(arguments, sort_keys=True)  # before: 1
