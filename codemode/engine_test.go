package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// idleAfter waits until e has checked the VMs of its last runs.
func idleAfter(t *testing.T, e *Engine) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !e.quiet(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the engine did not finish checking its VMs")
		}
	}
}

// TestEngineReuse: clean runs in turn share one VM; runs at once each
// get their own, and all of them answer.
func TestEngineReuse(t *testing.T) {
	e := NewEngine(Limits{})
	f := &fakeProxy{}
	h := Host{Proxy: f.proxy}
	for i := range 20 {
		r := e.Run(context.Background(), `(await proxy.call("add", {x: 1, y: 1})).sum`, h)
		if r.Err != nil || string(r.Value) != "2" {
			t.Fatalf("run %d: %s (err %v)", i, r.Value, r.Err)
		}
		idleAfter(t, e)
	}
	if n := e.started.Load(); n != 1 {
		t.Errorf("20 runs in turn started %d VMs, want 1", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := e.Run(context.Background(), `(await proxy.call("add", {x: 2, y: 2})).sum`, h); r.Err != nil || string(r.Value) != "4" {
				t.Errorf("a run at once: %s (err %v)", r.Value, r.Err)
			}
		}()
	}
	wg.Wait()
}

// TestEngineIsolation: whatever a run tries to leave behind, the next
// run on the same Engine sees the VM as the first run did, and makes
// only its own calls.
func TestEngineIsolation(t *testing.T) {
	const probe = `[typeof globalThis.left, typeof ({}).polluted, typeof Math.max, Math.stash, typeof JSON.stringify,
		Object.getPrototypeOf(function* () {}).stash, Array.prototype.map.stash, Object.keys(globalThis).join(),
		(await proxy.call("add", {x: 1, y: 1})).sum]`
	const pristine = `["undefined","undefined","function",null,"function",null,null,"proxy,console",2]`
	cases := []struct{ name, leave string }{
		{"global write", `globalThis.left = 1`},
		{"undeclared name", `left = 1`},
		{"global var through eval", `(0, eval)("var left = 1")`},
		{"global let past the wrapper", `}); let left = 1; (async () => {`},
		{"prototype pollution", `Object.prototype.polluted = 1`},
		{"redefined frozen global", `Object.defineProperty(globalThis, "Math", {value: {stash: 1}})`},
		{"redefined binding", `Object.defineProperty(globalThis, "proxy", {value: {call: () => ({sum: 99})}})`},
		{"deleted global", `delete globalThis.JSON`},
		{"hidden intrinsic", `Object.getPrototypeOf(function* () {}).stash = 1`},
		{"built-in function", `Array.prototype.map.stash = 1`},
		{"jobs after the value", `(function again(n) { if (n > 0) Promise.resolve().then(() => { try { proxy.call("add", {x: 100, y: 0}) } catch {} again(n - 1) }) })(50)`},
		{"finalizer", `new FinalizationRegistry(() => proxy.call("add", {x: 100, y: 0})).register({}, 1)`},
		{"weak ref", `new WeakRef({})`},
		{"never settles", `await new Promise(() => {})`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEngine(Limits{Timeout: 300 * time.Millisecond, Memory: 16 << 20})
			f := &fakeProxy{}
			h := Host{Proxy: f.proxy}
			e.Run(context.Background(), "try { "+c.leave+" } catch (e) {}\nreturn 0", h)
			e.Run(context.Background(), c.leave+"\nreturn 0", h) // uncaught, where it parses
			idleAfter(t, e)
			before := len(f.seen)
			r := e.Run(context.Background(), probe, h)
			if r.Err != nil || string(r.Value) != pristine {
				t.Errorf("the next run saw %s (err %v), want %s", r.Value, r.Err, pristine)
			}
			if n := len(f.seen) - before; n != 1 {
				t.Errorf("the proxy saw %d calls during the next run, want its 1: %v", n, f.seen[before:])
			}
		})
	}
}

// TestEngineUnfitClosed: a run stopped by its limits leaves its VM
// closed, and the next run gets a new one.
func TestEngineUnfitClosed(t *testing.T) {
	cases := []struct {
		name, code, want string
		timeout          time.Duration
	}{
		{"time", `for (;;) {}`, "time limit", 200 * time.Millisecond},
		{"memory", `const a = []; for (;;) a.push("x".repeat(1 << 16) + a.length)`, "memory", time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := NewEngine(Limits{Timeout: c.timeout, Memory: 4 << 20})
			h := Host{Proxy: (&fakeProxy{}).proxy}
			if r := e.Run(context.Background(), `1`, h); r.Err != nil {
				t.Fatal(r.Err)
			}
			idleAfter(t, e)
			if r := e.Run(context.Background(), c.code, h); r.Err == nil || !strings.Contains(r.Err.Error(), c.want) {
				t.Fatalf("err %v, want the %s limit", r.Err, c.want)
			}
			idleAfter(t, e)
			if r := e.Run(context.Background(), `[1, 2].map((x) => x * 2)`, h); r.Err != nil || string(r.Value) != "[2,4]" {
				t.Errorf("the next run: %s (err %v)", r.Value, r.Err)
			}
			if n := e.started.Load(); n != 2 {
				t.Errorf("%d VMs started, want 2: the stopped one is not kept", n)
			}
		})
	}
}

