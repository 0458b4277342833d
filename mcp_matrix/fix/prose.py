"""Keywords a client strips, said in the description instead (and checked by the server), and
descriptions cut to a client's cap at a sentence end.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.tools import escape
from mcp_matrix.fix.model import Edit, ServerItem
from mcp_matrix.fix.nodes import append_sentence, compact, nest, node_at, node_name, node_path

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


def describe_keyword(tool: Mapping[str, JSON], pointer: str, keyword: str) -> Edit | None:
    """A keyword a client strips dropped from the schema and stated in the node's description
    instead; the handler checks it (it is the same rule, read as prose by every client)."""
    path = node_path(pointer)
    after = copy.deepcopy(dict(tool))
    node = node_at(after, path)
    if not isinstance(node, dict) or keyword not in node:
        return None
    value = node[keyword]
    if keyword == "additionalProperties" and value is not False:
        return None
    if keyword == "uniqueItems" and value is not True:
        return None
    del node[keyword]
    prose = PROSE[keyword].format(compact(value))
    where = node_name(path)
    # The root's own description is stripped by some clients: the tool's description is read.
    said = after if path == ["inputSchema"] else node
    if keyword == "default":
        said["description"] = append_sentence(
            said.get("description"), f"Defaults to {compact(value)}."
        )
        items: tuple[ServerItem, ...] = (
            ServerItem(
                str(tool.get("name", "")),
                f"apply the default {compact(value)} to {where} when a call leaves it out",
                f"default of {where}",
            ),
        )
    else:
        text = f"Must be {prose} (checked by the server)."
        if said is after:
            text = f"Arguments: {prose} (checked by the server)."
        said["description"] = append_sentence(said.get("description"), text)
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
                nest(path, _check(node, keyword, value)),
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


def _check(node: Mapping[str, Any], keyword: str, value: JSON) -> dict:
    """The handler's check of ``keyword`` as a schema: ``additionalProperties: false`` needs the
    node's own property names beside it (else every key would count as additional)."""
    check = {keyword: copy.deepcopy(value)}
    if keyword == "additionalProperties":
        check["properties"] = {k: {} for k in node.get("properties") or {}}
        if "patternProperties" in node:
            check["patternProperties"] = copy.deepcopy(node["patternProperties"])
    return check


def describe_node(tool: Mapping[str, JSON], pointer: str, default: bool = True) -> Edit | None:
    """Every keyword of the node at ``pointer``'s parent that a client may strip, stated in the
    description and dropped, in one edit (a client that moves some of them into the description
    itself, as the copilot-schema behaviour does, then has nothing to move); ``default`` False
    keeps the default."""
    path = node_path(pointer)
    node = node_at(tool, path)
    if not isinstance(node, Mapping):
        return None
    keywords = [k for k in PROSE if k in node and (default or k != "default")]
    edit: Edit | None = None
    current: Mapping[str, JSON] = tool
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
                f"{', '.join(keywords)} at {node_name(path)} moved into its description: some "
                "clients strip them, so the model never saw them there",
                items=edit.items + step.items,
                cost=f"clients that kept {', '.join(keywords)} no longer check them before "
                "sending; the handler does",
            )
        )
    return edit


def shorter_descriptions(tool: Mapping[str, JSON], message: str) -> list[Edit]:
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


__all__ = ["PROSE", "describe_keyword", "describe_node", "shorter_descriptions"]
