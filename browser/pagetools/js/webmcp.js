// mcpx page tools: the script mcpx evaluates in a tab (Runtime.evaluate)
// to find the WebMCP tools the page registered and to run them. It is a
// function expression; Go calls it with one request object:
//
//   {op: "list"}                       -> {href, title, api, tools: [...]}
//   {op: "start", id, name, args, wait} -> {started: true, pending: true} |
//                                         {missing: true} | {started: true, ...outcome}
//                                         (it waits up to wait ms for the answer)
//   {op: "poll", id}                   -> {pending: true} | {lost: true} |
//                                         {ok: true, result: "<JSON text>"} |
//                                         {ok: false, error: "..."}
//
// It speaks the WebMCP API as the MCP-B packages (@mcp-b/global,
// @mcp-b/webmcp-polyfill) and Chromium put it on the page:
// document.modelContext (navigator.modelContext, the deprecated alias)
// with getTools() and executeTool(tool, argsJson); else the testing
// surface navigator.modelContextTesting with listTools() and
// executeTool(name, argsJson). A call is started and then polled, so that
// no evaluation waits on the page for long: the page may never answer.
//
// Everything the page hands back is copied through JSON, so that no page
// object (a Window, a function) reaches mcpx.
(async (req) => {
  const ctx = document.modelContext || navigator.modelContext;
  const testing = navigator.modelContextTesting;
  const api = ctx && typeof ctx.getTools === 'function' ? 'modelContext'
    : testing && typeof testing.listTools === 'function' ? 'modelContextTesting' : '';
  const plain = (v) => {
    if (typeof v === 'string') {
      try { return JSON.parse(v); } catch { return undefined; }
    }
    if (v === null || typeof v !== 'object') return undefined;
    try { return JSON.parse(JSON.stringify(v)); } catch { return undefined; }
  };
  const text = (v) => (typeof v === 'string' ? v : '');
  const descriptors = async () => {
    if (api === 'modelContext') return Array.from((await ctx.getTools()) || []);
    if (api === 'modelContextTesting') return Array.from((await testing.listTools()) || []);
    return [];
  };
  const calls = window.__mcpxPageCalls || new Map();
  if (!window.__mcpxPageCalls) {
    Object.defineProperty(window, '__mcpxPageCalls', { value: calls, enumerable: false });
  }

  switch (req.op) {
    case 'list': {
      const out = { href: location.href, title: document.title, api, tools: [] };
      if (!api) return out;
      for (const t of (await descriptors()).slice(0, 256)) {
        if (!t || typeof t.name !== 'string') continue;
        out.tools.push({
          name: t.name, title: text(t.title), description: text(t.description),
          inputSchema: plain(t.inputSchema), annotations: plain(t.annotations),
        });
      }
      return out;
    }
    case 'start': {
      if (!api) return { missing: true };
      const tool = (await descriptors()).find((t) => t && t.name === req.name);
      if (!tool) return { missing: true };
      const call = { done: false, outcome: null };
      calls.set(req.id, call);
      let finished;
      const finish = new Promise((resolve) => { finished = resolve; });
      const run = api === 'modelContext' && typeof ctx.executeTool === 'function'
        ? () => ctx.executeTool(tool, req.args)
        : () => testing.executeTool(req.name, req.args);
      Promise.resolve().then(run).then(
        (res) => {
          try {
            call.outcome = { ok: true, result: typeof res === 'string' ? res : JSON.stringify(res ?? null) };
          } catch (e) {
            call.outcome = { ok: false, error: 'the tool answered with a value that is not JSON: ' + String(e && e.message) };
          }
        },
        (err) => { call.outcome = { ok: false, error: String((err && (err.message || err)) || 'the tool failed') }; },
      ).finally(() => { call.done = true; finished(); });
      // Most tools answer at once: wait a moment so that they cost one
      // evaluation, not a start and a poll.
      await Promise.race([finish, new Promise((resolve) => setTimeout(resolve, req.wait || 0))]);
      if (!call.done) return { started: true, pending: true };
      calls.delete(req.id);
      return { started: true, ...call.outcome };
    }
    case 'poll': {
      const call = calls.get(req.id);
      if (!call) return { lost: true };
      if (!call.done) return { pending: true };
      calls.delete(req.id);
      return call.outcome;
    }
    case 'forget':
      calls.delete(req.id);
      return {};
  }
  return { error: 'unknown op' };
})
