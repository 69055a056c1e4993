// An MCP client (the official TypeScript SDK) that declares elicitation
// and runs one code-mode script through `mcpx serve --stdio`. It answers
// each approval mcpx asks for: decline when the message names fx_fail,
// else accept, with "always" set. It prints what it saw as one JSON
// object: the run's answer and every elicitation's params.
//
// Usage: node e2e-codemode.mjs <mcpx> [args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const out = { asked: [] };
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "mcpx-codemode", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  out.asked.push(req.params);
  if (req.params.message.includes("fx_fail")) return { action: "decline" };
  return { action: "accept", content: { always: true } };
});

const script = `
  const a = await proxy.call("fx_structured", {a: 1, b: 1});
  const b = await proxy.call("fx_structured", {a: 2, b: 2});
  let declined = null;
  try { await proxy.call("fx_fail", {}) } catch (e) { declined = e.message }
  const echo = await proxy.call("fx_echo", {message: "read only"});
  return {a: a.sum, b: b.sum, declined, echo};
`;
try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools;
  out.proxyActions = tools.find((t) => t.name === "proxy").inputSchema.properties.action.enum;
  const res = await client.callTool({ name: "proxy", arguments: { action: "run", code: script } });
  out.isError = res.isError === true;
  out.value = JSON.parse(res.content[0].text);
  await client.close();
} catch (err) {
  out.error = String(err && err.stack ? err.stack : err);
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
