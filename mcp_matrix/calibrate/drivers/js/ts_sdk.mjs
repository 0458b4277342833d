// Driver: the official MCP TypeScript SDK client under a minimal host: tools go to the model
// exactly as Client.listTools returned them (no rewriting), calls go through Client.callTool.
// What is observed is the SDK's own doing: its Zod tools/list gate and its call path.
import { FAKE_KEY, PROMPT, installedVersion, load, run } from "./common.mjs";

const MAX_TURNS = 8;

async function post(url, body, headers) {
  const resp = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (!resp.ok) throw new Error(`model endpoint answered ${resp.status}: ${(await resp.text()).slice(0, 300)}`);
  return resp.json();
}

function parseArgs(raw) {
  if (typeof raw !== "string") return raw;
  try {
    return JSON.parse(raw || "{}");
  } catch {
    return raw;
  }
}

// One provider dialect: how tools are declared, how calls are read, how results go back.
const DIALECTS = {
  anthropic: {
    path: "/v1/messages",
    headers: { "x-api-key": FAKE_KEY, "anthropic-version": "2023-06-01" },
    start: () => [{ role: "user", content: PROMPT }],
    body: (env, tools, msgs) => ({
      model: env.model,
      max_tokens: 1024,
      messages: msgs,
      tools: tools.map((t) => ({ name: t.name, description: t.description || "", input_schema: t.inputSchema })),
    }),
    calls: (r) => (r.content || []).filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: b.input })),
    append: (msgs, r, calls, outs) => {
      msgs.push({ role: "assistant", content: r.content });
      msgs.push({ role: "user", content: calls.map((c, i) => ({ type: "tool_result", tool_use_id: c.id, content: outs[i] })) });
    },
  },
  "openai-chat": {
    path: "/v1/chat/completions",
    headers: { authorization: `Bearer ${FAKE_KEY}` },
    start: () => [{ role: "user", content: PROMPT }],
    body: (env, tools, msgs) => ({
      model: env.model,
      messages: msgs,
      tools: tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description || "", parameters: t.inputSchema },
      })),
    }),
    calls: (r) => {
      const msg = ((r.choices || [])[0] || {}).message || {};
      return (msg.tool_calls || []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), msg }));
    },
    append: (msgs, r, calls, outs) => {
      msgs.push(calls[0].msg);
      calls.forEach((c, i) => msgs.push({ role: "tool", tool_call_id: c.id, content: outs[i] }));
    },
  },
  "openai-responses": {
    path: "/v1/responses",
    headers: { authorization: `Bearer ${FAKE_KEY}` },
    start: () => [{ role: "user", content: PROMPT }],
    body: (env, tools, items) => ({
      model: env.model,
      input: items,
      tools: tools.map((t) => ({ type: "function", name: t.name, description: t.description || "", parameters: t.inputSchema })),
    }),
    calls: (r) =>
      (r.output || []).filter((o) => o.type === "function_call").map((o) => ({ id: o.call_id, name: o.name, args: parseArgs(o.arguments), item: o })),
    append: (items, r, calls, outs) => {
      calls.forEach((c, i) => {
        items.push(c.item);
        items.push({ type: "function_call_output", call_id: c.id, output: outs[i] });
      });
    },
  },
  gemini: {
    path: null,
    headers: { "x-goog-api-key": FAKE_KEY },
    start: () => [{ role: "user", parts: [{ text: PROMPT }] }],
    body: (env, tools, contents) => ({
      contents,
      tools: [
        {
          functionDeclarations: tools.map((t) => ({ name: t.name, description: t.description || "", parametersJsonSchema: t.inputSchema })),
        },
      ],
    }),
    calls: (r) => {
      const parts = ((((r.candidates || [])[0] || {}).content || {}).parts) || [];
      return parts.filter((p) => p.functionCall).map((p) => ({ name: p.functionCall.name, args: p.functionCall.args, parts }));
    },
    append: (contents, r, calls, outs) => {
      contents.push({ role: "model", parts: calls[0].parts });
      contents.push({
        role: "user",
        parts: calls.map((c, i) => ({ functionResponse: { name: c.name, response: { result: outs[i] } } })),
      });
    },
  },
};

async function transport(env) {
  if (env.serverUrl) {
    const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/client/streamableHttp.js");
    return new StreamableHTTPClientTransport(new URL(env.serverUrl));
  }
  const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
  return new StdioClientTransport({ command: env.command[0], args: env.command.slice(1) });
}

run(async (env, out) => {
  out.notes.packages = { "@modelcontextprotocol/sdk": installedVersion("@modelcontextprotocol/sdk") };
  const dialect = DIALECTS[env.provider];
  if (!dialect) throw new Error(`unknown provider ${env.provider}`);
  const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
  const client = new Client({ name: "mcp-matrix-minimal-host", version: "1.0.0" });
  await client.connect(await transport(env));
  try {
    const tools = [];
    let cursor;
    for (let i = 0; i < 100; i++) {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    out.tools_seen = tools.map((t) => t.name);
    const url = env.modelUrl + (dialect.path || `/v1beta/models/${env.model}:generateContent`);
    const msgs = dialect.start();
    out.notes.calls = [];
    for (let turn = 0; turn < MAX_TURNS; turn++) {
      const r = await post(url, dialect.body(env, tools, msgs), dialect.headers);
      const calls = dialect.calls(r);
      if (!calls.length) break;
      const outs = [];
      for (const c of calls) {
        out.notes.calls.push({ name: c.name, arguments: c.args });
        try {
          outs.push(JSON.stringify(await client.callTool({ name: c.name, arguments: c.args })));
        } catch (err) {
          (out.notes.call_errors ||= []).push({ tool: c.name, error: String(err && err.message).slice(0, 500), error_type: err && err.name });
          outs.push(`error: ${err && err.message}`);
        }
      }
      dialect.append(msgs, r, calls, outs);
    }
  } finally {
    await client.close();
  }
});
