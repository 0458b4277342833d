"""The type of a JSON value, so an annotation says "JSON" where it said ``Any``.

``JSON`` is what ``json.loads`` returns and ``json.dumps`` takes (tuples too: a frozen field
holds a JSON list as a tuple); ``JSONObject`` a JSON object as read. Both are read-only views
(``Mapping``, ``Sequence``), so a ``dict[str, str]`` is a ``JSONObject`` without a cast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, Union

# Union (not ``|``): the alias is recursive, so it names itself as a string, which ``|`` cannot
# join at run time (``typing.get_type_hints`` evaluates it: core/json_record.py reads field types).
JSON: TypeAlias = Union[None, bool, int, float, str, Sequence["JSON"], Mapping[str, "JSON"]]  # noqa: UP007
JSONObject: TypeAlias = Mapping[str, JSON]

__all__ = ["JSON", "JSONObject"]
