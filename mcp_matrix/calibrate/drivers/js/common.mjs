// What the JavaScript library drivers share: settings from MCP_MATRIX_*, the contract's one
// JSON line, and error capture (a library exception is a finding: print it, exit 0).
// Node built-ins only: the libraries come from the cache folder the recipe points at.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

// The fake model refuses a request without the run's key; the harness passes it (never a real key).
export const FAKE_KEY = process.env.MCP_MATRIX_MODEL_KEY ?? "sk-mcp-matrix-fake-key";
export const PROMPT = "Call the tools you are given, as you are told, then stop.";

export function readEnv() {
  const e = process.env;
  const modelUrl = (e.MCP_MATRIX_MODEL_URL || "").replace(/\/+$/, "");
  const provider = e.MCP_MATRIX_PROVIDER || "";
  const serverUrl = e.MCP_MATRIX_SERVER_URL || null;
  let command = [];
  if (e.MCP_MATRIX_SERVER_COMMAND) {
    try {
      command = JSON.parse(e.MCP_MATRIX_SERVER_COMMAND);
    } catch {
      command = null;
    }
    if (!Array.isArray(command) || !command.length || command.some((a) => typeof a !== "string")) {
      process.stderr.write("driver: MCP_MATRIX_SERVER_COMMAND must be a JSON list of strings\n");
      process.exit(2);
    }
  }
  if (!modelUrl || !provider || !(command.length || serverUrl)) {
    process.stderr.write(
      "driver: MCP_MATRIX_MODEL_URL, MCP_MATRIX_PROVIDER and MCP_MATRIX_SERVER_COMMAND (or MCP_MATRIX_SERVER_URL) must be set\n",
    );
    process.exit(2);
  }
  const defaults = { anthropic: "claude-sonnet-4-5", gemini: "gemini-2.5-flash" };
  return {
    modelUrl,
    provider,
    serverName: e.MCP_MATRIX_SERVER_NAME || "probe",
    command,
    serverUrl,
    model: e.MCP_MATRIX_MODEL || defaults[provider] || "gpt-4o",
  };
}

function describe(err) {
  while (err && err.errors && err.errors.length && !err.message) err = err.errors[0];
  const type = (err && (err.name || (err.constructor && err.constructor.name))) || typeof err;
  const message = err && err.message !== undefined ? String(err.message) : String(err);
  return [message.slice(0, 4000), type];
}

export async function run(main) {
  const env = readEnv();
  const out = { ok: false, error: null, error_type: null, tools_seen: [], notes: {} };
  try {
    await main(env, out);
    if (out.error === null) out.ok = true;
  } catch (err) {
    [out.error, out.error_type] = describe(err);
    if (err && err.stack) out.notes.stack_tail = String(err.stack).split("\n").slice(0, 8);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
}

// The library lives in the recipe's cache folder (MCP_MATRIX_INSTALL, else the cwd), not
// beside this script, so bare specifiers are resolved from there.
const installDir = (process.env.MCP_MATRIX_INSTALL || process.cwd()).replace(/\/+$/, "") + "/";
const requireFromInstall = createRequire(installDir);

export async function load(specifier) {
  return import(pathToFileURL(requireFromInstall.resolve(specifier)).href);
}

export function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(installDir + "node_modules/" + pkg + "/package.json", "utf8")).version;
  } catch {
    return null;
  }
}
