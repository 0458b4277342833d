"""Candidate edits for one finding: the smallest schema changes that could remove it.

Each candidate is only a proposal: ``mcp_matrix.fix.search`` keeps it when the re-run shows the
loss gone in the required clients and no cell anywhere worse. Which finding gets which kind of
edit follows the finding codes the behaviours emit (and the advice the project gives for them,
``mcp_matrix.report.advice``); nothing here knows a client.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from mcp_matrix.evolution.guidance import Context, advice
from mcp_matrix.evolution.model import Change
from mcp_matrix.fix.model import Edit, Rename, ServerItem
from mcp_matrix.fix.patch import escape, unescape

COMBINATORS = ("anyOf", "oneOf", "allOf")
ROOT_CODES = frozenset(
    {
        "root-combinator",
        "root-combinator-described",
        "root-combinator-deleted",
        "root-combinator-collapsed",
        "root-combinator-flattened",
    }
)
OBJECT_ROOT_CODES = frozenset(
    {"root-type-added", "root-replaced", "no-parameters", "schema-unparsable", "parameters-dropped"}
)
NAME_CODES = frozenset(
    {
        "name-too-long",
        "name-invalid",
        "name-shortened",
        "name-sanitised",
        "name-collision",
        "name-collision-renamed",
    }
)
KEYWORD_CODES = frozenset(
    {"removed-by-client", "changed-by-client", "keyword-refused", "schema-incompatible"}
)
ITEMS_CODES = frozenset({"array-without-items", "items-added"})
NULLABLE_CODES = frozenset({"nullable-rewritten", "type-changed", "type-defaulted"})
DESCRIPTION_CODES = frozenset({"description-truncated"})
LIST_CODES = frozenset({"list-rejected", "invalid-json-schema", "converter-error"})
REF_CODES = frozenset({"dangling-ref", "ref-unresolved", "type-defaulted"})

# A keyword a client strips, as the sentence the description says instead.
PROSE = {
    "minimum": "at least {}",
    "maximum": "at most {}",
    "exclusiveMinimum": "greater than {}",
    "exclusiveMaximum": "less than {}",
    "multipleOf": "a multiple of {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "pattern": "matching the regular expression {}",
    "format": "in {} format",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "uniqueItems": "no duplicate items",
    "minProperties": "at least {} keys",
    "maxProperties": "at most {} keys",
    "additionalProperties": "no keys other than the ones listed",
    "default": "defaults to {} when left out",
}
NAME_LENGTHS = (48, 40, 32, 24, 16)  # tried longest first: the name keeps as much as it can


def candidates(
    tool: Mapping[str, Any], code: str, pointer: str, message: str, tools: list[Any]
) -> list[Edit]:
    """The edits that could remove the finding ``code`` at ``pointer`` of ``tool``, smallest first."""
    keyword = _keyword(pointer)
    if code in ROOT_CODES or (
        code in KEYWORD_CODES and keyword in COMBINATORS and _node_path(pointer) == ["inputSchema"]
    ):
        return [e for e in [flatten_root(tool)] if e]
    if code in LIST_CODES:  # the culprit's own schema took the list down: any root repair
        found = [object_root(tool), flatten_root(tool), inline_refs(tool)]
        return [e for e in found if e]
    if code in OBJECT_ROOT_CODES:
        return [e for e in [object_root(tool)] if e]
    if code in NAME_CODES:
        return renames(tool, tools, message)
    if code in REF_CODES and _refers(tool):
        return [e for e in [inline_refs(tool), inline_refs(tool, nullable=True)] if e]
    if code in ITEMS_CODES:
        return [e for e in [add_items(tool, pointer)] if e]
    if code in NULLABLE_CODES:
        return [e for e in [drop_null(tool, pointer)] if e]
    if code in DESCRIPTION_CODES:
        return shorter_descriptions(tool, message)
    nullable = drop_null(tool, pointer.rsplit("/", 1)[0]) if code in KEYWORD_CODES else None
    if nullable is not None and keyword in ("default", "anyOf", "oneOf", "type"):
        return [nullable]  # Optional[X]'s null branch and null default: one edit for both
    if code in KEYWORD_CODES and keyword in PROSE:
        one, node = describe_keyword(tool, pointer, keyword), describe_node(tool, pointer)
        return [e for e in [one, node if node and one and node.after != one.after else None] if e]
    if code in KEYWORD_CODES and keyword == "description":  # moved keywords appended to it
        return [e for e in [describe_node(tool, pointer, default=False)] if e]
    if code in KEYWORD_CODES and keyword == "type":
        return [e for e in [open_object(tool, pointer)] if e]
    return []


# -- pointers -------------------------------------------------------------------------------------


def _tokens(pointer: str) -> list[str]:
    return [unescape(t) for t in pointer.split("/")[1:]] if pointer else []


def _keyword(pointer: str) -> str:
    tokens = _tokens(pointer)
    return tokens[-1] if tokens else ""


def _node_path(pointer: str) -> list[str]:
    return _tokens(pointer)[:-1]


def _node(doc: Any, path: list[str]) -> Any:
    for token in path:
        if isinstance(doc, list):
            doc = doc[int(token)] if token.isdigit() and int(token) < len(doc) else None
        elif isinstance(doc, Mapping):
            doc = doc.get(token)
        else:
            return None
    return doc


def _edit_at(tool: Mapping[str, Any], pointer: str, keyword: str) -> tuple[list[str], dict, Any]:
    """The node ``pointer`` names (less a last ``keyword`` token), in a copy of the tool: the
    path to it, the copy, and the node to change (None when it is not an object)."""
    tokens = _tokens(pointer)
    path = tokens[:-1] if tokens and tokens[-1] == keyword else tokens
    after = copy.deepcopy(dict(tool))
    node = _node(after, path)
    return path, after, node if isinstance(node, dict) else None


def _where(path: list[str]) -> str:
    """A schema node as a reader names it: ``importance`` or ``items of tags`` or ``the arguments``."""
    inner = path[1:] if path[:1] == ["inputSchema"] else path
    names = [t for i, t in enumerate(inner) if i and inner[i - 1] == "properties"]
    if not inner:
        return "the arguments"
    where = ".".join(names) or "/".join(inner)
    return f"items of {where}" if inner[-1] == "items" else where


def _nest(path: list[str], schema: dict) -> dict:
    """``schema`` placed at ``path`` (below ``inputSchema``) of an otherwise empty schema."""
    inner = path[1:] if path[:1] == ["inputSchema"] else path
    for token in reversed(inner):
        schema = {token: schema}
    return schema


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _append(description: Any, text: str) -> str:
    have = description.rstrip() if isinstance(description, str) else ""
    if not have:
        return text
    return f"{have}{'' if have.endswith(('.', '!', '?')) else '.'} {text}"


# -- the kinds ------------------------------------------------------------------------------------


def _variant_text(variant: Any) -> str:
    if isinstance(variant, Mapping) and set(variant) <= {"required", "properties", "type"}:
        names = variant.get("required") or list((variant.get("properties") or {}).keys())
        if names and all(isinstance(n, str) for n in names):
            return "(" + " and ".join(names) + ")"
    return _compact(variant)


def flatten_root(tool: Mapping[str, Any]) -> Edit | None:
    """A root anyOf/oneOf/allOf made a plain object: the variants' properties kept optional at the
    root, the rule stated in the tool description and checked by the handler."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        return None
    found = [k for k in COMBINATORS if isinstance(schema.get(k), list)]
    if not found:
        return None
    after = copy.deepcopy(dict(tool))
    flat = after["inputSchema"]
    flat.setdefault("type", "object")
    props = flat.setdefault("properties", {})
    rules = []
    check: dict[str, Any] = {}
    for keyword in found:
        variants = flat.pop(keyword)
        check[keyword] = copy.deepcopy(variants)
        for variant in variants:
            for key, sub in ((variant or {}).get("properties") or {}).items():
                props.setdefault(key, copy.deepcopy(sub))
        if keyword == "allOf" and all(_plain_required(v) for v in variants):
            required = list(flat.get("required") or [])
            for v in variants:
                required += [n for n in v.get("required") or [] if n not in required]
            flat["required"] = required
            del check[keyword]
            continue
        words = {"anyOf": "at least one of", "oneOf": "exactly one of", "allOf": "all of"}[keyword]
        rules.append(f"{words}: " + " or ".join(_variant_text(v) for v in variants))
    name = str(tool.get("name", ""))
    items: tuple[ServerItem, ...] = ()
    if rules:
        rule = "; ".join(rules)
        after["description"] = _append(
            after.get("description"), f"Input rule (checked by the server): give {rule}."
        )
        items = (
            ServerItem(
                name,
                f"refuse a call unless it gives {rule}, with a tool error (isError: true) that "
                "names the parameters",
                f"root {'/'.join(found)} of inputSchema",
                check,
            ),
        )
    return Edit(
        "flatten-root",
        name,
        after,
        f"root {'/'.join(found)} removed: clients that reject or rewrite root combinators get a "
        "plain object; the rule moves to the description and the handler",
        items=items,
        cost="clients that checked the root rule before sending now read it as prose; the "
        "handler's check replaces theirs",
    )


