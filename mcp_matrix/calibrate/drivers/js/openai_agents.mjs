// Driver: the OpenAI Agents SDK for JavaScript (@openai/agents) with one MCP server.
// As its docs show: new MCPServerStdio({command, args}) (or MCPServerStreamableHttp), connect(),
// new Agent({mcpServers: [server]}), run(agent, prompt). The model client is an OpenAI client on
// the fake endpoint (setDefaultOpenAIClient), over the Responses API (the SDK's default) or Chat
// Completions (setOpenAIAPI). Tracing is off (it would upload to OpenAI). Option `strict`
// sets mcpConfig {convertSchemasToStrict: true}.
import { FAKE_KEY, PROMPT, installedVersion, load, run } from "./common.mjs";

function options() {
  try {
    return JSON.parse(process.env.MCP_MATRIX_DRIVER_OPTIONS || "{}");
  } catch {
    process.stderr.write("driver: MCP_MATRIX_DRIVER_OPTIONS must be a JSON object\n");
    process.exit(2);
  }
}

run(async (env, out) => {
  const strict = Boolean(options().strict);
  out.notes.packages = Object.fromEntries(
    ["@openai/agents", "@openai/agents-core", "@openai/agents-openai", "@modelcontextprotocol/client", "openai"].map(
      (p) => [p, installedVersion(p)],
    ),
  );
  out.notes.strict = strict;
  const agents = await load("@openai/agents");
  const { default: OpenAI } = await load("openai");
  agents.setTracingDisabled(true);
  agents.setDefaultOpenAIClient(new OpenAI({ baseURL: `${env.modelUrl}/v1`, apiKey: FAKE_KEY }));
  if (env.provider === "openai-chat") agents.setOpenAIAPI("chat_completions");
  else if (env.provider === "openai-responses") agents.setOpenAIAPI("responses");
  else throw new Error(`provider ${env.provider}: this driver speaks OpenAI only`);
  const server = env.serverUrl
    ? new agents.MCPServerStreamableHttp({ url: env.serverUrl, name: env.serverName })
    : new agents.MCPServerStdio({ command: env.command[0], args: env.command.slice(1), name: env.serverName });
  await server.connect();
  try {
    const agent = new agents.Agent({
      name: "calibration",
      instructions: PROMPT,
      model: env.model,
      mcpServers: [server],
      mcpConfig: { convertSchemasToStrict: strict },
    });
    const tools = await agent.getAllTools(new agents.RunContext());
    out.tools_seen = tools.map((t) => t.name);
    out.notes.strict_tools = tools.filter((t) => t.strict).map((t) => t.name);
    const result = await agents.run(agent, PROMPT, { maxTurns: 8 });
    out.notes.final_text = String(result.finalOutput ?? "").slice(0, 500);
  } finally {
    await server.close();
  }
});
