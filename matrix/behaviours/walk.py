"""Iterative walks over JSON Schemas, safe on hostile input.

Server schemas can be anything: ``true``, a string, 5,000 levels of nesting, ``$ref``
cycles, inlining that grows exponentially. Nothing here recurses on the schema and every
walk stops after ``MAX_NODES`` nodes, so a behaviour built on it never raises
``RecursionError`` and never runs away; a walk that stopped early says so (``complete``)
and the behaviour turns that into a finding.

``rewrite`` is copy-on-write: subtrees a rewrite did not touch keep their identity, so the
loss diff in :mod:`matrix.behaviours.rewrite` skips them and unchanged schemas come back as
the very object that went in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

MAX_NODES = 20_000  # per walk; far above any real tool schema (hundreds of nodes)


@dataclass(frozen=True)
class Walk:
    """Which keys of a schema node hold subschemas: the positions a client visits.

    ``maps``: objects of subschemas (``properties``); ``lists``: arrays of subschemas
    (``anyOf``); ``singles``: one subschema (``not``); ``items``: ``items`` as a schema or a
    list of schemas. ``every``: every value of every dict and list (Gemini CLI's transform
    recurses into *every* key, enum and default values included).
    """

    maps: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    singles: tuple[str, ...] = ()
    items: bool = False
    every: bool = False


ROOT = Walk()
ALL = Walk(
    maps=(
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependencies",
    ),
    lists=("anyOf", "oneOf", "allOf", "prefixItems"),
    singles=(
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
    ),
    items=True,
)
# Copilot Chat's walk (toolSchemaNormalizer.ts, client-quirks.md E.5): $defs NOT visited.
COPILOT = Walk(
    maps=("properties", "patternProperties", "dependencies"),
    lists=("anyOf", "allOf", "oneOf"),
    singles=("additionalProperties", "not", "if", "then", "else", "contains"),
    items=True,
)
EVERY = Walk(every=True)

WALKS = {"root": ROOT, "all": ALL, "copilot": COPILOT, "every": EVERY}


def escape(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


class Node:
    """One visited position: the value there, where it is, and what the visit carries down."""

    __slots__ = ("carry", "depth", "final", "kids", "new", "parent", "slot", "value")

    def __init__(self, value: Any, parent: Node | None, slot: tuple, carry: Any) -> None:
        self.value = value
        self.new = value
        self.parent = parent
        self.slot = slot  # (key,) or (key, index_or_name) relative to the parent's value
        self.depth = 0 if parent is None else parent.depth + 1
        self.carry = carry  # state inherited from the parent (e.g. the active $ref chain)
        self.kids: list[Node] = []
        self.final = value

    @property
    def is_root(self) -> bool:
        return self.parent is None

    @property
    def key(self) -> Any:
        """The last token of the pointer (a property name, an index, a keyword)."""
        return self.slot[-1] if self.slot else None

    @property
    def container(self) -> Any:
        """The keyword this node sits under (``properties``, ``items``, ``anyOf`` ...)."""
        return self.slot[0] if self.slot else None

    @property
    def pointer(self) -> str:
        """JSON pointer from the schema root, built lazily (deep schemas have long pointers)."""
        tokens = []
        node: Node | None = self
        while node is not None and node.parent is not None:
            tokens.extend(reversed(node.slot))
            node = node.parent
        return "".join("/" + escape(t) for t in reversed(tokens))


def slots(value: Any, walk: Walk) -> Iterator[tuple[tuple, Any]]:
    """The subschema positions of ``value`` under ``walk``: ``(slot, child)`` pairs."""
    if walk.every:
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, (dict, list)):
                    yield (k,), v
        elif isinstance(value, list):
            for i, v in enumerate(value):
                if isinstance(v, (dict, list)):
                    yield (i,), v
        return
    if not isinstance(value, dict):
        return
    for key in walk.maps:
        m = value.get(key)
        if isinstance(m, dict):
            for name, sub in m.items():
                if key == "dependencies" and not isinstance(sub, (dict, bool)):
                    continue  # property dependencies (arrays of names) are not schemas
                yield (key, name), sub
    for key in walk.lists:
        seq = value.get(key)
        if isinstance(seq, list):
            for i, sub in enumerate(seq):
                yield (key, i), sub
    for key in walk.singles:
        if key in value:
            yield (key,), value[key]
    if walk.items and "items" in value:
        items = value["items"]
        if isinstance(items, list):
            for i, sub in enumerate(items):
                yield ("items", i), sub
        else:
            yield ("items",), items


@dataclass
class Result:
    schema: Any
    complete: bool = True  # False: MAX_NODES reached, the rest was left as it was
    nodes: int = 0


def rewrite(
    schema: Any,
    fn: Callable[[Any, Node], Any],
    walk: Walk = ALL,
    carry: Any = None,
    limit: int = MAX_NODES,
) -> Result:
    """Apply ``fn(value, node)`` to every position of ``schema`` top-down, copy-on-write.

    ``fn`` returns the replacement for ``value`` (or ``value`` itself); the children of
    the *replacement* are visited next. ``fn`` must not mutate ``value``. ``node.carry``
    may be reassigned by ``fn``; children start from their parent's carry.
    """
    root = Node(schema, None, (), carry)
    order = [root]
    stack = [root]
    complete = True
    while stack:
        node = stack.pop()
        if len(order) > limit:
            complete = False
            continue
        node.new = fn(node.value, node)
        for slot, child in slots(node.new, walk):
            kid = Node(child, node, slot, node.carry)
            node.kids.append(kid)
            order.append(kid)
        stack.extend(reversed(node.kids))
    for node in reversed(order):  # children were created after their parents
        new = node.new
        changed = [k for k in node.kids if k.final is not k.value]
        if changed:
            new = _copy(new)
            copied: set = set()
            for kid in changed:
                if len(kid.slot) == 1:
                    new[kid.slot[0]] = kid.final
                else:
                    key, sub = kid.slot
                    if key not in copied:
                        new[key] = _copy(new[key])
                        copied.add(key)
                    new[key][sub] = kid.final
        node.final = new
    return Result(root.final, complete, len(order))


def _copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value)


def visit(schema: Any, walk: Walk = ALL, limit: int = MAX_NODES) -> Iterator[Node]:
    """Every position of ``schema`` under ``walk``, top-down (read-only, no copies)."""
    root = Node(schema, None, (), None)
    stack = [root]
    seen = 0
    while stack and seen < limit:
        node = stack.pop()
        seen += 1
        yield node
        kids = [Node(child, node, slot, None) for slot, child in slots(node.value, walk)]
        stack.extend(reversed(kids))


def depth(schema: Any, limit: int = MAX_NODES) -> int:
    """How deeply ``schema`` nests dicts and lists (iterative; counts ``limit`` nodes at most)."""
    deepest = 0
    stack = [(schema, 0)]
    seen = 0
    while stack and seen < limit:
        value, d = stack.pop()
        seen += 1
        deepest = max(deepest, d)
        if isinstance(value, dict):
            stack.extend((v, d + 1) for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend((v, d + 1) for v in value if isinstance(v, (dict, list)))
    return deepest


def resolve_pointer(root: Any, ref: Any) -> tuple[bool, Any]:
    """Resolve a local ``#/...`` reference against ``root``: ``(found, target)``."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return False, None
    target = root
    path = ref[1:]
    if path == "":
        return True, root
    if not path.startswith("/"):
        return False, None  # an anchor ("#foo"): not resolved by any client in the catalogue
    for raw in path[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return False, None
    return True, target


def defs_ref_name(ref: Any) -> str | None:
    """``name`` for ``#/$defs/name`` or ``#/definitions/name`` (one level, ~0/~1 decoded)."""
    if not isinstance(ref, str):
        return None
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            name = ref[len(prefix) :]
            if name and "/" not in name:
                return name.replace("~1", "/").replace("~0", "~")
    return None


def dangling_refs(schema: Any, walk: Walk = ALL, limit: int = 20) -> list[tuple[str, str]]:
    """``(pointer, ref)`` of up to ``limit`` local ``$ref``s not resolving in ``schema``."""
    out: list[tuple[str, str]] = []
    for node in visit(schema, walk):
        if len(out) >= limit:
            break
        value = node.value
        if isinstance(value, dict) and isinstance(value.get("$ref"), str):
            ref = value["$ref"]
            if ref.startswith("#") and not resolve_pointer(schema, ref)[0]:
                out.append((node.pointer + "/$ref", ref))
    return out
