"""Where an intended call goes: the ``Server`` seam of the call pipeline and its two kinds.

``mcp_matrix.run.deliver.deliver`` sends each way a client may send a call to a ``Server``; the
drivers differ only in the one they pass, so they agree on a verdict whenever their servers
answer alike:

- ``LiveServer``: a connection to the real server (``run``, and ``replay`` with a target);
- ``SchemaServer``: offline, a server that validates arguments against the ``inputSchema``
  it lists and whose handler reads only the properties it lists (``diff``, and ``replay``
  against a snapshot). That is a model, said so in every verdict it decides: the sameness it
  shows is the sameness of what such a handler reads, and a key it does not list is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from mcp_matrix.behaviours.validation import Violation, contents, validate
from mcp_matrix.core.jsontypes import JSON
from mcp_matrix.core.model import CallPlan
from mcp_matrix.run.classify import Answer, Expectation

SERVER_DIALECT = "2020-12"  # what an MCP server validates against unless its schema says otherwise
INVALID_PARAMS = -32602
SUCCESS = Expectation("success")

_WORDS: dict[int, tuple[JSON, bytes, str]] = {}


def sorted_words(value: JSON) -> str:
    """``json.dumps(value, sort_keys=True)``, kept for the last few objects by identity: an
    offline replay puts a call's arguments into words for its memo, and the modelled server
    again for its own. A hit is the same object with the same ``contents`` (a caller that
    changed it in place gets the words of what it holds now). Raises as ``json.dumps`` does."""
    hit = _WORDS.get(id(value))
    now = contents(value)
    if hit is not None and hit[0] is value and hit[1] == now:
        return hit[2]
    text = json.dumps(value, sort_keys=True)
    if now is not None:
        if len(_WORDS) >= 64:
            _WORDS.clear()
        _WORDS[id(value)] = (value, now, text)  # holding the value keeps its id unique
    return text


@dataclass(frozen=True)
class Intended:
    """One intended call: what the caller (a model, a queued job, a transcript) meant to send."""

    tool: str
    arguments: JSON
    omit_arguments: bool = False
    expect: Expectation = SUCCESS
    id: str = (
        ""  # the case or recorded call it comes from (a live server's references are keyed by it)
    )


class Server(Protocol):
    """Where a planned call goes. ``judges_results``: its results are real (result behaviours apply)."""

    judges_results: bool

    def send(self, plan: CallPlan) -> Answer: ...

    def may_repeat(self, call: Intended) -> bool:
        """Whether ``call``'s tool may be called more than once (else the call goes out once,
        one way: ``deliver``; no intact call is made beside it)."""
        ...

    def intact(self, call: Intended, plan: CallPlan) -> Answer | None:
        """The intact call's answer, made as ``plan`` was (its session, right after it) where
        calling twice is safe, else None (sameness unknown)."""
        ...

    def violations(self, tool: str, arguments: JSON) -> tuple[Violation, ...]:
        """What the server's listed ``inputSchema`` says of ``arguments`` (empty: valid, or no schema)."""
        ...

    def again(self, call: Intended, plan: CallPlan) -> Answer | None:
        """``plan`` sent (once more, or with other arguments) where calling twice is safe, else None."""
        ...


def room(table: dict, held: int, size: int, most: int, most_bytes: int) -> int:
    """What a memo of ``held`` characters holds once a new key of ``size`` is in it: ``table``
    emptied first when that would make it hold more than ``most`` keys or ``most_bytes``
    (memos kept by count alone held every call of 1 MiB arguments a replay made)."""
    if len(table) >= most or held + size > most_bytes:
        table.clear()
        held = 0
    return held + size


def unlisted(tool: JSON, arguments: JSON) -> tuple[JSON, tuple[str, ...]]:
    """``arguments`` without the keys the server's listed ``inputSchema`` does not name, and their pointers."""
    last = _UNLISTED[0]
    if (
        last is not None
        and last[0] is tool
        and last[1] is arguments
        and last[2] == contents(arguments)
    ):
        return last[3]
    kept, pointers = _read(_input_schema(tool), arguments, "")
    return _unlisted(tool, arguments, kept, pointers)


