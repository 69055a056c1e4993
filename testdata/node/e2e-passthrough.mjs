// An MCP client that declares sampling, elicitation and roots (or none,
// with E2E_NO_CAPS=1) and drives `mcpx serve --stdio` through the protocol
// features mcpx relays; it prints what it saw as one JSON object.
//
// Usage: node e2e-passthrough.mjs <mcpx> [args...]
// Tool names are those of server-everything under the prefix "everything_".
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const noCaps = process.env.E2E_NO_CAPS === "1";
const out = { logs: [], updates: [], seen: {} };
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const capabilities = noCaps ? {} : { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };
const client = new Client({ name: "mcpx-passthrough", version: "1.0.0" }, { capabilities });

let roots = [{ uri: "file:///first", name: "first root" }];
if (!noCaps) {
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    out.seen.sampling = req.params;
    return { model: "test-model", role: "assistant", content: { type: "text", text: "sampled reply from the client" } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    out.seen.elicitation = req.params;
    return { action: "accept", content: { name: "Ada Lovelace" } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    out.seen.rootsAsked = (out.seen.rootsAsked || 0) + 1;
    return { roots };
  });
}
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => out.logs.push(n.params));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => out.updates.push(n.params.uri));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (res) => (res.content || []).map((c) => c.text || "").join("\n");
const attempt = async (key, fn) => {
  try {
    out[key] = await fn();
  } catch (err) {
    out[key] = { error: String(err && err.message ? err.message : err) };
  }
};

try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  out.tools = tools;

  await attempt("sampling", async () =>
    text(await client.callTool({ name: "everything_trigger-sampling-request", arguments: { prompt: "hello", maxTokens: 5 } })));
  await attempt("elicitation", async () =>
    text(await client.callTool({ name: "everything_trigger-elicitation-request", arguments: {} })));
  await attempt("roots1", async () => text(await client.callTool({ name: "everything_get-roots-list", arguments: {} })));
  if (!noCaps) {
    roots = [{ uri: "file:///second", name: "second root" }];
    await client.sendRootsListChanged();
    await sleep(500);
    await attempt("roots2", async () => text(await client.callTool({ name: "everything_get-roots-list", arguments: {} })));
  }

  await client.setLoggingLevel("debug");
  await attempt("logging", async () => text(await client.callTool({ name: "everything_toggle-simulated-logging", arguments: {} })));
  await attempt("completion", async () =>
    (await client.complete({ ref: { type: "ref/prompt", name: "everything_completable-prompt" }, argument: { name: "department", value: "E" } })).completion.values);

  const uri = "demo://resource/static/document/architecture.md";
  await client.subscribeResource({ uri });
  await attempt("subscriber", async () => text(await client.callTool({ name: "everything_toggle-subscriber-updates", arguments: {} })));
  for (let i = 0; i < 80 && (out.updates.length === 0 || out.logs.length === 0); i++) await sleep(100);
  await client.unsubscribeResource({ uri });

  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err), partial: out }) + "\n");
  process.exit(1);
}
