"""Fix advice: what a server author can change so a finding goes away.

Advice is keyed, most specific first, by the finding ``code`` (discovery), then by the
``behaviour`` that produced the finding or the mutation, then by the verdict. It follows the
three fixes of docs/design.md#three-fixes-the-reference-servers-show:

- flatten the root (memory_reflect's identity): a root ``anyOf``/``oneOf``/``allOf`` hides
  the tool in clients that reject root combinators, so flatten the root to a plain object and
  check the at-least-one rule in the handler, where it fails with an error the model can read;
- a raw twin for write tools: a write tool whose schema evolves gets a twin with one
  field, a JSON payload string, forwarded whole and validated server-side, so a client holding
  a stale schema has nothing to strip;
- rename additively (renaming a tool parameter): keep the old name as a deprecated alias
  mapped at the boundary, the new name wins on conflict, and the alias's description is an
  instruction: "Do not use; pass X instead".

Advice is a value for writers to show beside a finding (it reads typed cells, mcp_matrix.core.events);
it never changes a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mcp_matrix.core.event_values import CellFinding
from mcp_matrix.core.events import CallCell, Cell, DiscoveryCell
from mcp_matrix.core.jsontypes import JSONObject
from mcp_matrix.core.tools import read_only
from mcp_matrix.core.verdicts import ADVICE_ALWAYS, FINE, LOST, REPLAY_CATEGORY, SILENT_CHANGE, V

# -- the advice texts ----------------------------------------------------------------------

FLATTEN_ROOT = (
    "Flatten the root: make inputSchema a plain object (type: object, properties, required) with no "
    "root anyOf/oneOf/allOf or if/then/else, keep every property optional that a combinator chose "
    "between, and check the at-least-one rule in the handler, returning a tool error the model can "
    "read (docs/design.md#flatten-the-root)."
)
RAW_TWIN = (
    "For a write tool whose schema evolves, add a raw twin: a second tool with one field, a JSON "
    "payload string, whose handler forwards the whole payload and validates it server-side against "
    "the real schema, so a client holding a stale or stripped schema has nothing to drop "
    "(docs/design.md#a-raw-twin-for-write-tools)."
)
ALIAS = (
    "Rename additively: keep the old parameter as a deprecated alias mapped to the new one at the "
    "boundary (the new name wins on conflict; count conflicts), make neither required on its own, "
    'and give the alias a blunt description: "Do not use; pass <new name> instead". Retire it only '
    "when live, retry and replay callers are quiet."
)
ADD_ITEMS = "Give every array an items schema (e.g. items: {type: string}); clients reject or rewrite an array without items."
SHORT_NAMES = (
    "Keep tool names short enough for prefixing clients: at most 64 characters minus the prefix a "
    "client adds (e.g. mcp__<server>__ in Claude Code), using only [a-zA-Z0-9_-], starting with a letter."
)
SERVER_NAME = "Use a server name of [a-zA-Z0-9_-] only and keep it short: clients build tool names from it (mcp__<server>__<tool>)."
UNIQUE_NAMES = (
    "Give tools names that stay distinct after a client's prefixing and character clean-up."
)
INLINE_DEFS = (
    "Inline $defs: replace every $ref with the schema it points to, so clients that drop $defs or do "
    "not resolve references still see the whole schema."
)
NO_CYCLES = (
    "Remove the recursive $ref: bound the depth (inline two or three levels) or take the recursive "
    "part as a JSON string validated server-side; clients cannot inline a cycle."
)
STRICT_VALIDATION = (
    "Validate arguments strictly server-side against the input schema and refuse a changed type "
    "(a stringified array, object or boolean) with a tool error the model can read, so the call is "
    "loud; never coerce silently."
)
BIG_INTEGERS = (
    "Take 64-bit ids and other integers above 2^53 as strings (type: string, pattern: "
    "^-?[0-9]+$): a JavaScript client parses the model's arguments into doubles and sends a "
    "neighbouring number, which is still a valid integer, so no server-side validation can see it."
)
KEEP_LOUD = (
    "This is loud, the safe outcome: the model reads the error and retries, at the cost of a turn. "
    "Keep validating strictly; never coerce silently."
)
STATE_IN_DESCRIPTION = (
    "Do not rely on a keyword this client strips: state the constraint in the property's description "
    "and enforce it server-side, returning a tool error the model can read."
)
NO_NULLABLE_UNIONS = 'Make the field optional (leave it out of required) instead of typing it [T, "null"]; some clients rewrite or reject type arrays.'
STRICT_MODE = (
    "Make the schema strict-mode compatible: additionalProperties: false on every object, every "
    "property listed in required, and optional values expressed as nullable; otherwise the client "
    "rewrites the schema the model sees."
)
VALID_SCHEMA = "Make inputSchema a valid JSON Schema (draft 2020-12 / draft-07 subset): the client validates it before showing the tool."
OBJECT_ROOT = "Make inputSchema an object root: {type: object, properties: {...}}; clients replace or drop anything else."
SIMPLE_TYPES = (
    "Give each property one plain type (no type lists, no recursive $ref, arrays with typed items): "
    "the client narrows what it cannot express, so the model is told less than the server accepts."
)
TYPE_EVERYWHERE = "Give every property an explicit type; the client defaults untyped properties."
SIMPLER_SCHEMA = "Simplify the schema (fewer nested or inlined subschemas); the client stops walking large schemas."
FEWER_TOOLS = (
    "Expose fewer tools: group related operations behind one tool with an action enum, or split the "
    "server; this client caps how many tools it shows."
)
FIRST_PAGE = "Return every tool on the first tools/list page (or put the important ones first): this client reads only part of a paginated list."
FIX_CULPRIT = "Fix the tool that broke the list (see its own finding): one tool's schema takes every tool of the server down in this client."
FIX_RAISED_LIST = (
    "Fix the tool that broke the list (see its own finding): this library raises the error out of "
    "loading the server's tools, so the user's whole agent run fails with it, every other server "
    "included; until then, tell users to load this server's tools in a try block of their own."
)
DESCRIPTION_FIRST = "Put the essential instruction at the start of the description; the client truncates long descriptions."
CLIENT_PROPERTY = (
    "Rename the parameter: the client adds a property of that name to every tool and its own "
    "replaces yours, so the model never sees your schema for it."
)
STRUCTURED = "Return structuredContent that matches outputSchema on every successful result."
RESULT_SIZE = "Keep results under the client's size cap: paginate, summarise or return a resource link instead of the whole payload."
DEFAULTS = (
    "Apply defaults server-side; do not rely on the client to fill them in (or to leave them out)."
)
NULLS = "Treat null and absent the same server-side; a client drops nulls before sending."
SESSIONS = (
    "Keep no state between calls in the MCP session: this client may open a new session per call."
)
PROPERTY_KEYS = "Name parameters with letters, digits, '_', '.' and '-' only, 64 characters at most (the Anthropic API refuses other keys); map the old names server-side."
TUPLES = "Use one items schema (or an object) instead of a tuple (items as a list / prefixItems); the client rewrites tuples."
CLIENT_REFUSED = (
    "The client refused to send the call against its copy of the schema: make the schema describe "
    "what the server accepts (no stricter), and keep the stricter rules in the handler."
)

# -- keyed tables --------------------------------------------------------------------------

INLINE_EXTERNAL = (
    "Bundle every $ref into the tool's own schema (in-document #/$defs/... or inlined): clients do not "
    "fetch remote or file: references, so the model sees a reference it cannot follow."
)
SIMPLER_PATTERN = (
    "Use a pattern without nested quantifiers (e.g. ^a+$ rather than ^(a+)+$): a client validating "
    "arguments against it can hang on a long value; check anything more complex in the handler."
)
SHORTER_ENUM = (
    "Keep an enum to tens of values: a client sends every value to the model with each request; for a large "
    "set of choices take a string, validate it in the handler, and offer a search or list tool for the values."
)
BOTH_ERAS = (
    "Support both protocol eras: answer the initialize handshake (2025-11-25 and older) beside "
    "2026-07-28 (server/discover, per-request _meta); the official SDKs serve both by default."
)
ECHO_VERSION = (
    "Echo a supported requested version: when a client's initialize asks for a protocol version you "
    "support, answer with that version instead of a fixed one."
)
LATE_INITIALIZE = (
    "Accept initialize after server/discover: some clients send it even after a successful discover "
    "(claude-code#96183); on stdio, do not lock the connection to 2026-07-28 on the discover alone."
)

DESCRIPTIONS_AS_DATA = (
    "Write descriptions as plain statements of what the tool and each parameter do: this client "
    'shows them to the model as untrusted data, so instructions in them ("always call this first") are not followed.'
)

OPENED_SCHEMA = (
    "Refuse unknown arguments server-side with a tool error the model can read: this client tells "
    "the model any other key is allowed, so a key it invents must be loud, not silently ignored."
)

BY_CODE: dict[str, str] = {
    "additional-properties-opened": OPENED_SCHEMA,
    "description-fenced": DESCRIPTIONS_AS_DATA,
    "external-ref": INLINE_EXTERNAL,
    "pattern-too-costly": SIMPLER_PATTERN,
    "enum-over-cap": SHORTER_ENUM,
    "root-combinator": FLATTEN_ROOT,
    "root-type-added": OBJECT_ROOT,
    "root-combinator-deleted": FLATTEN_ROOT,
    "root-combinator-collapsed": FLATTEN_ROOT,
    "root-combinator-flattened": FLATTEN_ROOT,
    "stale-cache": RAW_TWIN,
    "renamed": ALIAS,
    "description-truncated": DESCRIPTION_FIRST,
    "root-combinator-described": FLATTEN_ROOT,
    "property-shadowed": CLIENT_PROPERTY,
    "parameter-renamed": ALIAS,
    "parameter-removed": ALIAS,
    "missing-parameter": ALIAS,
    "required-added": ALIAS,
    "alias-missing": ALIAS,
    "alias-removed": ALIAS,
    "alias-conflict": ALIAS,
    "array-without-items": ADD_ITEMS,
    "items-added": ADD_ITEMS,
    "tuple-items-refused": TUPLES,
    "property-key-refused": PROPERTY_KEYS,
    "name-too-long": SHORT_NAMES,
    "name-invalid": SHORT_NAMES,
    "name-collision": UNIQUE_NAMES,
    "name-shortened": SHORT_NAMES,
    "name-sanitised": SHORT_NAMES,
    "name-collision-renamed": UNIQUE_NAMES,
    "server-name-invalid": SERVER_NAME,
    "dangling-ref": INLINE_DEFS,
    "ref-unresolved": INLINE_DEFS,
    "ref-cycle": NO_CYCLES,
    "keyword-refused": STATE_IN_DESCRIPTION,
    "schema-incompatible": STATE_IN_DESCRIPTION,
    "removed-by-client": STATE_IN_DESCRIPTION,
    "changed-by-client": STATE_IN_DESCRIPTION,
    "nullable-rewritten": NO_NULLABLE_UNIONS,
    "type-changed": NO_NULLABLE_UNIONS,
    "additional-properties-forced": STRICT_MODE,
    "made-required": STRICT_MODE,
    "strict-failed": STRICT_MODE,
    "strict-fallback": STRICT_MODE,
    "invalid-json-schema": VALID_SCHEMA,
    "schema-unparsable": OBJECT_ROOT,
    "root-replaced": OBJECT_ROOT,
    "no-parameters": OBJECT_ROOT,
    "parameters-dropped": OBJECT_ROOT,
    "converter-error": OBJECT_ROOT,
    "not-normalised": VALID_SCHEMA,
    "type-defaulted": TYPE_EVERYWHERE,
    "type-narrowed": SIMPLE_TYPES,
    "walk-limit": SIMPLER_SCHEMA,
    "not-checked": SIMPLER_SCHEMA,
    "too-many-tools": FEWER_TOOLS,
    "over-tool-cap": FEWER_TOOLS,
    "page-not-read": FIRST_PAGE,
    "list-rejected": FIX_CULPRIT,
    "run-aborted": FIX_RAISED_LIST,
    "client-refused": CLIENT_REFUSED,
    "missing-structured-content": STRUCTURED,
    "invalid-structured-content": STRUCTURED,
    "result-too-large": RESULT_SIZE,
    "handshake-refused": BOTH_ERAS,
    "modern-refused": BOTH_ERAS,
    "no-common-version": BOTH_ERAS,
    "version-rejected": ECHO_VERSION,
    "initialize-after-discover": LATE_INITIALIZE,
}

BY_BEHAVIOUR: dict[str, str] = {
    "root-combinators": FLATTEN_ROOT,
    "cache-tools": RAW_TWIN,
    "strip-unknown-arguments": RAW_TWIN,
    "stringify-arguments": STRICT_VALIDATION,
    "array-items-required": ADD_ITEMS,
    "tool-name": SHORT_NAMES,
    "combined-name-limit": SHORT_NAMES,
    "server-name": SERVER_NAME,
    "resolve-refs": INLINE_DEFS,
    "strip-defs": INLINE_DEFS,
    "ref-cycles": NO_CYCLES,
    "codex-sanitize": SIMPLE_TYPES,
    "strip-keywords": STATE_IN_DESCRIPTION,
    "keep-keywords": STATE_IN_DESCRIPTION,
    "forbid-keywords": STATE_IN_DESCRIPTION,
    "nullable-type-arrays": NO_NULLABLE_UNIONS,
    "openai-strict": STRICT_MODE,
    "force-additional-properties-false": STRICT_MODE,
    "prune-required": STRICT_MODE,
    "metaschema-validate": VALID_SCHEMA,
    "coerce-object-root": OBJECT_ROOT,
    "max-tools": FEWER_TOOLS,
    "pagination": FIRST_PAGE,
    "truncate-descriptions": DESCRIPTION_FIRST,
    "truncate-tool-description": DESCRIPTION_FIRST,
    "add-property": CLIENT_PROPERTY,
    "tuple-items-to-anyof": TUPLES,
    "require-structured-content": STRUCTURED,
    "result-size-cap": RESULT_SIZE,
    "default-arguments": DEFAULTS,
    "drop-nulls": NULLS,
    "new-session-per-call": SESSIONS,
    "client-validate": CLIENT_REFUSED,
    "round-big-integers": BIG_INTEGERS,
}

# Keyed by the verdicts with advice of their own (``VerdictRow.advice``; a test checks the keys):
# "always" given after the more specific pieces, "fallback" only when there is none.
BY_VERDICT: dict[str, str] = {
    "broken": (
        "Answer every request with a JSON-RPC result or error within the timeout: no crash, nothing "
        "but JSON-RPC on stdout (log to stderr)."
    ),
    "silent-corruption": STRICT_VALIDATION,
    "silent-loss": (
        "Refuse a call that lost data instead of succeeding on what is left: validate required and "
        "expected fields server-side and return a tool error the model can read."
    ),
    "accepted-invalid": (
        "Validate arguments server-side against the input schema and return a tool error "
        "(isError: true) for invalid input; the schema alone does not stop a client that sends anyway."
    ),
    "session-broken": FIX_CULPRIT,
    "server-dropped": FIX_CULPRIT,
    "failed": "An intact, valid call was refused or answered wrongly: fix the handler, or the case's expectation if the case is wrong.",
    "hidden": "Fix the finding that hides the tool in this client (see the discovery reason).",
    "unreachable": "The tool is not visible in this client: fix its discovery finding first (see the discovery cell).",
    "loud": KEEP_LOUD,
    "degraded": STATE_IN_DESCRIPTION,
}

_WRITE_LOSS = ("cache-tools", "strip-unknown-arguments")
_MAX_PARTS = 3


def advice_for(
    cell: Cell, tool: JSONObject | None = None, finding: CellFinding | None = None
) -> str | None:
    """The fix for one discovery or call cell, or None when nothing needs fixing.

    ``tool`` is the tool as the server listed it, when known: its annotations tell a
    read-only tool (no raw twin needed) from one that may write. ``finding``: the fix for that
    one finding of a discovery cell (a root cause of the triage list) instead of the cell's.
    """
    parts = advice_parts(cell, tool, finding)
    return " ".join(parts) if parts else None


def advice_parts(
    cell: Cell, tool: JSONObject | None = None, finding: CellFinding | None = None
) -> list[str]:
    """The distinct pieces of advice for a cell, most specific first (at most three)."""
    verdict = cell.verdict
    if not verdict or verdict in FINE:
        return []
    if isinstance(cell, DiscoveryCell):
        found = _discovery_parts(verdict, cell.findings if finding is None else (finding,))
    else:
        found = _call_parts(cell, tool)
    if verdict in BY_VERDICT and (not found or verdict in ADVICE_ALWAYS) and not _unseen(cell):
        found = found + [_verdict_advice(cell)]
    return _dedupe(found)[:_MAX_PARTS]


# A broken call whose HTTP connection was lost (``connection-lost``, mcp_matrix.wire.errors): no
# process of ours ended and stdout is not involved, so the advice is HTTP's.
HTTP_CONNECTION_LOST = (
    "Answer every request on the HTTP connection it came on, within the timeout: a handler that "
    "crashes resets it; check the server's HTTP logs, and any proxy, load balancer or "
    "idle-connection limit in front of it."
)


def _unseen(cell: Cell) -> bool:
    """A change no server-side check can see (a rounded integer is still a valid integer): the
    verdict's own advice, validate strictly, would not help, so only the specific fix is given."""
    return isinstance(cell, CallCell) and "round-big-integers" in cell.behaviours