# The last arguments put through ``_read`` against a tool, and what it kept and ignored: the
# modelled server reads a valid call's arguments to answer it, and ``deliver.unread`` asks
# the same of the same objects right after. A hit is the same objects with the same
# ``contents`` of the arguments (changed in place since: read again; a listed schema is never
# changed in place, as ``validation._verdict`` says). The slot is read and replaced whole:
# threads never mix two.
_UNLISTED: list[tuple[JSON, JSON, bytes, tuple[JSON, tuple[str, ...]]] | None] = [None]


def _unlisted(
    tool: JSON, arguments: JSON, kept: JSON, pointers: list[str]
) -> tuple[JSON, tuple[str, ...]]:
    found = (kept, tuple(pointers))
    now = contents(arguments)
    # holding both keeps their ids unique; nothing kept for what ``contents`` cannot say
    _UNLISTED[0] = None if now is None else (tool, arguments, now, found)
    return found


def listed_violations(tool: JSON, arguments: JSON) -> tuple[Violation, ...]:
    """``arguments`` against the ``inputSchema`` a server lists for ``tool``."""
    schema = tool.get("inputSchema") if isinstance(tool, Mapping) else None
    if not isinstance(schema, (dict, bool)):
        return ()
    return validate(schema, arguments, SERVER_DIALECT).errors


class Caller(Protocol):
    def call(
        self, tool: str, arguments: JSON, meta: JSON, omit: bool, new_session: bool
    ) -> Answer: ...


class LiveServer:
    """The real server, through a connection (``mcp_matrix.run.matrix``'s, reopened after a failure).

    ``repeat_safe`` says whether the tool may be called more than once: then the intact call
    is made on the same connection right after the mutated one, as the client made it (its
    session, a new one for a client that opens one per call), so both meet the same server
    state, and the server is asked whether it reads a key its schema does not list; else a
    call goes out exactly once. ``reference`` replaces that intact call (``replay``'s own);
    ``on_answer`` hears of every answer (the run's circuit breaker). ``used`` says whether a
    call went to the shared session."""

    judges_results = True

    def __init__(
        self,
        conn: Caller,
        tools: Mapping[str, JSON],
        reference: Callable[[Intended], Answer | None] | None = None,
        on_answer: Callable[[str, Answer], None] | None = None,
        repeat_safe: Callable[[Intended], bool] | None = None,
    ) -> None:
        self.conn = conn
        self.tools = tools
        self._reference = reference
        self._on_answer = on_answer
        self._repeat_safe = repeat_safe
        self.used = False

    def send(self, plan: CallPlan) -> Answer:
        self.used = self.used or not plan.new_session
        answer = self.conn.call(
            plan.tool, plan.arguments, plan.meta, plan.omit_arguments, plan.new_session
        )
        if self._on_answer is not None:
            self._on_answer(plan.tool, answer)
        return answer

    def may_repeat(self, call: Intended) -> bool:
        return self._repeat_safe is not None and self._repeat_safe(call)

    def intact(self, call: Intended, plan: CallPlan) -> Answer | None:
        if self._reference is not None:
            return self._reference(call)
        return self.again(call, intact_plan(call, plan))

    def violations(self, tool: str, arguments: JSON) -> tuple[Violation, ...]:
        return listed_violations(self.tools.get(tool), arguments)

    def again(self, call: Intended, plan: CallPlan) -> Answer | None:
        return self.send(plan) if self.may_repeat(call) else None


def intact_plan(call: Intended, plan: CallPlan) -> CallPlan:
    """``plan`` with the intended arguments: the intact call, sent the way the mutated one was."""
    return replace(plan, arguments=call.arguments, omit_arguments=call.omit_arguments)


Rule = Callable[
    [JSON, JSON], Violation | None
]  # (inputSchema, arguments) -> a handler's refusal, or None


