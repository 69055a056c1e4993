// The official TypeScript SDK client, declaring URL-mode elicitation
// (2025-11-25), drives `mcpx serve --stdio` whose config has a server that
// needs an OAuth login. When mcpx asks it to open the authorization URL it
// accepts and plays the browser (a fetch that follows the redirects to
// mcpx's loopback callback); then it waits for the login to complete and
// for tools/list_changed, and calls a tool of the server. It prints what it
// saw as one JSON object on stdout.
//
// Usage: node e2e-oauth-client.mjs <mcpx> [args...]
// Env: E2E_TOOL (the tool to call once logged in, e.g. remote_whoami);
// E2E_STEPUP (a tool that needs more scopes: it is called, expected to
// fail, then called again once mcpx asked for and got the new login);
// E2E_EXPIRE (a URL to POST to that makes the server refuse the access
// token; E2E_TOOL is called again afterwards).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const out = { elicitations: [], completions: [], listChanged: 0 };
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "mcpx-e2e-oauth", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } } });

let wake = () => {};
const until = (cond, ms, what) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    const check = () => cond() && (clearTimeout(timer), resolve());
    const prev = wake;
    wake = () => (prev(), check());
    check();
  });

client.setRequestHandler(ElicitRequestSchema, async (req) => {
  out.elicitations.push(req.params);
  // The user opens the page: the browser follows the authorization server's
  // redirect back to mcpx.
  setTimeout(async () => {
    try {
      const r = await fetch(req.params.url);
      out.browserStatus = r.status;
      out.browserPage = await r.text();
    } catch (e) {
      out.browserError = String(e);
    }
    wake();
  }, 0);
  return { action: "accept" };
});
client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
  out.completions.push(n.params);
  wake();
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  out.listChanged++;
  wake();
});

try {
  await client.connect(transport);
  out.toolsBefore = (await client.listTools()).tools.map((t) => t.name);
  await until(() => out.completions.length > 0, 30000, "notifications/elicitation/complete");
  const tool = process.env.E2E_TOOL;
  await until(() => out.listChanged > 0, 30000, "tools/list_changed");
  for (let i = 0; i < 100; i++) {
    out.toolsAfter = (await client.listTools()).tools.map((t) => t.name);
    if (out.toolsAfter.includes(tool)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  out.call = await client.callTool({ name: tool, arguments: {} });
  if (process.env.E2E_EXPIRE) {
    await fetch(process.env.E2E_EXPIRE, { method: "POST" });
    out.callAfterExpiry = await client.callTool({ name: tool, arguments: {} });
  }
  const stepUp = process.env.E2E_STEPUP;
  if (stepUp) {
    out.stepUpFirst = await client.callTool({ name: stepUp, arguments: {} });
    await until(() => out.completions.length > 1, 30000, "the step-up login's notifications/elicitation/complete");
    out.stepUpAgain = await client.callTool({ name: stepUp, arguments: {} });
  }
  await client.close();
} catch (e) {
  out.error = String(e?.stack ?? e);
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
