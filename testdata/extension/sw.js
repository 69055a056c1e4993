// mcpx test extension: the service worker.
//
// A passive peer of the browser relay (MCP Proxy Protocol 1.0, JSON-RPC 2.0
// over WebSocket): it dials the relay's /extension URL, answers the relay's
// authenticate, and serves forwarded requests with chrome.tabs and
// chrome.debugger. While no relay listens, and whenever its socket closes,
// it dials again every second, as the real extension does in free mode. Settings come from config.json, which
// browsertest.StartChromium writes into its copy of this directory:
//
//   {"relayURL": "ws://127.0.0.1:PORT/extension", "token": "<JWT>",
//    "name": "Chromium test", "clientId": "chromium-..."}
//
// Plain JavaScript, no build step.
'use strict';

let config = null;
let socket = null;
// Like the Blueprint extension in free mode: dial again every second while
// nothing listens, so that a relay that appears (or a new host that takes
// the address over) is found within a second.
const redialMs = 1000;

const attached = new Map(); // relay connection id ('' in direct mode) -> tabId
const debugging = new Set(); // tabIds the debugger is attached to
const consoleLog = new Map(); // tabId -> [{type, text, timestamp}]

async function start() {
  const res = await fetch(chrome.runtime.getURL('config.json'));
  config = await res.json();
  connect();
}

function connect() {
  const ws = new WebSocket(config.relayURL);
  socket = ws;
  ws.onmessage = (ev) => onMessage(ws, ev.data);
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    attached.clear(); // the relay's connections died with the socket
    setTimeout(connect, redialMs);
  };
}

async function onMessage(ws, text) {
  let msg;
  try { msg = JSON.parse(text); } catch { return; }
  if (msg.id === undefined || msg.id === null) {
    onNotification(msg);
    return;
  }
  if (!msg.method) return; // a response: this peer never asks
  const reply = (body) => {
    if (ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...body }));
    }
  };
  if (msg.method === 'authenticate') {
    // Without a token (a relay of one's own) the key is absent, as in the
    // real extension's free mode.
    const creds = { name: config.name, client_id: config.clientId };
    if (config.token) creds.access_token = config.token;
    reply({ result: creds });
    return;
  }
  const handler = handlers[msg.method];
  try {
    if (!handler) throw { code: -32601, message: `Unknown command: ${msg.method}` };
    const result = await handler(connectionOf(msg.id), msg.params || {});
    reply({ result: result || {} });
  } catch (e) {
    reply({ error: toError(e) });
  }
}

function onNotification(msg) {
  if (msg.method === 'disconnected' && msg.params) {
    attached.delete(msg.params.connection_id);
  }
  // status (the relay's keep-alive), authenticated and others: nothing to do
}

// connectionOf returns the relay connection a request belongs to: the text
// before the first colon of its id ("conn-X:7"), or '' for a plain id.
function connectionOf(id) {
  const s = String(id);
  const i = s.indexOf(':');
  return i < 0 ? '' : s.slice(0, i);
}

// toError makes {code, message}; chrome.debugger errors carry the CDP error
// as JSON text.
function toError(e) {
  const message = (e && e.message) || String(e);
  try {
    const cdp = JSON.parse(message);
    if (cdp && cdp.message) return { code: cdp.code ?? -32000, message: cdp.message };
  } catch { /* not JSON */ }
  return { code: (e && e.code) || -32000, message };
}

const automatable = (url) => !/^(chrome|edge|devtools|chrome-extension):/.test(url || '');
// createTab is stricter, as the Blueprint v1.5 extension's: it refuses
// about: pages too (about:blank among them).
const creatable = (url) => !/^(chrome|edge|devtools|chrome-extension|about):/.test(url || '');

