"""A JSON object as a frozen value, read and written by one generic codec (``JsonRecord``).

Every typed value of our documents' streams (the results stream's events and the values inside
them, ``replay --results``'s events) is a ``JsonRecord``: its keys are its fields, and its reader
and writer are generated once from them (``_codec``), so no kind has a ``to_json``/``from_json``
of its own and a stream read and written again is the same bytes.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mcp_matrix.core.jsontypes import JSON

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11

# A field's metadata: its key is written only while the field is not None.
OMIT = {"omit_if_none": True}
# A field's metadata: the value holds it but its JSON has no such key (never written; read as
# its default): what a reader of the typed value needs and the JSON shape does not carry.
HELD = {"held": True}


def _tuples(value: JSON) -> JSON:
    """A JSON list as the tuple a frozen field holds (lists inside lists too; objects stay JSON)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _lists(value: object) -> JSON:
    """A frozen field's value as JSON: tuples as lists, nested values as their objects."""
    if isinstance(value, tuple):
        return [_lists(v) for v in value]
    if isinstance(value, JsonRecord):
        return value.to_json()
    return value  # type: ignore[return-value]  # a JSON field holds JSON


@dataclass(frozen=True, slots=True)
class JsonRecord:
    """A JSON object as a frozen value: its keys are its fields, written in ``HEAD`` order and
    then in declaration order, a field with ``OMIT`` left out while it is None (a key the file
    did not have stays absent, so a stream read and written again is the same bytes). A field
    whose type is a ``JsonRecord`` (or a tuple of them) is built from its JSON object, when read
    and when constructed with one."""

    HEAD: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for name, nested, _ in _codec(type(self)).nested:
            value = getattr(self, name)
            if value is None or type(value) is nested:
                continue
            if type(value) is tuple and all(type(v) is nested for v in value):
                continue  # already typed (a producer's values): nothing to build
            object.__setattr__(self, name, _nest(nested, value))

    def to_json(self) -> dict[str, JSON]:
        """The value as its JSON object (an event's with its ``event`` key first)."""
        codec = _CODECS.get(type(self)) or _codec(type(self))
        return codec.write(self)

    @classmethod
    def build(
        cls, data: Mapping[str, JSON], strict: bool = False, memo: Memo | None = None
    ) -> Self:
        """The typed value of JSON already checked against the schema (the one reader every kind
        shares: each field from its key, lists as tuples, nested objects as their values, a
        missing key its documented default). ``strict``: a key that is no field is a TypeError
        instead of being left out. ``memo``: one typed value per JSON object, for a reader that
        shares equal objects across lines (``mcp_matrix.run.results.read_typed``)."""
        codec = _CODECS.get(cls) or _codec(cls)
        if strict and not codec.names.issuperset(data.keys() - {"event"}):
            unknown = sorted(data.keys() - codec.names - {"event"})
            raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)}")
        try:
            return codec.read(data, memo)  # type: ignore[return-value]  # the reader of cls
        except KeyError as exc:  # JSON that was not checked: as the constructor would say
            raise TypeError(f"{cls.__name__} missing required key {exc}") from None


# A reader's typed values by the id of the JSON object they were built from (the object is held
# beside its value, so the id stays its own).
Memo = dict[int, tuple[object, object]]


def _nest(nested: type[JsonRecord], value: object, memo: Memo | None = None) -> object:
    """A nested value (or a tuple of them) from its JSON, as read or as a caller passed it."""
    if type(value) is dict or isinstance(value, Mapping):
        return _one(_codec(nested).read, value, memo)
    if isinstance(value, (tuple, list)):
        return _many(_codec(nested).read, value, memo)
    return value


def _one(read: Callable[..., object], value: object, memo: Memo | None) -> object:
    """A nested object's typed value (once per JSON object with a memo); a value that is not
    a JSON object as it is (a producer's typed value)."""
    if type(value) is not dict and not isinstance(value, Mapping):
        return value
    if memo is None:
        return read(value, None)
    held = memo.get(id(value))
    if held is None:
        held = memo[id(value)] = (value, read(value, memo))
    return held[1]


def _many(read: Callable[..., object], value: object, memo: Memo | None) -> object:
    """A list of nested objects as the tuple of their typed values (once per JSON list with a
    memo: a reader shares equal lists across lines)."""
    if not value:
        return ()
    if memo is None:
        return tuple([_one(read, v, None) for v in value])  # type: ignore[attr-defined]
    held = memo.get(id(value))
    if held is None:
        typed = tuple([_one(read, v, memo) for v in value])  # type: ignore[attr-defined]
        held = memo[id(value)] = (value, typed)
    return held[1]


@dataclass(frozen=True)
class _Codec:
    """A value class's reader and writer, generated once from its fields (as dataclasses
    generates ``__init__``): a line is read and written with no loop over keys, no type test
    per key, and no ``__init__``/``__post_init__`` for JSON already checked. Measured per
    discovery line with 2 findings in benchmarks/report_json.py --per-line."""

    names: frozenset[str]  # every field
    nested: tuple[tuple[str, type[JsonRecord], bool], ...]  # (field, its class, a tuple of them)
    read: Callable[[Mapping[str, JSON], Memo | None], object]
    write: Callable[[object], dict[str, JSON]]


