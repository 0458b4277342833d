"""A tiny stdio MCP server (stdlib only, plain JSON-RPC) that the hostile tests start as a user would.

    python tiny_server.py CONFIG.json [--api-key KEY]

CONFIG (JSON): ``tools`` (listed exactly as given, however malformed), ``env_file`` (write this
process's whole environment there as JSON at start), ``leak`` (a text the server repeats in its
tool descriptions, results and stderr: how a careless server echoes its own secrets),
``crash_on`` (a tool name whose call makes the server exit after writing ``leak`` to stderr).
Every tools/call answers with its name and arguments as text.

Hostile but valid options: ``record`` (a file each received line is appended to, as read),
``early_response`` (a "response" to the id after ``initialize``'s, an empty tools list, written
before reading that request: ``true`` in the same write as the ``initialize`` answer;
``{"wait": S, "hold": S}`` in a write of its own S seconds later, when the request already waits
in its stdin, then S more seconds before reading on),
``server_info`` (the ``serverInfo`` it answers), ``discover`` (its ``server/discover`` result;
without it the method is not found), ``initialize_error`` (the error object ``initialize`` is
answered with, for the versions in ``refuse`` or for all), ``call_text`` (the text every call answers, instead of its arguments), ``input_required`` (a
call without ``inputResponses`` is answered 2026-07-28 ``input_required``, asking for an
elicitation). Integers of any length are read and written exactly (the config and
messages may hold them).
"""

import json
import os
import sys
import time


def main() -> None:
    sys.set_int_max_str_digits(0)  # a test server of ours: integers of any length, exactly
    with open(sys.argv[1], encoding="utf-8") as fh:
        config = json.load(fh)
    leak = config.get("leak", "")
    if config.get("env_file"):
        with open(config["env_file"], "w", encoding="utf-8") as fh:
            json.dump(dict(os.environ), fh)
    sys.stderr.write(f"tiny: started with {sys.argv[1:]} {leak}\n")
    sys.stderr.flush()
    tools = config.get("tools", [])
    record = open(config["record"], "a", encoding="utf-8") if config.get("record") else None
    for line in sys.stdin:
        if record is not None:
            record.write(line)
            record.flush()
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, params = message["method"], message.get("params") or {}
        refused = config.get("refuse", [params.get("protocolVersion")])
        if (
            method == "initialize"
            and "initialize_error" in config
            and params.get("protocolVersion") in refused
        ):
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": config["initialize_error"]}
            print(json.dumps(reply), flush=True)
            continue
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": config.get("server_info")
                or {"name": "tiny", "version": f"1 {leak}".strip()},
            }
        elif method == "server/discover" and "discover" in config:
            result = config["discover"]
        elif method == "tools/list":
            result = {"tools": tools}
        elif (
            method == "tools/call"
            and config.get("input_required")
            and "inputResponses" not in params
        ):
            result = {
                "resultType": "input_required",
                "requestState": "tiny-1",
                "inputRequests": {
                    "e1": {"method": "elicitation/create", "params": {"message": "?"}}
                },
            }
        elif method == "tools/call":
            if params.get("name") == config.get("crash_on"):
                sys.stderr.write(f"tiny: crashing in {params.get('name')} {leak}\n")
                sys.stderr.flush()
                os._exit(3)
            text = config.get("call_text") or json.dumps(
                {"name": params.get("name"), "arguments": params.get("arguments")}
            )
            result = {
                "content": [{"type": "text", "text": f"{text} {leak}".strip()}],
                "isError": False,
            }
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": method},
            }
            print(json.dumps(reply), flush=True)
            continue
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        early = config.get("early_response") if method == "initialize" else None
        # The answer to a request not yet read: the client must not take it for that answer.
        forged = json.dumps({"jsonrpc": "2.0", "id": message["id"] + 1, "result": {"tools": []}})
        if early is True:
            answer += "\n" + forged
        print(answer, flush=True)
        if isinstance(early, dict):
            time.sleep(early.get("wait", 0))
            print(forged, flush=True)
            time.sleep(early.get("hold", 0))


if __name__ == "__main__":
    main()