def _plain_required(variant: Any) -> bool:
    return isinstance(variant, Mapping) and set(variant) <= {"required"}


def object_root(tool: Mapping[str, Any]) -> Edit | None:
    """``type: object`` (and ``properties: {}``) added to a root that has neither."""
    schema = tool.get("inputSchema")
    after = copy.deepcopy(dict(tool))
    if not isinstance(schema, Mapping):
        after["inputSchema"] = {"type": "object", "properties": {}}
    elif schema.get("type") in (None, "object") and not any(k in schema for k in COMBINATORS):
        root = after["inputSchema"]
        if root.get("type") == "object" and "properties" in root:
            return None
        root.setdefault("type", "object")
        root.setdefault("properties", {})
    else:
        return None
    return Edit(
        "object-root",
        str(tool.get("name", "")),
        after,
        "inputSchema given an object root (type: object, properties): clients replace or drop "
        "anything else",
    )


def banned(message: str) -> str:
    """The characters a name finding says the client does not allow (``... allow ('-', '.')``)."""
    found = re.search(r"does not allow \(([^)]*)\)", message)
    return "".join(re.findall(r"'(.)'", found.group(1))) if found else ""


def stable_name(name: str, limit: int, also: str = "") -> str:
    """``name`` in [A-Za-z0-9_-] less the characters ``also``, starting with a letter, at most
    ``limit`` characters: a longer one keeps its start and ends in ``_`` and the first 8 hex of
    its SHA-1 (the same name always gives the same result)."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", name) or "tool"
    for ch in also:
        clean = clean.replace(ch, "_")
    if not clean[0].isalpha():
        clean = "t_" + clean
    if len(clean) <= limit and clean == name:
        return clean
    if len(clean) > limit:
        digest = hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]
        clean = clean[: limit - 9].rstrip("_-") + "_" + digest
    return clean


def renames(tool: Mapping[str, Any], tools: list[Any], message: str) -> list[Edit]:
    """The tool renamed by ``stable_name``, longest name first; never onto a name in use."""
    name = str(tool.get("name", ""))
    taken = {t.get("name") for t in tools if isinstance(t, Mapping)} - {name}
    out: list[Edit] = []
    seen = set()
    also = banned(message)
    for limit in (max(len(name), 1),) + NAME_LENGTHS:
        new = stable_name(name, limit, also)
        if new == name or new in seen or new in taken:
            continue
        seen.add(new)
        after = copy.deepcopy(dict(tool))
        after["name"] = new
        guidance = advice(
            Change(kind="tool-renamed", tool=name, message="", detail={"to": new}), Context()
        )
        out.append(
            Edit(
                "rename",
                name,
                after,
                f"tool renamed {name!r} -> {new!r} ({len(new)} characters, [A-Za-z0-9_-]): {message}",
                items=(
                    ServerItem(
                        new,
                        f"keep answering tools/call for {name!r} as an alias of {new!r} (mapped at "
                        "the boundary, not listed), until frozen callers are quiet",
                        f"the tool name {name!r}",
                    ),
                ),
                renames=(Rename(name, new, (), guidance),),
                cost=f"frozen callers (live conversations, queued retries, stored transcripts) "
                f"that call {name!r} fail unless the server keeps the alias",
            )
        )
    return out


def describe_keyword(tool: Mapping[str, Any], pointer: str, keyword: str) -> Edit | None:
    """A keyword a client strips dropped from the schema and stated in the node's description
    instead; the handler checks it (it is the same rule, read as prose by every client)."""
    path = _node_path(pointer)
    after = copy.deepcopy(dict(tool))
    node = _node(after, path)
    if not isinstance(node, dict) or keyword not in node:
        return None
    value = node[keyword]
    if keyword == "additionalProperties" and value is not False:
        return None
    if keyword == "uniqueItems" and value is not True:
        return None
    del node[keyword]
    prose = PROSE[keyword].format(_compact(value))
    where = _where(path)
    # The root's own description is stripped by some clients: the tool's description is read.
    said = after if path == ["inputSchema"] else node
    if keyword == "default":
        said["description"] = _append(said.get("description"), f"Defaults to {_compact(value)}.")
        items: tuple[ServerItem, ...] = (
            ServerItem(
                str(tool.get("name", "")),
                f"apply the default {_compact(value)} to {where} when a call leaves it out",
                f"default of {where}",
            ),
        )
    else:
        text = f"Must be {prose} (checked by the server)."
        if said is after:
            text = f"Arguments: {prose} (checked by the server)."
        said["description"] = _append(said.get("description"), text)
        rule = (
            f"refuse a call with keys other than the ones listed in {where}"
            if keyword == "additionalProperties"
            else f"refuse a call whose {where} is not {prose}"
        )
        items = (
            ServerItem(
                str(tool.get("name", "")),
                f"{rule}, with a tool error (isError: true) naming the parameter",
                f"{keyword} at {where}",
                _nest(path, _check(node, keyword, value)),
            ),
        )
    return Edit(
        "describe-keyword",
        str(tool.get("name", "")),
        after,
        f"{keyword} at {where} moved into its description: some clients strip it, so the model "
        "never saw it there",
        items=items,
        cost=f"clients that kept {keyword} no longer check it before sending; the handler does",
    )


def _check(node: Mapping[str, Any], keyword: str, value: Any) -> dict:
    """The handler's check of ``keyword`` as a schema: ``additionalProperties: false`` needs the
    node's own property names beside it (else every key would count as additional)."""
    check = {keyword: copy.deepcopy(value)}
    if keyword == "additionalProperties":
        check["properties"] = {k: {} for k in node.get("properties") or {}}
        if "patternProperties" in node:
            check["patternProperties"] = copy.deepcopy(node["patternProperties"])
    return check


