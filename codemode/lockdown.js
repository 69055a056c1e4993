// lockdown freezes every object a script can reach without making one:
// the global object, what its properties lead to (values, getters,
// setters, prototypes) and the intrinsics that only an instance leads
// to (the prototypes of async and generator functions, of iterators).
// A VM serves many runs, and frozen built-ins are what let it: a script
// cannot leave anything on them for the next one. What a script could
// still change (a global's descriptor, which this QuickJS lets a script
// redefine although it is frozen; a queued job) the engine checks after
// each run, and a VM that fails the check is closed.
//
// Before freezing, the properties through which a plain assignment
// commonly shadows an inherited one (obj.toString = ..., this.name = ...
// in an Error subclass) become accessors whose setter defines the
// property on the object assigned to, so such code works as it would
// on unfrozen built-ins.
(function () {
  "use strict";
  const ownKeys = Reflect.ownKeys, describe = Reflect.getOwnPropertyDescriptor;
  const protoOf = Reflect.getPrototypeOf, define = Reflect.defineProperty;
  const freeze = Object.freeze, TypeErr = TypeError;
  const shadowable = (proto, key) => {
    const d = describe(proto, key);
    if (d === undefined || !("value" in d)) return;
    const value = d.value;
    define(proto, key, {
      get() { return value; },
      set(v) {
        if (this === proto) throw new TypeErr("cannot set " + String(key) + ": the built-ins are frozen in a script");
        define(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable, configurable: false,
    });
  };
  for (const key of ownKeys(Object.prototype)) shadowable(Object.prototype, key);
  for (const E of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError, InternalError]) {
    for (const key of ["name", "message", "constructor", "toString"]) shadowable(E.prototype, key);
  }
  const hidden = [
    protoOf(async function () {}),
    protoOf(function* () {}),
    protoOf(async function* () {}),
    protoOf([][Symbol.iterator]()),
    protoOf(new Map()[Symbol.iterator]()),
    protoOf(new Set()[Symbol.iterator]()),
    protoOf(""[Symbol.iterator]()),
    protoOf(/x/[Symbol.matchAll]("")),
    describe((function () { "use strict"; return arguments; })(), "callee").get,
  ];
  if (typeof Iterator === "function") {
    if (typeof Iterator.from === "function") hidden.push(protoOf(Iterator.from({ next() { return { done: true }; } })));
    if (typeof Iterator.prototype.map === "function") hidden.push(protoOf([].values().map((x) => x)));
  }
  // An indexed loop and no descriptor kept: the walk is most of what
  // starting a VM costs (BenchmarkRunOneCall).
  const seen = new Set([globalThis]);
  const todo = [globalThis];
  const visit = (v) => {
    if (v !== null && (typeof v === "object" || typeof v === "function") && !seen.has(v)) {
      seen.add(v);
      todo.push(v);
    }
  };
  for (let i = 0; i < hidden.length; i++) visit(hidden[i]);
  while (todo.length > 0) {
    const o = todo.pop();
    const keys = ownKeys(o);
    const fn = typeof o === "function";
    for (let i = 0; i < keys.length; i++) {
      // A built-in function's length and name are numbers and strings:
      // two thirds of the properties, and nothing to visit.
      if (fn && (keys[i] === "length" || keys[i] === "name")) continue;
      const d = describe(o, keys[i]);
      if (d.get === undefined && d.set === undefined) visit(d.value);
      else { visit(d.get); visit(d.set); }
    }
    visit(protoOf(o));
    freeze(o);
  }
})