_CODECS: dict[type, _Codec] = {}


def _codec(cls: type[JsonRecord]) -> _Codec:
    """The reader and writer of a value class, made once (its nested fields from its type hints)."""
    known = _CODECS.get(cls)
    if known is not None:
        return known
    fields = dataclasses.fields(cls)
    hints = typing.get_type_hints(cls)
    env: dict[str, object] = {
        "_new": object.__new__,
        "_cls": cls,
        "_tuples": _tuples,
        "_lists": _lists,
        "_one": _one,
        "_many": _many,
    }
    nested = []
    read = ["def read(data, memo):", " get = data.get", " o = _new(_cls)"]
    for i, f in enumerate(fields):
        env[f"_s{i}"] = _setter(cls, f.name)
        if f.default is not dataclasses.MISSING:
            env[f"_d{i}"] = f.default
            value = f"get({f.name!r}, _d{i})"
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_f{i}"] = f.default_factory
            value = f"get({f.name!r}) if {f.name!r} in data else _f{i}()"
        else:
            value = f"data[{f.name!r}]"
        inner = _nested_class(hints[f.name])
        if inner is not None:
            many = _is_tuple(hints[f.name])
            nested.append((f.name, inner, many))
            env[f"_n{i}"], env[f"_r{i}"] = inner, _codec(inner).read
            env[f"_w_{f.name}"], env[f"_n_{f.name}"] = _codec(inner).write, inner
            convert = f"_{'many' if many else 'one'}(_r{i}, v, memo)"
            read.append(f" v = {value}")
            read.append(f" _s{i}(o, v if v is None or type(v) is _n{i} else {convert})")
        elif _writer(hints[f.name]) is None:  # a scalar: as it is
            read.append(f" _s{i}(o, {value})")
        else:  # JSON or a tuple of JSON: lists as tuples
            read.append(f" v = {value}")
            read.append(f" _s{i}(o, _tuples(v) if type(v) is list else v)")
    read.append(" return o")
    kind = getattr(cls, "KIND", "")
    write = ["def write(self):", f" out = {{'event': {kind!r}}}" if kind else " out = {}"]
    by_name = {f.name: f for f in fields}
    for name in (*cls.HEAD, *(n for n in by_name if n not in cls.HEAD)):
        if by_name[name].metadata.get("held"):
            continue
        omitted = bool(by_name[name].metadata.get("omit_if_none"))
        plain = _writer(hints[name]) is None
        value = "v" if plain else "_lists(v)"
        if f"_w_{name}" in env:  # nested values: their class's writer (else as JSON)
            one = "_w_{0}({1}) if type({1}) is _n_{0} else _lists({1})"
            many = _is_tuple(hints[name])
            value = f"[{one.format(name, 'x')} for x in v]" if many else one.format(name, "v")
        write.append(f" v = self.{name}")
        if omitted:
            write.append(f" if v is not None: out[{name!r}] = {value}")
        elif plain:
            write.append(f" out[{name!r}] = v")
        else:
            write.append(f" out[{name!r}] = None if v is None else {value}")
    write.append(" return out")
    exec("\n".join([*read, *write]), env)  # noqa: S102  # our own text, from the fields
    codec = _Codec(frozenset(by_name), tuple(nested), env["read"], env["write"])  # type: ignore[arg-type]
    _CODECS[cls] = codec
    return codec


def _setter(cls: type, name: str) -> Callable[[object, object], None]:
    """How the reader sets a field of a frozen value: its slot's own setter (no lookup by name,
    no frozen ``__setattr__``)."""
    slot = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
    if isinstance(slot, types.MemberDescriptorType):
        return slot.__set__
    return lambda value, given: object.__setattr__(value, name, given)  # a class without slots


_SCALARS = (str, int, float, bool, type(None))


def _writer(hint: object) -> Callable[[object], JSON] | None:
    """How a field of this type becomes JSON: None for a scalar (it is JSON as it is)."""
    args = typing.get_args(hint) or (hint,)
    if all(isinstance(a, type) and issubclass(a, _SCALARS) for a in args):
        return None
    return _lists


def _is_tuple(hint: object) -> bool:
    """Whether a field's type is a tuple (``tuple[C, ...]``, maybe ``| None``)."""
    return typing.get_origin(hint) is tuple or any(_is_tuple(a) for a in typing.get_args(hint))


def _nested_class(hint: object) -> type[JsonRecord] | None:
    """The value class a field's type holds: ``C``, ``tuple[C, ...]``, either or None."""
    if isinstance(hint, type) and issubclass(hint, JsonRecord):
        return hint
    for arg in typing.get_args(hint):
        found = _nested_class(arg)
        if found is not None:
            return found
    return None
