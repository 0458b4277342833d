"""Iterative walks over JSON Schemas, safe on hostile input.

Server schemas can be anything: ``true``, a string, 5,000 levels of nesting, ``$ref``
cycles, inlining that grows exponentially. Nothing here recurses on the schema and every
walk stops after ``MAX_NODES`` nodes, so a behaviour built on it never raises
``RecursionError`` and never runs away; a walk that stopped early says so (``complete``)
and the behaviour turns that into a finding.

``rewrite`` is copy-on-write: subtrees a rewrite did not touch keep their identity, so the
loss diff in :mod:`mcp_matrix.behaviours.rewrite` skips them and unchanged schemas come back as
the very object that went in.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import escape, unescape

MAX_NODES = 20_000  # per walk; far above any real tool schema (hundreds of nodes)

_MAP, _LIST, _SINGLE, _ITEMS = range(4)  # the kinds of position a key can open


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
    # key -> ((rank, kind), ...): which positions a key opens, ranked in the order above
    # (maps, lists, singles, items), so a node's children come out in that order while
    # only the node's own keys are looked at (most nodes hold none of the walk's keys).
    _plan: dict = field(init=False, repr=False, compare=False, hash=False)
    _keys: frozenset = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        plan: dict[str, list] = {}
        rank = 0
        for kind, keys in ((_MAP, self.maps), (_LIST, self.lists), (_SINGLE, self.singles)):
            for key in keys:
                plan.setdefault(key, []).append((rank, kind))
                rank += 1
        if self.items:
            plan.setdefault("items", []).append((rank, _ITEMS))
        object.__setattr__(self, "_plan", {k: tuple(v) for k, v in plan.items()})
        object.__setattr__(self, "_keys", frozenset(plan))


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
# Copilot Chat's walk (toolSchemaNormalizer.ts, docs/clients/vscode.md#copilot-chat): $defs NOT visited.
COPILOT = Walk(
    maps=("properties", "patternProperties", "dependencies"),
    lists=("anyOf", "allOf", "oneOf"),
    singles=("additionalProperties", "not", "if", "then", "else", "contains"),
    items=True,
)
EVERY = Walk(every=True)

WALKS = {"root": ROOT, "all": ALL, "copilot": COPILOT, "every": EVERY}


class Node:
    """One visited position: the value there, where it is, and what the visit carries down."""

    __slots__ = ("carry", "depth", "kids", "new", "parent", "slot", "value")

    def __init__(self, value: JSON, parent: Node | None, slot: tuple, carry: Any) -> None:
        self.value = value
        self.new = value
        self.parent = parent
        self.slot = slot  # (key,) or (key, index_or_name) relative to the parent's value
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.carry = carry  # state inherited from the parent (e.g. the active $ref chain)
        self.kids: list | None = None  # rewrite: (slot, new value) of the children that changed

    @property
    def is_root(self) -> bool:
        return self.parent is None

    @property
    def key(self) -> str | int | None:
        """The last token of the pointer (a property name, an index, a keyword)."""
        return self.slot[-1] if self.slot else None

    @property
    def container(self) -> str | None:
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


def children(value: JSON, walk: Walk) -> list[tuple[tuple, JSON]]:
    """The subschema positions of ``value`` under ``walk``: ``(slot, child)`` pairs, in order.

    Order: ``walk.maps``, ``walk.lists``, ``walk.singles`` (each in the order given), then
    ``items``. Only the keys ``value`` holds are looked at.
    """
    if walk.every:
        if isinstance(value, dict):
            return [((k,), v) for k, v in value.items() if isinstance(v, (dict, list))]
        if isinstance(value, list):
            return [((i,), v) for i, v in enumerate(value) if isinstance(v, (dict, list))]
        return []
    if not isinstance(value, dict):
        return []
    plan = walk._plan
    hits = [(rank, kind, key) for key in value if key in plan for rank, kind in plan[key]]
    if not hits:
        return []
    if len(hits) > 1:
        hits.sort()  # ranks are distinct: keys are never compared
    out: list[tuple[tuple, JSON]] = []
    for _, kind, key in hits:
        sub = value[key]
        if kind == _MAP:
            if isinstance(sub, dict):
                if key == "dependencies":  # property dependencies (arrays of names) are not schemas
                    out.extend(((key, n), v) for n, v in sub.items() if isinstance(v, (dict, bool)))
                else:
                    out.extend(((key, n), v) for n, v in sub.items())
        elif kind == _LIST:
            if isinstance(sub, list):
                out.extend(((key, i), v) for i, v in enumerate(sub))
        elif kind == _SINGLE:
            out.append(((key,), sub))
        elif isinstance(sub, list):  # items, tuple form
            out.extend((("items", i), v) for i, v in enumerate(sub))
        else:
            out.append((("items",), sub))
    return out


def slots(value: JSON, walk: Walk) -> Iterator[tuple[tuple, JSON]]:
    """The subschema positions of ``value`` under ``walk``: ``(slot, child)`` pairs."""
    return iter(children(value, walk))


@dataclass
class Result:
    schema: Any
    complete: bool = True  # False: MAX_NODES reached, the rest was left as it was
    nodes: int = 0


def rewrite(
    schema: JSON,
    fn: Callable[[JSON, Node], JSON],
    walk: Walk = ALL,
    carry: object = None,
    limit: int = MAX_NODES,
) -> Result:
    """Apply ``fn(value, node)`` to every position of ``schema`` top-down, copy-on-write.

    ``fn`` returns the replacement for ``value`` (or ``value`` itself); the children of
    the *replacement* are visited next. ``fn`` must not mutate ``value``. ``node.carry``
    may be reassigned by ``fn``; children start from their parent's carry.

    Only the positions ``fn`` replaced and their ancestors are copied, deepest first: a
    walk that changes nothing allocates no container and returns ``schema`` itself.
    """
    root = Node(schema, None, (), carry)
    stack = [root]
    count = 1  # nodes created (visited or waiting)
    complete = True
    changed: list[Node] = []
    every = walk.every
    keys = walk._keys
    while stack:
        node = stack.pop()
        if count > limit:
            complete = False
            break
        value = node.value
        new = fn(value, node)
        if new is not value:
            node.new = new
            changed.append(node)
        if every or (isinstance(new, dict) and not keys.isdisjoint(new)):
            kids = children(new, walk)
            if kids:
                count += len(kids)
                carried = node.carry
                stack.extend([Node(child, node, slot, carried) for slot, child in reversed(kids)])
    if not changed:
        return Result(schema, complete, count)
    # Rebuild bottom-up: each level's changed nodes are set into copies of their parents.
    levels: dict[int, list[Node]] = {}
    for node in changed:
        if node.kids is None:
            node.kids = []
            levels.setdefault(node.depth, []).append(node)
    for d in range(max(levels), 0, -1):
        for node in levels.get(d, ()):
            final = _apply(node.new, node.kids) if node.kids else node.new
            parent = node.parent
            assert parent is not None  # only the root (depth 0) has none
            if parent.kids is None:
                parent.kids = []
                levels.setdefault(d - 1, []).append(parent)
            parent.kids.append((node.slot, final))
    final = _apply(root.new, root.kids) if root.kids else root.new
    return Result(final, complete, count)


def _apply(value: JSON, changes: list[tuple[tuple, JSON]]) -> JSON:
    """A copy of ``value`` with the changed children set (nested containers copied once)."""
    new = _copy(value)
    copied: set = set()
    for slot, final in changes:
        if len(slot) == 1:
            new[slot[0]] = final
        else:
            key, sub = slot
            if key not in copied:
                new[key] = _copy(new[key])
                copied.add(key)
            new[key][sub] = final
    return new


def same(new: JSON, old: JSON) -> bool:
    """Whether ``new`` says exactly what ``old`` says: the same keys in the same order, each
    value the identical object (or a list of identical items or equal strings). A rewrite that rebuilt a node
    without changing it can then hand back ``old`` itself, keeping the copy-on-write promise
    (and sparing the loss diff a subtree)."""
    if new is old:
        return True
    if type(new) is not dict or type(old) is not dict or len(new) != len(old):
        return False
    for (k, x), (j, y) in zip(new.items(), old.items()):
        if k != j:
            return False
        if x is y:
            continue
        if not (type(x) is list and type(y) is list and len(x) == len(y)):
            return False
        if not all(a is b or (type(a) is str and type(b) is str and a == b) for a, b in zip(x, y)):
            return False
    return True


def json_copy(value: JSON) -> Any:
    """A deep copy of a JSON value: new dicts and lists, the same leaves (strings and numbers
    are immutable). A million-value enum copies in about 0.1 s where ``copy.deepcopy`` took 4 s.
    Recursive: callers bound the depth first."""
    if type(value) is dict:
        return {k: v if type(v) not in _CONTAINERS else json_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [v if type(v) not in _CONTAINERS else json_copy(v) for v in value]
    return copy.deepcopy(value)


_CONTAINERS = (dict, list)


def _copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value)


def visit(schema: JSON, walk: Walk = ALL, limit: int = MAX_NODES) -> Iterator[Node]:
    """Every position of ``schema`` under ``walk``, top-down (read-only, no copies)."""
    root = Node(schema, None, (), None)
    stack = [root]
    seen = 0
    every = walk.every
    keys = walk._keys
    while stack and seen < limit:
        node = stack.pop()
        seen += 1
        yield node
        value = node.value
        if every or (isinstance(value, dict) and not keys.isdisjoint(value)):
            kids = children(value, walk)
            if kids:
                stack.extend([Node(child, node, slot, None) for slot, child in reversed(kids)])


def some_dict(schema: JSON, test: Callable[[dict], bool], limit: int = MAX_NODES) -> bool:
    """Whether ``test`` holds for some object anywhere in ``schema``: every value of every
    object and array, a superset of what any walk visits, so False means no walk can meet
    one. A plain scan (no Node, no pointer): a cheap pre-check before a walk. True also
    when ``schema`` holds more than ``limit`` containers (too big to tell)."""
    stack = [schema]
    seen = 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(value, dict):
            if test(value):
                return True
            for v in value.values():
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, (dict, list)):
                    stack.append(v)
    return False


def depth(schema: JSON, limit: int = MAX_NODES) -> int:
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


def resolve_pointer(root: JSON, ref: JSON) -> tuple[bool, JSON]:
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
        token = unescape(raw)
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return False, None
    return True, target


def defs_ref_name(ref: JSON) -> str | None:
    """``name`` for ``#/$defs/name`` or ``#/definitions/name`` (one level, ~0/~1 decoded)."""
    if not isinstance(ref, str):
        return None
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            name = ref[len(prefix) :]
            if name and "/" not in name:
                return unescape(name)
    return None


def dangling_refs(schema: JSON, walk: Walk = ALL, limit: int = 20) -> list[tuple[str, str]]:
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