def describe_node(tool: Mapping[str, Any], pointer: str, default: bool = True) -> Edit | None:
    """Every keyword of the node at ``pointer``'s parent that a client may strip, stated in the
    description and dropped, in one edit (a client that moves some of them into the description
    itself, as the copilot-schema behaviour does, then has nothing to move); ``default`` False
    keeps the default."""
    path = _node_path(pointer)
    node = _node(tool, path)
    if not isinstance(node, Mapping):
        return None
    keywords = [k for k in PROSE if k in node and (default or k != "default")]
    edit: Edit | None = None
    current: Mapping[str, Any] = tool
    for keyword in keywords:
        where = "/" + "/".join(escape(t) for t in path + [keyword])
        step = describe_keyword(current, where, keyword)
        if step is None:
            continue
        current = step.after
        edit = (
            step
            if edit is None
            else Edit(
                edit.kind,
                edit.tool,
                step.after,
                f"{', '.join(keywords)} at {_where(path)} moved into its description: some "
                "clients strip them, so the model never saw them there",
                items=edit.items + step.items,
                cost=f"clients that kept {', '.join(keywords)} no longer check them before "
                "sending; the handler does",
            )
        )
    return edit


def open_object(tool: Mapping[str, Any], pointer: str) -> Edit | None:
    """An object property without ``properties`` retyped by a client: say it takes any keys
    (``additionalProperties: true``), the one thing that keeps it an object in such a converter."""
    path, after, node = _edit_at(tool, pointer, "type")
    if node is None or node.get("type") != "object" or node.get("properties"):
        return None
    if "additionalProperties" in node:
        return None
    node["additionalProperties"] = True
    return Edit(
        "open-object",
        str(tool.get("name", "")),
        after,
        f"{_where(path)} is an object without listed properties: additionalProperties: true says "
        "it takes any keys",
    )


