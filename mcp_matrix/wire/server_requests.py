"""What a client answers when the server asks it something, in either era.

In the handshake era the server sends a request (``roots/list``, ``elicitation/create``,
``sampling/createMessage``, ``ping``) and ``reply`` is the JSON-RPC answer: the same one a client
with the session's capabilities gives, or an error when it did not declare the capability. In
the 2026-07-28 era a ``tools/call`` comes back ``resultType: input_required`` and ``retry`` is
the call again with ``inputResponses``, answering each request as ``reply`` would.
"""

from __future__ import annotations

from collections.abc import Mapping


def input_answer(method: str, capabilities: Mapping[str, object]) -> object:
    """What a client with these capabilities answers to one request (None: it cannot)."""
    if method == "roots/list" and "roots" in capabilities:
        return {"roots": []}
    if method == "elicitation/create" and "elicitation" in capabilities:
        return {"action": "decline"}
    return None


def reply(message: Mapping[str, object], capabilities: Mapping[str, object]) -> dict[str, object]:
    """The JSON-RPC answer to a server's request (handshake era)."""
    method = message.get("method")
    out: dict[str, object] = {"jsonrpc": "2.0", "id": message.get("id")}
    result = {} if method == "ping" else input_answer(str(method), capabilities)
    if result is not None:
        out["result"] = result
    elif method == "sampling/createMessage" and "sampling" in capabilities:
        out["error"] = {"code": -32603, "message": "mcp-matrix does not sample"}
    else:
        out["error"] = {"code": -32601, "message": f"client does not support {method}"}
    return out


def input_required(result: object) -> bool:
    """Whether a ``tools/call`` result asks for input before it answers (2026-07-28)."""
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def retry(params: dict, result: dict, responses: dict[str, object]) -> dict:
    """The call's params again, with ``responses`` as its ``inputResponses`` and the server's
    ``requestState`` handed back (an earlier round's of either replaced)."""
    again = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    if responses:
        again["inputResponses"] = responses
    if result.get("requestState") is not None:
        again["requestState"] = result["requestState"]
    return again
