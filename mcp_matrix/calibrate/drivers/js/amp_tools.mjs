// Driver: Amp (npm @sourcegraph/amp), list-only. Amp's agent loop runs against its own service,
// which cannot be pointed at a local model, but `amp tools list --json` lists every active tool
// (the MCP ones included) and `amp tools show NAME --json` prints one tool's name, description and
// inputSchema, with no model request. This driver runs both against the tapped server and prints
// what Amp listed (notes.listed); the recipe is list_only, so the record compares the discovery
// cells only and no call is made.
// Usage: node amp_tools.mjs AMP_BINARY [amp options, e.g. --mcp-config FILE]

import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { run } from "./common.mjs";

const [binary, ...options] = process.argv.slice(2);
const PARALLEL = 3; // `tools show` starts Amp and the server each time: 130 tools take minutes
const execAsync = promisify(execFile);

async function amp(args) {
  const { stdout } = await execAsync(binary, [...args, ...options], {
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

async function showAll(names) {
  const shown = new Array(names.length);
  let next = 0;
  async function worker() {
    while (next < names.length) {
      const i = next++;
      shown[i] = await amp(["tools", "show", names[i], "--json"]);
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return shown;
}

await run(async (env, out) => {
  out.notes.version = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  const all = await amp(["tools", "list", "--json"]);
  const mcp = all.filter((t) => t && typeof t.source === "string" && t.source.startsWith("mcp"));
  const shown = await showAll(mcp.map((t) => t.name));
  out.notes.listed = shown.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
    source: t.source,
  }));
  out.tools_seen = out.notes.listed.map((t) => t.name);
});