def add_items(tool: Mapping[str, Any], pointer: str) -> Edit | None:
    """``items: {}`` given to an array without one (any item: the server's meaning is unchanged)."""
    path, after, node = _edit_at(tool, pointer, "items")
    if node is None or "items" in node:
        return None
    node["items"] = {}
    return Edit(
        "add-items",
        str(tool.get("name", "")),
        after,
        f"items: {{}} added to the array {_where(path)}: clients reject or rewrite an array "
        "without items",
    )


def drop_null(tool: Mapping[str, Any], pointer: str) -> Edit | None:
    """A ``[T, "null"]`` type made ``T``, the property optional: null and absent mean the same."""
    path, after, node = _edit_at(tool, pointer, "type")
    if node is None:
        return None
    if _null_union(node.get("anyOf")):  # [X, null] as anyOf (Pydantic's Optional[X])
        (branch,) = [b for b in node.pop("anyOf") if b != {"type": "null"}]
        for key, value in branch.items():
            node.setdefault(key, copy.deepcopy(value))
        if node.get("default", 0) is None:
            del node["default"]
        kept = [node.get("type")]
    elif isinstance(node.get("type"), list):
        kept = [t for t in node["type"] if t != "null"]
        if len(kept) != 1 or len(kept) == len(node["type"]):
            return None
        node["type"] = kept[0]
    else:
        return None
    parent = _node(after, path[:-2]) if len(path) >= 2 and path[-2] == "properties" else None
    if isinstance(parent, dict) and isinstance(parent.get("required"), list):
        parent["required"] = [r for r in parent["required"] if r != path[-1]]
    where = _where(path)
    return Edit(
        "drop-null",
        str(tool.get("name", "")),
        after,
        f'{where} typed {kept[0]} instead of [{kept[0]}, "null"] and optional: clients rewrite or '
        "reject type lists",
        items=(
            ServerItem(
                str(tool.get("name", "")),
                f"treat {where} given as null the same as left out",
                f'"null" in the type of {where}',
            ),
        ),
        cost=f"a caller that sends {where}: null is refused by clients that validate first",
    )


