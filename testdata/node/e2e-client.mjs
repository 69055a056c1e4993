// An independent MCP client for mcpx's end-to-end tests: the official
// TypeScript SDK drives `mcpx serve --stdio` and prints what it saw as one
// JSON object on stdout. The Go test asserts on it.
//
// Usage: node e2e-client.mjs <mcpx> [args...]
// Env: E2E_CALL (tool to call, JSON {name, arguments}), E2E_READ (a URI),
// E2E_PROMPT (JSON {name, arguments}), E2E_CHANGE (JSON {name, arguments}
// of a tool call that makes an upstream announce tools/list_changed).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const out = {};
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "mcpx-e2e", version: "1.0.0" }, { capabilities: {} });

let changed = 0;
let onChange = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changed++;
  onChange();
});

const timeout = (ms, what) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref());

try {
  await client.connect(transport);
  out.serverInfo = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.tools = (await client.listTools()).tools;
  out.prompts = (await client.listPrompts()).prompts;
  out.resources = (await client.listResources()).resources;
  out.resourceTemplates = (await client.listResourceTemplates()).resourceTemplates;
  if (process.env.E2E_CALL) {
    const c = JSON.parse(process.env.E2E_CALL);
    out.call = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
  }
  if (process.env.E2E_READ) {
    out.read = await client.readResource({ uri: process.env.E2E_READ });
  }
  if (process.env.E2E_PROMPT) {
    const p = JSON.parse(process.env.E2E_PROMPT);
    out.prompt = await client.getPrompt({ name: p.name, arguments: p.arguments ?? {} });
  }
  if (process.env.E2E_CHANGE) {
    const c = JSON.parse(process.env.E2E_CHANGE);
    const before = changed;
    const notified = new Promise((resolve) => {
      onChange = () => changed > before && resolve();
    });
    out.change = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
    await Promise.race([notified, timeout(10000, "tools/list_changed")]);
    // Let any duplicate notification arrive before counting.
    await new Promise((r) => setTimeout(r, 500));
    out.listChangedCount = changed - before;
    out.toolsAfterChange = (await client.listTools()).tools.map((t) => t.name);
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err), partial: out }) + "\n");
  process.exit(1);
}
