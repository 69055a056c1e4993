// Several concurrent sessions of the official TypeScript SDK client
// against `mcpx serve --http`, each with its own sampling handler, for
// mcpx's end-to-end tests. Each session runs a long operation with
// progress on one upstream ("slow_trigger-long-running-operation") while
// the sessions take turns asking another ("trigger-sampling-request")
// for a sampling round trip; one session at a time holds a call on that
// upstream, so mcpx can tell whose it is. Prints one JSON object.
//
// Usage: node http-sessions.mjs <url> <http|sse> <sessions> [rounds]
// Env: MCPX_TOKEN (bearer token, optional).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, mode, n = "2", roundsArg = "3"] = process.argv.slice(2);
const rounds = Number(roundsArg);
const headers = process.env.MCPX_TOKEN ? { Authorization: `Bearer ${process.env.MCPX_TOKEN}` } : {};

function transport() {
  if (mode === "sse") {
    return new SSEClientTransport(new URL(url), {
      requestInit: { headers },
      eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }) },
    });
  }
  return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
}

// turn serialises the sampling calls across sessions.
let turn = Promise.resolve();
const inTurn = (f) => {
  const p = turn.then(f);
  turn = p.catch(() => {});
  return p;
};

async function session(name) {
  const client = new Client({ name: `mcpx-http-${name}`, version: "1.0.0" }, { capabilities: { sampling: {} } });
  const out = { name, progress: [], sampled: [], samplingAsked: 0 };
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    out.samplingAsked++;
    return { role: "assistant", model: `model-${name}`, content: { type: "text", text: `answer from ${name}` } };
  });
  const tr = transport();
  await client.connect(tr);
  // What the transport delivers, in order: the SDK drops a progress
  // notification it gets in the same read as the response (it handles
  // notifications a microtask later), so onprogress alone cannot tell
  // what mcpx sent.
  out.wire = [];
  const deliver = tr.onmessage;
  tr.onmessage = (m, extra) => {
    if (m.method === "notifications/progress") out.wire.push(m.params.progress);
    if (m.result?.content?.[0]?.text?.startsWith("Long running operation")) out.wireBeforeResult ??= out.wire.length;
    deliver(m, extra);
  };
  out.sessionId = client.transport.sessionId ?? null;
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const long = client
    .callTool(
      { name: "slow_trigger-long-running-operation", arguments: { duration: 2, steps: 8 } },
      undefined,
      { onprogress: (p) => out.progress.push(p.progress), timeout: 60000 },
    )
    .then((r) => {
      out.longResult = r.content?.[0]?.text ?? "";
      out.progressBeforeResult = out.progress.length;
    });
  for (let i = 0; i < rounds; i++) {
    const r = await inTurn(() =>
      client.callTool({ name: "trigger-sampling-request", arguments: { prompt: `${name}-${i}`, maxTokens: 10 } }),
    );
    out.sampled.push(r.content?.[0]?.text ?? "");
  }
  await long;
  await client.close();
  return out;
}

try {
  const names = Array.from({ length: Number(n) }, (_, i) => String.fromCharCode(65 + i));
  const sessions = await Promise.all(names.map(session));
  process.stdout.write(JSON.stringify({ sessions }) + "\n");
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err && err.stack ? err.stack : err) }) + "\n");
  process.exit(1);
}