def _refers(tool: Mapping[str, Any]) -> bool:
    schema = tool.get("inputSchema")
    return isinstance(schema, Mapping) and '"$ref": "#/' in json.dumps(schema)


def inline_refs(tool: Mapping[str, Any], nullable: bool = False) -> Edit | None:
    """Every local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) replaced by what it points to,
    and the definitions dropped: clients that drop ``$defs`` or do not resolve references see
    the whole schema. A recursive reference cannot be inlined: no edit then."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        return None
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(v, seen) for v in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            key = unescape(ref.rsplit("/", 1)[-1])
            if key in seen or key not in defs:
                raise ValueError(ref)
            merged = {**defs[key], **{k: v for k, v in node.items() if k != "$ref"}}
            return resolve(merged, seen + (key,))
        return {k: resolve(v, seen) for k, v in node.items() if k not in ("$defs", "definitions")}

    try:
        flat = resolve(schema, ())
    except ValueError:
        return None
    if flat == schema:
        return None
    after = copy.deepcopy(dict(tool))
    after["inputSchema"] = flat
    reason = (
        "every $ref inlined and $defs dropped: clients that drop $defs or do not resolve "
        "references saw a reference they could not follow"
    )
    items: tuple[ServerItem, ...] = ()
    if nullable:  # what the references hid comes out too: its [X, null] unions made X, optional
        for pointer in _null_unions(flat, "/inputSchema"):
            step = drop_null(after, pointer)
            if step is not None:
                after, items = step.after, items + step.items
        if not items:
            return None
        reason += "; the [X, null] unions they held made X and optional"
    return Edit("inline-refs", str(tool.get("name", "")), after, reason, items=items)


def _null_unions(node: Any, where: str) -> list[str]:
    """Pointers to every property below ``node`` typed ``[X, null]`` (as a list or an anyOf)."""
    out: list[str] = []
    if not isinstance(node, Mapping):
        return out
    for name, sub in (node.get("properties") or {}).items():
        at = f"{where}/properties/{name.replace('~', '~0').replace('/', '~1')}"
        if isinstance(sub, Mapping) and (
            _null_union(sub.get("anyOf"))
            or (isinstance(sub.get("type"), list) and "null" in sub["type"])
        ):
            out.append(at)
        out += _null_unions(sub, at)
    return out


def _null_union(variants: Any) -> bool:
    """``anyOf: [{type: X, ...}, {type: null}]`` with one typed non-null branch."""
    if not isinstance(variants, list) or len(variants) != 2 or {"type": "null"} not in variants:
        return False
    (other,) = [v for v in variants if v != {"type": "null"}] or [None]
    return isinstance(other, Mapping) and isinstance(other.get("type"), str)


def shorter_descriptions(tool: Mapping[str, Any], message: str) -> list[Edit]:
    """The description cut at the last sentence that fits the cap the finding names."""
    match = re.search(r"cut to (\d+)", message)
    description = tool.get("description")
    if not match or not isinstance(description, str):
        return []
    cap = int(match.group(1))
    cut = description[:cap]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    short = cut[: end + 1] if end > 0 else cut.rstrip()
    after = copy.deepcopy(dict(tool))
    after["description"] = short
    rest = description[len(short) :].strip()
    return [
        Edit(
            "shorten-description",
            str(tool.get("name", "")),
            after,
            f"description cut to {len(short)} characters at a sentence end (a client's cap is "
            f"{cap}): the start it keeps is the server's choice, not the client's",
            items=(
                ServerItem(
                    str(tool.get("name", "")),
                    f"move the cut text ({len(rest)} characters) into the parameters' descriptions "
                    "or the server's instructions: "
                    + rest[:120]
                    + ("..." if len(rest) > 120 else ""),
                    "the end of the tool description",
                ),
            ),
            cost=f"{len(rest)} characters of the description no longer reach any model",
        )
    ]
