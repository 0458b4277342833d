"""What the model got back for each scripted call: the tool results in the client's next request.

Why: a client may give the model an error although the server did the work (a tool with an
``outputSchema`` answering text only), and a model that sees an error may retry a call that
already had its effect. Only the follow-up request shows what the model was told, so each
tool result found there is tied back to the fake model's call by its id (the random part every
API's id keeps), else by the model-facing name.
"""

from __future__ import annotations

from mcp_matrix.core.jsontypes import JSON


def _text(content: JSON) -> str:
    """A result's text, however the API nests it (string, content blocks, a response object)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(c) for c in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content", "response", "result", "error", "message"):
            if key in content:
                return _text(content[key])
        return ""
    return "" if content is None else str(content)


def _results(api: str, body: JSON) -> list[tuple[str, str, str, bool]]:
    """(id, name, text, is_error) of each tool result a request body holds."""
    if not isinstance(body, dict):
        return []
    out: list[tuple[str, str, str, bool]] = []
    if api == "anthropic":
        for m in body.get("messages") or []:
            for c in (m.get("content") if isinstance(m, dict) else None) or []:
                if isinstance(c, dict) and c.get("type") == "tool_result":
                    out.append(
                        (
                            str(c.get("tool_use_id", "")),
                            "",
                            _text(c.get("content")),
                            c.get("is_error") is True,
                        )
                    )
    elif api == "openai-chat":
        for m in body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "tool":
                out.append(
                    (
                        str(m.get("tool_call_id", "")),
                        str(m.get("name", "")),
                        _text(m.get("content")),
                        False,
                    )
                )
    elif api == "openai-responses":
        for i in body.get("input") or [] if isinstance(body.get("input"), list) else []:
            if isinstance(i, dict) and str(i.get("type", "")).endswith("_call_output"):
                out.append((str(i.get("call_id", "")), "", _text(i.get("output")), False))
    elif api == "gemini":
        for c in body.get("contents") or []:
            for p in (c.get("parts") if isinstance(c, dict) else None) or []:
                r = (
                    p.get("functionResponse") or p.get("function_response")
                    if isinstance(p, dict)
                    else None
                )
                if isinstance(r, dict):
                    out.append(
                        (
                            str(r.get("id", "")),
                            str(r.get("name", "")),
                            _text(r.get("response")),
                            False,
                        )
                    )
    return out


def model_results(requests: list[dict]) -> dict[str, dict]:
    """Server tool -> ``{"text", "is_error"}``: the first result the model got for its call."""
    made = [
        c for r in requests for c in r.get("calls") or [] if isinstance(c, dict) and c.get("id")
    ]
    out: dict[str, dict] = {}
    for r in requests:
        for rid, name, text, is_error in _results(str(r.get("api", "")), r.get("body")):
            call = next(
                (c for c in made if rid and str(c["id"]).rsplit("_", 1)[-1] in rid), None
            ) or next((c for c in made if name and name == c.get("model_name")), None)
            if call is not None and call.get("tool") not in out:
                out[str(call["tool"])] = {"text": text[:2000], "is_error": is_error}
    return out
