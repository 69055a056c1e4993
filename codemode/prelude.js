// The bindings of a script: proxy.* and console.*, over the one host
// function the engine hands in. Everything a script can reach of the
// host goes through host(op, json) here, with JSON.stringify and
// JSON.parse taken before the script runs, so that nothing the script
// replaces (JSON, Object.prototype, Array.prototype) changes what is sent.
(function (host) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, Err = Error;
  const isArray = Array.isArray, freeze = Object.freeze, define = Object.defineProperty;
  const isObject = (v) => v !== null && typeof v === "object" && !isArray(v);
  const ask = (op, arg) => {
    const r = parse(host(op, stringify(arg)));
    if (r.e !== undefined) throw new Err(r.e);
    return r.v;
  };
  const pick = (o, keys) => {
    const out = {};
    if (isObject(o)) for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
    return out;
  };
  const listKeys = ["type", "limit", "offset", "server", "detail", "query"];
  const call = (verb, name, args, o) => {
    if (typeof name !== "string" || name === "") throw new Err(verb + ": give the name of a tool (or a resource URI, or a prompt) as the first argument");
    const c = pick(o, ["type", "raw"]);
    c.name = name; c.args = args === undefined ? null : args;
    return c;
  };
  const proxy = freeze({
    list(query, o) {
      if (isObject(query)) return ask("list", pick(query, listKeys));
      const a = pick(o, listKeys);
      if (query !== undefined) a.query = String(query);
      return ask("list", a);
    },
    info(name, o) {
      const a = pick(o, ["type"]);
      a.name = String(name);
      return ask("info", a);
    },
    call(name, args, o) { return ask("call", call("proxy.call", name, args, o)); },
    callAll(calls, o) {
      if (!isArray(calls)) throw new Err("proxy.callAll: give an array of calls, each [name, args] or {name, args, type}");
      const list = [];
      for (const c of calls) {
        if (isArray(c)) list.push(call("proxy.callAll", c[0], c[1], c[2]));
        else if (isObject(c)) list.push(call("proxy.callAll", c.name, c.args, c));
        else throw new Err("proxy.callAll: each call is [name, args] or {name, args, type}");
      }
      return ask("callAll", { calls: list, settle: isObject(o) && o.settle === true });
    },
  });
  const show = (v) => typeof v === "string" ? v : (stringify(v) ?? String(v));
  const log = (...parts) => { host("log", stringify(parts.map(show))); };
  const console = freeze({ log, info: log, warn: log, error: log, debug: log });
  define(globalThis, "proxy", { value: proxy, enumerable: true });
  define(globalThis, "console", { value: console, enumerable: true });
  // The script is the body of an async function, made by the
  // AsyncFunction constructor, so that its declarations stay in its
  // scope. This QuickJS builds that function by pasting the text into
  // source and evaluating it, so a text that closes the function early
  // runs the rest at global scope: what it declares there is a changed
  // global, which the check after the run finds (TestEngineIsolation). It
  // is strict, so that writing to the frozen built-ins or to an
  // undeclared name throws instead of doing nothing.
  const AsyncFunction = Reflect.getPrototypeOf(async function () {}).constructor;
  // expr is "" when the engine knows the script is statements.
  const compile = (expr, body) => {
    if (expr !== "") {
      try {
        return new AsyncFunction('"use strict";\nreturn (\n' + expr + "\n);");
      } catch {}
    }
    return new AsyncFunction('"use strict";\n' + body);
  };
  // finish reports the script's outcome: its value as JSON, or what it
  // threw.
  const finish = (p) => p.then(
    (v) => {
      let s;
      try { s = stringify(v); } catch (e) { host("fail", "the script's value cannot be made JSON: " + e.message); return; }
      host("done", s === undefined ? "null" : s);
    },
    (e) => { host("fail", e instanceof Err ? String(e) : "the script threw " + show(e)); });
  // seal notes the global object's properties once the built-ins are
  // frozen; clean says whether a run left them as they were. Frozen, the
  // global object keeps its keys and its accessors, but this QuickJS
  // lets Object.defineProperty give a frozen global data property a new
  // value, so the values are compared.
  const ownKeys = Reflect.ownKeys, same = Object.is;
  let sealedKeys = null, sealedValues = null;
  const clean = () => {
    if (sealedKeys === null || ownKeys(globalThis).length !== sealedKeys.length) return false;
    for (let i = 0; i < sealedKeys.length; i++) if (!same(globalThis[sealedKeys[i]], sealedValues[i])) return false;
    return true;
  };
  const seal = () => {
    sealedKeys = ownKeys(globalThis);
    sealedValues = sealedKeys.map((k) => globalThis[k]);
  };
  // The engine holds this function; nothing of the script can reach it.
  return (op, expr, body) => {
    switch (op) {
      case "run": finish(compile(expr, body)()); return;
      case "seal": seal(); return;
      case "clean": return clean();
    }
  };
})
