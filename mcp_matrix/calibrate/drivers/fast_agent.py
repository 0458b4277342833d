"""Driver: fast-agent (``fast-agent-mcp``) with one MCP server and one provider.

As fast-agent's docs show: a ``fastagent.config.yaml`` naming the MCP server and the
provider's ``base_url`` and key, a ``FastAgent`` app with one ``@fast.agent(servers=[...])``
and ``agent.send``. The config is written to a temporary folder the run changes into; the
model string (``openai.``, ``anthropic.``, ``google.``) selects fast-agent's own provider.
"""

from __future__ import annotations

import json
import os
import tempfile

try:  # fast-agent-mcp 0.3 and later: the package is ``fast_agent``
    from fast_agent import FastAgent
except ImportError:  # 0.2.x: ``mcp_agent``
    from mcp_agent.core.fastagent import FastAgent  # type: ignore[no-redef]

from mcp_matrix.calibrate.drivers._common import (
    FAKE_KEY,
    PROMPT,
    DriverEnv,
    DriverOutcome,
    installed_version,
    run,
)


def _config(env: DriverEnv) -> tuple[str, str]:
    """(config YAML, model string); JSON is valid YAML, so json.dumps writes it."""
    if env.server_url:
        server: dict[str, object] = {"transport": "http", "url": env.server_url}
    else:
        server = {"command": env.command, "args": env.args}
    providers = {
        "openai-chat": ("openai", f"{env.model_url}/v1"),
        "anthropic": ("anthropic", env.model_url),
        "gemini": ("google", f"{env.model_url}/v1beta"),
    }
    if env.provider not in providers:
        raise ValueError(
            f"provider {env.provider!r}: this driver speaks openai-chat, anthropic, gemini"
        )
    section, base_url = providers[env.provider]
    doc = {
        "mcp": {"servers": {env.server_name: server}},
        section: {"api_key": FAKE_KEY, "base_url": base_url},
        "logger": {
            "level": "error",
            "progress_display": False,
            "show_chat": False,
            "show_tools": False,
        },
    }
    return json.dumps(doc), f"{section}.{env.model}"


async def main(env: DriverEnv, out: DriverOutcome) -> None:
    out.notes["packages"] = {p: installed_version(p) for p in ("fast-agent-mcp", "mcp")}
    config, model = _config(env)
    folder = tempfile.mkdtemp(prefix="fast-agent-")
    path = os.path.join(folder, "fastagent.config.yaml")
    with open(path, "w") as fh:  # noqa: ASYNC230 - once, before the app starts
        fh.write(config)
    os.chdir(folder)
    fast = FastAgent("calibration", config_path=path, parse_cli_args=False)

    @fast.agent(name="calibration", instruction=PROMPT, servers=[env.server_name], model=model)
    async def _agent() -> None:  # fast-agent registers the agent by decoration
        return None

    async with fast.run() as app:
        agent = app.calibration
        listed = await agent.list_tools()
        out.tools_seen = [t.name for t in listed.tools]
        reply = await agent.send(PROMPT)
        out.notes["final_text"] = str(reply)[:300]


if __name__ == "__main__":
    run(main)