class SchemaServer:
    """Offline: a server that validates against the ``inputSchema`` it lists and reads only what it lists.

    An invalid call gets JSON-RPC -32602 with the validation errors as fields; ``rules`` add a
    handler's own refusals (the diff's at-least-one-of an alias and its target). A valid call
    succeeds with what the handler reads (the arguments kept to the listed properties) as its
    text, so the intact call's answer is comparable: calling twice is always safe here, and a
    key the schema does not list is never read (a real server shows whether it reads one only
    when it may be called again: ``LiveServer.again``).
    """

    judges_results = False  # its results are a model: no client check of them means anything

    MEMO = 4096  # distinct calls whose answer is remembered (a replay repeats its calls)
    # and at most this many characters of arguments in words in their keys (an answer holds
    # about as much again): 300 calls each carrying a 1 MiB string were all kept
    MEMO_BYTES = 32 << 20

    def __init__(self, tools: Mapping[str, JSON], rules: tuple[Rule, ...] = ()) -> None:
        self.tools = tools
        self.rules = rules
        self._answers: dict[tuple[str, str], Answer] = {}
        self._answers_bytes = 0  # characters of words the keys of ``_answers`` hold

    def violations(self, tool: str, arguments: JSON) -> tuple[Violation, ...]:
        """The listed schema's errors, else the handler rules'."""
        found = listed_violations(self.tools.get(tool), arguments)
        if found:
            return found
        schema = _input_schema(self.tools.get(tool))
        return tuple(v for v in (rule(schema, arguments) for rule in self.rules) if v is not None)

    def send(self, plan: CallPlan) -> Answer:
        return self.answer(plan.tool, None if plan.omit_arguments else plan.arguments)

    def may_repeat(self, call: Intended) -> bool:
        return True  # a model: nothing is written

    def intact(self, call: Intended, plan: CallPlan) -> Answer | None:
        return self.send(intact_plan(call, plan))

    def answer(self, tool: str, arguments: JSON) -> Answer:
        """How the modelled server answers ``tools/call`` of ``tool`` with ``arguments`` (the same
        arguments: the same answer, so the last ``MEMO`` distinct calls are remembered)."""
        try:
            key: tuple[str, str] | None = (tool, sorted_words(arguments))
        except (TypeError, ValueError):
            key = None
        known = self._answers.get(key) if key is not None else None
        if known is None:
            known = self._answer(tool, arguments)
            if key is not None:
                self._remember(key, known)
        return known

    def _remember(self, key: tuple[str, str], known: Answer) -> None:
        """Keep ``known``, emptying the memo first when it would pass ``MEMO`` or ``MEMO_BYTES``."""
        self._answers_bytes = room(
            self._answers, self._answers_bytes, len(key[1]), self.MEMO, self.MEMO_BYTES
        )
        self._answers[key] = known

    def _answer(self, tool: str, arguments: JSON) -> Answer:
        if tool not in self.tools:
            return Answer(error={"code": INVALID_PARAMS, "message": f"Unknown tool: {tool}"})
        found = self.violations(tool, {} if arguments is None else arguments)
        if found:
            return Answer(
                error={
                    "code": INVALID_PARAMS,
                    "message": "Invalid params: " + "; ".join(v.text for v in found[:3]),
                },
                violations=found,
            )
        listed = self.tools[tool]
        read, ignored = _read(_input_schema(listed), arguments, "")
        _unlisted(listed, arguments, read, ignored)  # ``deliver.unread`` asks it next
        text = json.dumps(read, sort_keys=True, default=str)
        return Answer(result={"content": [{"type": "text", "text": text}], "isError": False})

    def again(self, call: Intended, plan: CallPlan) -> Answer | None:
        return self.send(plan)


def _input_schema(tool: JSON) -> JSON:
    return tool.get("inputSchema") if isinstance(tool, Mapping) else None


def _read(schema: JSON, value: JSON, pointer: str) -> tuple[JSON, list[str]]:
    """What a handler that reads only the listed properties sees of ``value``, and the pointers it ignores.

    Only where the schema names its properties and leaves other keys open (closed ones were
    refused by validation; ``patternProperties`` or a schema for extra keys means they are read)."""
    if not isinstance(value, dict) or not isinstance(schema, Mapping):
        return value, []
    if "patternProperties" in schema or schema.get("additionalProperties") not in (None, True):
        return value, []
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    kept: dict[str, JSON] = {}
    ignored: list[str] = []
    for key, sub in value.items():
        where = f"{pointer}/{key}"
        if key in props:
            kept[key], inner = _read(props[key], sub, where)
            ignored += inner
        else:
            ignored.append(where)
    return kept, ignored
