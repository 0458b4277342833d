// Driver: the Vercel AI SDK MCP client (@ai-sdk/mcp) feeding generateText with one provider.
// As the AI SDK docs show: createMCPClient with the stdio (or HTTP) transport, tools() in
// schemas:'automatic' mode, generateText with a step limit so the tool loop runs to the end.
import { FAKE_KEY, PROMPT, installedVersion, load, run } from "./common.mjs";

async function model(env) {
  if (env.provider === "anthropic") {
    const { createAnthropic } = await load("@ai-sdk/anthropic");
    return createAnthropic({ baseURL: `${env.modelUrl}/v1`, apiKey: FAKE_KEY })(env.model);
  }
  if (env.provider === "gemini") {
    const { createGoogleGenerativeAI } = await load("@ai-sdk/google");
    return createGoogleGenerativeAI({ baseURL: `${env.modelUrl}/v1beta`, apiKey: FAKE_KEY })(env.model);
  }
  const { createOpenAI } = await load("@ai-sdk/openai");
  const openai = createOpenAI({ baseURL: `${env.modelUrl}/v1`, apiKey: FAKE_KEY });
  if (env.provider === "openai-chat") return openai.chat(env.model);
  if (env.provider === "openai-responses") return openai.responses(env.model);
  throw new Error(`unknown provider ${env.provider}`);
}

async function transport(env) {
  if (env.serverUrl) return { type: "http", url: env.serverUrl };
  const { Experimental_StdioMCPTransport } = await load("@ai-sdk/mcp/mcp-stdio");
  return new Experimental_StdioMCPTransport({ command: env.command[0], args: env.command.slice(1) });
}

run(async (env, out) => {
  out.notes.packages = Object.fromEntries(
    ["ai", "@ai-sdk/mcp", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google"].map((p) => [p, installedVersion(p)]),
  );
  const { createMCPClient } = await load("@ai-sdk/mcp");
  const { generateText, stepCountIs } = await load("ai");
  const client = await createMCPClient({ transport: await transport(env) });
  try {
    const tools = await client.tools();
    out.tools_seen = Object.keys(tools);
    const result = await generateText({
      model: await model(env),
      tools,
      prompt: PROMPT,
      stopWhen: stepCountIs(8),
    });
    out.notes.calls = result.steps.flatMap((s) =>
      s.toolCalls.map((c) => ({ name: c.toolName, arguments: c.input })),
    );
    out.notes.tool_errors = result.steps.flatMap((s) =>
      s.content.filter((p) => p.type === "tool-error").map((p) => ({ name: p.toolName, error: String(p.error) })),
    );
    out.notes.final_text = result.text;
  } finally {
    await client.close();
  }
});