const handlers = {
  async getTabs() {
    const tabs = await chrome.tabs.query({});
    return {
      tabs: tabs.map((t, index) => ({
        id: t.id, title: t.title, url: t.url, active: t.active,
        windowId: t.windowId, index, automatable: automatable(t.url),
      })),
    };
  },

  // As Blueprint v1.5 does: open the tab, point the connection at it, then
  // refuse a page it will not automate, leaving the tab open with no
  // debugger (commands then fail with "Debugger is not attached").
  async createTab(conn, { url = 'about:blank', activate = true }) {
    const created = await chrome.tabs.create({ url, active: activate });
    attached.set(conn, created.id);
    const tab = await loaded(created.id);
    const at = tab.url || tab.pendingUrl || url;
    if (!creatable(at)) throw new Error(`Cannot automate tab with URL: ${at}`);
    await attach(conn, tab.id);
    return { tab: { id: tab.id, title: tab.title || '', url: at } };
  },

  async selectTab(conn, { tabIndex, activate = false }) {
    const tabs = await chrome.tabs.query({});
    const tab = tabs[tabIndex];
    if (!tab) throw new Error(`Tab index ${tabIndex} out of range (0-${tabs.length - 1})`);
    if (!automatable(tab.url)) throw new Error(`Cannot automate ${tab.url}`);
    if (activate) await chrome.tabs.update(tab.id, { active: true });
    await attach(conn, tab.id);
    return { success: true, activated: activate, tab: { id: tab.id, title: tab.title, url: tab.url, index: tabIndex } };
  },

  async closeTab(conn, { index }) {
    let tabId = attached.get(conn);
    if (index !== undefined && index !== null) {
      const tabs = await chrome.tabs.query({});
      if (!tabs[index]) throw new Error(`Tab index ${index} out of range`);
      tabId = tabs[index].id;
    } else if (tabId === undefined) {
      throw new Error('No tab attached');
    }
    const closedAttachedTab = attached.get(conn) === tabId;
    await chrome.tabs.remove(tabId);
    forget(tabId);
    return { success: true, closedAttachedTab };
  },

  async forwardCDPCommand(conn, { method, params }) {
    const tabId = attached.get(conn);
    if (tabId === undefined) throw new Error('No tab attached');
    return (await chrome.debugger.sendCommand({ tabId }, method, params || {})) || {};
  },

  async getConsoleMessages(conn) {
    return { messages: consoleLog.get(attached.get(conn)) || [] };
  },
};

// loaded waits (at most 10 s) until a tab has finished loading.
function loaded(tabId) {
  return new Promise((resolve) => {
    const done = (tab) => {
      clearTimeout(timer);
      chrome.tabs.onUpdated.removeListener(onUpdated);
      resolve(tab);
    };
    const onUpdated = (id, info, tab) => {
      if (id === tabId && info.status === 'complete') done(tab);
    };
    const timer = setTimeout(() => chrome.tabs.get(tabId).then(done, () => done({ id: tabId })), 10000);
    chrome.tabs.onUpdated.addListener(onUpdated);
    chrome.tabs.get(tabId).then((t) => { if (t.status === 'complete' && !t.pendingUrl) done(t); }, () => {});
  });
}

// attach attaches the debugger to a tab (once) and makes it conn's tab.
async function attach(conn, tabId) {
  if (!debugging.has(tabId)) {
    try {
      await chrome.debugger.attach({ tabId }, '1.3');
    } catch (e) {
      if (!/already attached/i.test(String(e && e.message))) throw e;
    }
    debugging.add(tabId);
    await chrome.debugger.sendCommand({ tabId }, 'Runtime.enable').catch(() => {});
  }
  attached.set(conn, tabId);
}

function forget(tabId) {
  debugging.delete(tabId);
  consoleLog.delete(tabId);
  for (const [conn, t] of attached) if (t === tabId) attached.delete(conn);
}

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (method !== 'Runtime.consoleAPICalled') return;
  const text = (params.args || []).map((a) => (a.value !== undefined ? String(a.value) : a.description || a.type)).join(' ');
  const log = consoleLog.get(source.tabId) || [];
  log.push({ type: params.type, text, timestamp: params.timestamp });
  consoleLog.set(source.tabId, log.slice(-500));
});
chrome.debugger.onDetach.addListener((source) => forget(source.tabId));
chrome.tabs.onRemoved.addListener((tabId) => forget(tabId));

start().catch((e) => console.error('mcpx test extension:', e));