def _verdict_advice(cell: Cell) -> str:
    if cell.verdict == V.BROKEN.name and getattr(cell, "reason", "").startswith("connection-lost"):
        return HTTP_CONNECTION_LOST
    return BY_VERDICT[cell.verdict]


def _discovery_parts(verdict: str, findings: Sequence[CellFinding]) -> list[str]:
    if verdict in LOST:
        # The finding that decided comes last; the others only rewrote the schema before.
        ordered = list(reversed(findings))
    else:
        ordered = [f for f in findings if f.lost] or list(findings)
    out = []
    for f in ordered:
        if f.blast_radius == "run" and f.lost:  # a library raised it: the whole run fails
            out.append(FIX_RAISED_LIST)
            continue
        text = _by_code(f.code) or BY_BEHAVIOUR.get(f.behaviour or "")
        if text:
            out.append(text)
    return out


def _call_parts(cell: CallCell, tool: JSONObject | None) -> list[str]:
    verdict = cell.verdict
    behaviours = cell.behaviours
    kinds = {m.kind for m in cell.mutations}
    out: list[str] = []
    if verdict == V.UNREACHABLE.name:
        out += [BY_BEHAVIOUR[b] for b in behaviours if b in BY_BEHAVIOUR and b not in _WRITE_LOSS]
        return out
    if verdict == V.BROKEN.name and _timed_out(cell):
        return out  # no answer in time: the verdict's own advice; how the client calls is not why
    if cell.stale:
        # Built from a cached, older tool list. A field added since is stripped (a raw twin
        # keeps writes whole); an old parameter name the server no longer takes is refused
        # (the additive alias keeps it working).
        if kinds & {"removed", "nulled"}:
            if not read_only(tool):
                out.append(RAW_TWIN)
        elif REPLAY_CATEGORY.get(verdict) == "loud" or verdict in SILENT_CHANGE:
            out.append(ALIAS)
    if verdict == V.SILENT_LOSS.name and not read_only(tool):
        out.append(RAW_TWIN)
    if "stringified" in kinds or "retyped" in kinds:
        out.append(KEEP_LOUD if verdict == V.LOUD.name else STRICT_VALIDATION)
    for b in behaviours:
        if b in _WRITE_LOSS and read_only(tool):
            continue
        if b == "stringify-arguments" and ("stringified" in kinds or verdict == V.LOUD.name):
            continue
        if b in BY_BEHAVIOUR:
            out.append(BY_BEHAVIOUR[b])
    return out


def _timed_out(cell: CallCell) -> bool:
    """The server sent no answer within the bound (``Answer.summary`` of a wire timeout)."""
    return isinstance(cell.answer, dict) and cell.answer.get("kind") == "timeout"


def _by_code(code: str) -> str | None:
    if code in BY_CODE:
        return BY_CODE[code]
    if code.endswith("-by-client"):
        return STATE_IN_DESCRIPTION
    return None


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


__all__ = ["BY_BEHAVIOUR", "BY_CODE", "BY_VERDICT", "advice_for", "advice_parts"]
