"""A tiny stdio MCP server (stdlib only, plain JSON-RPC) that the hostile tests start as a user would.

    python tiny_server.py CONFIG.json [--api-key KEY]

CONFIG (JSON): ``tools`` (listed exactly as given, however malformed), ``env_file`` (write this
process's whole environment there as JSON at start), ``leak`` (a text the server repeats in its
tool descriptions, results and stderr: how a careless server echoes its own secrets),
``crash_on`` (a tool name whose call makes the server exit after writing ``leak`` to stderr).
Every tools/call answers with its name and arguments as text.
"""

import json
import os
import sys


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        config = json.load(fh)
    leak = config.get("leak", "")
    if config.get("env_file"):
        with open(config["env_file"], "w", encoding="utf-8") as fh:
            json.dump(dict(os.environ), fh)
    sys.stderr.write(f"tiny: started with {sys.argv[1:]} {leak}\n")
    sys.stderr.flush()
    tools = config.get("tools", [])
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tiny", "version": f"1 {leak}".strip()},
            }
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            if params.get("name") == config.get("crash_on"):
                sys.stderr.write(f"tiny: crashing in {params.get('name')} {leak}\n")
                sys.stderr.flush()
                os._exit(3)
            text = json.dumps({"name": params.get("name"), "arguments": params.get("arguments")})
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
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)


if __name__ == "__main__":
    main()