// TestLockdownComplete: every object a script can reach without making
// it is frozen: through the globals, and through the prototypes that
// only an instance leads to.
func TestLockdownComplete(t *testing.T) {
	r, _ := runScript(t, `
		const P = Object.getPrototypeOf;
		const seeds = [globalThis, P(async function () {}), P(function* () {}), P(async function* () {}),
			P(P((function* () {})())), P(P((async function* () {})())), P([].values()), P(new Map().entries()),
			P(new Set().values()), P(""[Symbol.iterator]()), P(/x/[Symbol.matchAll]("")), P(new Uint8Array(1)),
			P(P(new Uint8Array(1))), P(new DataView(new ArrayBuffer(1))), P(Promise.resolve()), P(new Date()),
			P(/x/), P(new Error()), P(new WeakMap()), P(Symbol()), P(1n), P(Iterator.from({ next() { return { done: true } } })),
			P([].values().map((x) => x)), Object.getOwnPropertyDescriptor(Function.prototype, "caller")?.get,
			Object.getOwnPropertyDescriptor((function () { "use strict"; return arguments })(), "callee").get];
		const seen = new Set(), open = [];
		const todo = seeds.map((o, i) => [o, "seed " + i]);
		while (todo.length > 0) {
			const [o, path] = todo.pop();
			if (o === null || (typeof o !== "object" && typeof o !== "function") || seen.has(o)) continue;
			seen.add(o);
			if (!Object.isFrozen(o)) open.push(path);
			for (const k of Reflect.ownKeys(o)) {
				const d = Object.getOwnPropertyDescriptor(o, k);
				for (const v of [d.value, d.get, d.set]) todo.push([v, path + "." + String(k)]);
			}
			todo.push([P(o), path + ".__proto__"]);
		}
		return {objects: seen.size, open}`, Limits{})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if !strings.Contains(string(r.Value), `"open":[]`) {
		t.Errorf("objects a script reaches that are not frozen: %s", r.Value)
	}
}

// TestRunFrozenBuiltins: what freezing the built-ins changes for a
// script. Assigning to a built-in throws, naming it; shadowing an
// inherited property by assignment works as it does unfrozen.
func TestRunFrozenBuiltins(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"own toString", `const o = {}; o.toString = () => "mine"; return String(o)`, `"mine"`},
		{"error subclass name", `class NotFound extends Error { constructor(m) { super(m); this.name = "NotFound" } }
			try { throw new NotFound("x") } catch (e) { return String(e) }`, `"NotFound: x"`},
		{"message set later", `const e = new Error(); e.message = "later"; return e.message`, `"later"`},
		{"plain objects stay open", `const o = {a: 1}; o.b = 2; delete o.a; return o`, `{"b":2}`},
		{"a built-in stays", `try { Array.prototype.sum = 1 } catch (e) { return e instanceof TypeError }`, `true`},
		{"Object.prototype stays", `try { Object.prototype.toString = null } catch (e) { return String(e) }`, `"TypeError: cannot set toString: the built-ins are frozen in a script"`},
		{"undeclared name", `try { undeclared = 1 } catch (e) { return e.name }`, `"ReferenceError"`},
		{"no WeakRef", `[typeof WeakRef, typeof FinalizationRegistry]`, `["undefined","undefined"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := runScript(t, c.code, Limits{})
			if r.Err != nil || string(r.Value) != c.want {
				t.Errorf("got %s (err %v), want %s", r.Value, r.Err, c.want)
			}
		})
	}
}

// quiet reports whether e checks no VM.
func (e *Engine) quiet() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.settling == 0
}

// TestStartsStatement: only a word no expression can begin with skips
// the try as an expression; names that begin with one do not.
func TestStartsStatement(t *testing.T) {
	for code, want := range map[string]bool{
		"return 1":             true,
		"\n  const x = 1; x":   true,
		"for(;;){}":            true,
		"returned + 1":         false,
		"constant":             false,
		"proxy.list()":         false,
		"{a: 1}":               false,
		"(async () => 1)()":    false,
		"letters.length":       false,
		"function f() {}; f()": true,
	} {
		if got := startsStatement(code); got != want {
			t.Errorf("startsStatement(%q) = %v, want %v", code, got, want)
		}
	}
	// The value is the same either way.
	h := Host{Proxy: func(context.Context, json.RawMessage) json.RawMessage { return nil }}
	for code, want := range map[string]string{"constructor.name": `"Object"`, "return 4": "4", "5": "5", "let v = 6; v": "null"} {
		if r := Run(context.Background(), code, h, Limits{}); r.Err != nil || string(r.Value) != want {
			t.Errorf("%q: %s %v, want %s", code, r.Value, r.Err, want)
		}
	}
}
