// Driver: the Claude Agent SDK for TypeScript (@anthropic-ai/claude-agent-sdk) with one MCP server.
// As its docs show: query({prompt, options: {mcpServers, allowedTools}}) and read the message
// stream to the result. The SDK starts the Claude Code binary it bundles
// (@anthropic-ai/claude-agent-sdk-linux-x64), which is the MCP client: this driver only passes the
// server and points ANTHROPIC_BASE_URL at the fake endpoint. ENABLE_TOOL_SEARCH=false as in the
// claude-code recipe: by default MCP tools are deferred behind ToolSearch (names only).
import { FAKE_KEY, PROMPT, installedVersion, load, run } from "./common.mjs";

function server(env) {
  if (env.serverUrl) return { type: "http", url: env.serverUrl };
  return { type: "stdio", command: env.command[0], args: env.command.slice(1) };
}

run(async (env, out) => {
  out.notes.packages = Object.fromEntries(
    ["@anthropic-ai/claude-agent-sdk", "@anthropic-ai/claude-agent-sdk-linux-x64"].map((p) => [p, installedVersion(p)]),
  );
  const { query } = await load("@anthropic-ai/claude-agent-sdk");
  const stderr = [];
  const messages = query({
    prompt: PROMPT,
    options: {
      mcpServers: { [env.serverName]: server(env) },
      strictMcpConfig: true,
      allowedTools: [`mcp__${env.serverName}`],
      maxTurns: 4,
      model: env.model,
      env: {
        ...process.env,
        ANTHROPIC_BASE_URL: env.modelUrl,
        ANTHROPIC_API_KEY: FAKE_KEY,
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        MCP_TIMEOUT: "60000",
        ENABLE_TOOL_SEARCH: "false",
      },
      stderr: (data) => stderr.length < 50 && stderr.push(String(data).slice(0, 500)),
    },
  });
  const calls = [];
  for await (const message of messages) {
    if (message.type === "system" && message.subtype === "init") {
      out.tools_seen = (message.tools || []).filter((t) => t.startsWith("mcp__"));
      out.notes.mcp_servers = message.mcp_servers;
      out.notes.claude_code_version = message.claude_code_version;
    }
    if (message.type === "assistant") {
      for (const part of message.message.content || []) {
        if (part.type === "tool_use") calls.push({ name: part.name, arguments: part.input });
      }
    }
    if (message.type === "result") {
      out.notes.result = { subtype: message.subtype, is_error: message.is_error, text: String(message.result ?? "").slice(0, 500) };
    }
  }
  out.notes.calls = calls;
  if (stderr.length) out.notes.stderr = stderr;
});
