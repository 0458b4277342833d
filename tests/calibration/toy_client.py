"""A tiny stand-in app for the harness tests: reads its MCP config, lists the server's tools,
asks the (fake) Anthropic model, runs the tool calls it answers and asks again.

Run by the harness as a real process, so the tests exercise install-free recipes, templates,
the minimal env, the tap and the fake model end to end.
"""

import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.request


def rpc(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()
    if "id" in msg:
        return json.loads(proc.stdout.readline())


def ask(body):
    req = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        json.dumps(body).encode(),
        {"content-type": "application/json", "x-api-key": os.environ["ANTHROPIC_API_KEY"]},
    )
    return json.loads(urllib.request.urlopen(req, timeout=30).read())


def model_name(server, tool):
    """``mcp__<server>__<tool>``; with TOY_RENAME as Copilot CLI and Cline CLI rename: invalid
    characters as ``-``, over 64 characters cut to 55 plus ``_`` and 8 of its SHA-1."""
    if not os.environ.get("TOY_RENAME"):
        return f"mcp__{server}__{tool}"
    name = re.sub(r"[^A-Za-z0-9_-]", "-", f"{server}-{tool}")
    if len(name) > 64:
        name = name[:55] + "_" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return name


def main():
    config = json.load(open(sys.argv[1]))
    ((name, server),) = config["mcpServers"].items()
    proc = subprocess.Popen(
        [server["command"], *server["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    rpc(
        proc,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "toy", "version": "9.9.9"},
            },
        },
    )
    rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
    if os.environ.get("TOY_HANG"):
        import time

        time.sleep(3600)
    shown = {model_name(name, t["name"]): t["name"] for t in tools}
    offered = [
        {
            "name": shown_as,
            "description": t.get("description", ""),
            "input_schema": t["inputSchema"],
        }
        for shown_as, t in zip(shown, tools)
    ]
    messages = [{"role": "user", "content": sys.argv[2]}]
    answer = ask({"model": "m", "messages": messages, "tools": offered})
    results = []
    for block in answer["content"]:
        if block["type"] == "tool_use":
            tool = shown[block["name"]]
            out = rpc(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": block["input"]},
                },
            )
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block["id"],
                    "content": json.dumps(out["result"]),
                }
            )
    messages += [
        {"role": "assistant", "content": answer["content"]},
        {"role": "user", "content": results},
    ]
    final = ask({"model": "m", "messages": messages, "tools": offered})
    print(final["content"][0]["text"])


if __name__ == "__main__":
    main()
