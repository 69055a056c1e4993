package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeProxy answers the proxy's verbs: tool "add" returns structured
// content, "echo" text, "fail" an isError result, "slow" waits for its
// context; list answers one embedded JSON resource.
type fakeProxy struct {
	mu       sync.Mutex
	seen     []map[string]any
	inFlight atomic.Int32
	maxPar   atomic.Int32
}

func (f *fakeProxy) proxy(ctx context.Context, raw json.RawMessage) json.RawMessage {
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return errorResult("bad args: " + err.Error())
	}
	f.mu.Lock()
	f.seen = append(f.seen, args)
	f.mu.Unlock()
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxPar.Load()
		if n <= m || f.maxPar.CompareAndSwap(m, n) {
			break
		}
	}
	if args["action"] == "list" {
		return embedded(`[{"name":"add","type":"tool"}]`)
	}
	a, _ := args["args"].(map[string]any)
	switch args["path"] {
	case "add":
		x, _ := a["x"].(float64)
		y, _ := a["y"].(float64)
		time.Sleep(2 * time.Millisecond) // lets callAll overlap
		return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"%g"}],"structuredContent":{"sum":%g}}`, x+y, x+y))
	case "echo":
		b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": fmt.Sprint(a["text"])}}})
		return b
	case "fail":
		return errorResult("the tool broke")
	case "slow":
		<-ctx.Done()
		return errorResult("cancelled")
	}
	return errorResult(fmt.Sprintf("no tool %v", args["path"]))
}

func embedded(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []map[string]any{{
		"type": "resource", "resource": map[string]string{"uri": "proxy:list", "mimeType": "application/json", "text": text},
	}}})
	return b
}

func runScript(t *testing.T, code string, lim Limits) (Result, *fakeProxy) {
	t.Helper()
	f := &fakeProxy{}
	return Run(context.Background(), code, Host{Proxy: f.proxy}, lim), f
}

func TestRunValues(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"expression", `1 + 2`, `3`},
		{"expression with semicolon", `"a" + "b";`, `"ab"`},
		{"body", `const r = await proxy.call("add", {x: 2, y: 3}); return r.sum * 10`, `50`},
		{"structured content", `await proxy.call("add", {x: 1, y: 1})`, `{"sum":2}`},
		{"text", `(await proxy.call("echo", {text: "hi"}))`, `"hi"`},
		{"text that is JSON", `(await proxy.call("echo", {text: "[1,2]"})).length`, `2`},
		{"without await", `proxy.call("add", {x: 1, y: 2}).sum`, `3`},
		{"list", `(await proxy.list("add"))[0].name`, `"add"`},
		{"callAll", `(await proxy.callAll([["add", {x: 1, y: 1}], {name: "add", args: {x: 2, y: 2}}])).map(r => r.sum)`, `[2,4]`},
		{"callAll settle", `(await proxy.callAll([["add", {x: 1, y: 1}], ["fail", {}]], {settle: true})).map(r => r.ok)`, `[true,false]`},
		{"isError throws", `try { await proxy.call("fail", {}); return "no" } catch (e) { return e.message }`, `"proxy.call(\"fail\"): the tool broke"`},
		{"undefined is null", `undefined`, `null`},
		{"raw", `(await proxy.call("fail", {}, {raw: true})).isError`, `true`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := runScript(t, c.code, Limits{})
			if r.Err != nil {
				t.Fatalf("run failed: %v", r.Err)
			}
			if string(r.Value) != c.want {
				t.Errorf("value %s, want %s", r.Value, c.want)
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"throw", `throw new Error("nope")`, "nope"},
		{"throw a string", `throw "bare"`, `the script threw bare`},
		{"uncaught isError", `await proxy.call("fail", {})`, "the tool broke"},
		{"callAll first error", `await proxy.callAll([["add", {}], ["fail", {}]])`, "call 2 of 2"},
		{"syntax", `return (`, "does not parse"},
		{"never settles", `await new Promise(() => {})`, "nothing settles"},
		{"not JSON", `return {b: 1n}`, "cannot be made JSON"},
		{"no name", `proxy.call()`, "give the name of a tool"},
		{"recursion", `function f(n) { return f(n + 1) } f(0)`, "stack overflow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := runScript(t, c.code, Limits{})
			if r.Err == nil {
				t.Fatalf("run succeeded with %s, want an error with %q", r.Value, c.want)
			}
			if !strings.Contains(r.Err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", r.Err, c.want)
			}
		})
	}
}

// TestRunSandbox tries each way out of the sandbox a script might: none
// reaches anything but the proxy's verbs.
func TestRunSandbox(t *testing.T) {
	escapes := []string{
		`fetch("http://127.0.0.1/")`,
		`new XMLHttpRequest()`,
		`require("fs")`,
		`await import("os")`,
		`await import("std")`,
		`std.getenv("HOME")`,
		`os.open("/etc/passwd")`,
		`process.env.HOME`,
		`Deno.env`,
		`setTimeout(() => {}, 1)`,
		`__mcpx_host("call", "{}")`,
		`__mcpx_finish(1)`,
		`Function("return __mcpx_host")()("list", "{}")`,
		`eval("__mcpx_host")`,
		`proxy.call.constructor("return __mcpx_host")()`,
		`globalThis.__mcpx_host.call`,
		`Object.getPrototypeOf(proxy.call).constructor("return this")().__mcpx_host("list","{}")`,
		`new WebAssembly.Module(new Uint8Array([0,97,115,109,1,0,0,0]))`,
	}
	for _, code := range escapes {
		t.Run(code, func(t *testing.T) {
			r, f := runScript(t, code, Limits{})
			if r.Err == nil {
				t.Fatalf("the script ran and gave %s", r.Value)
			}
			if len(f.seen) != 0 {
				t.Errorf("the script reached the proxy: %v", f.seen)
			}
		})
	}
}

// TestRunTamper replaces what a script could replace of the bindings
// and the built-ins they use: each attempt throws, as the built-ins are
// frozen, and the calls the host sees stay as written.
func TestRunTamper(t *testing.T) {
	code := `
		const kept = [];
		const attempts = [
			() => { JSON.stringify = () => '{"action":"call","path":"evil"}' },
			() => { JSON.parse = () => ({v: "forged"}) },
			() => { Object.prototype.toJSON = undefined },
			() => { Array.isArray = () => false },
			() => { proxy.call = () => "forged" },
			() => { Object.defineProperty(Array.prototype, "push", {value: () => 0}) },
			() => { Object.setPrototypeOf(proxy, {call: () => "forged"}) },
		];
		for (const a of attempts) { try { a(); kept.push(false) } catch (e) { kept.push(e instanceof TypeError) } }
		const r = await proxy.call("add", {x: 4, y: 5});
		return [r.sum, kept.every(Boolean), Object.isFrozen(proxy), typeof proxy.call]`
	r, f := runScript(t, code, Limits{})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if string(r.Value) != `[9,true,true,"function"]` {
		t.Errorf("value %s, want [9,true,true,\"function\"]", r.Value)
	}
	if len(f.seen) != 1 || f.seen[0]["path"] != "add" {
		t.Errorf("the host saw %v, want one call of add", f.seen)
	}
}

func TestRunMaxCalls(t *testing.T) {
	r, f := runScript(t, `for (let i = 0; i < 10; i++) await proxy.call("add", {x: i, y: 0}); return "done"`, Limits{MaxCalls: 3})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "limit of 3 calls") {
		t.Fatalf("err %v, want the call limit", r.Err)
	}
	if len(f.seen) != 3 {
		t.Errorf("the host saw %d calls, want 3", len(f.seen))
	}
}

func TestRunParallelBound(t *testing.T) {
	r, f := runScript(t, `(await proxy.callAll(Array.from({length: 24}, (_, i) => ["add", {x: i, y: 0}]))).length`, Limits{Parallel: 3})
	if r.Err != nil || string(r.Value) != "24" {
		t.Fatalf("value %s err %v, want 24", r.Value, r.Err)
	}
	if m := f.maxPar.Load(); m > 3 || m < 1 {
		t.Errorf("%d calls in flight at once, want at most 3", m)
	}
}

func TestRunOutput(t *testing.T) {
	t.Run("value over the limit", func(t *testing.T) {
		r, _ := runScript(t, `"x".repeat(200000)`, Limits{MaxOutput: 1000})
		if r.Err == nil || !strings.Contains(r.Err.Error(), "return less") {
			t.Fatalf("err %v, want the output limit", r.Err)
		}
	})
	t.Run("log flood", func(t *testing.T) {
		r, _ := runScript(t, `for (let i = 0; i < 5000; i++) console.log("line", i); return "ok"`, Limits{MaxOutput: 4000, Timeout: 5 * time.Minute})
		if r.Err != nil || string(r.Value) != `"ok"` {
			t.Fatalf("value %s err %v", r.Value, r.Err)
		}
		if len(r.Log) > 1000 || r.LogCut == 0 {
			t.Errorf("log %d bytes with %d lines cut, want at most 1000 bytes and a cut", len(r.Log), r.LogCut)
		}
		if !strings.HasPrefix(r.Log, "line 0\nline 1\n") {
			t.Errorf("log starts %q", r.Log[:20])
		}
		res := string(r.ToolResult())
		if !strings.Contains(res, "more lines cut") {
			t.Errorf("the answer does not say the log was cut: %s", res)
		}
	})
}

// TestRunTimeout: an endless loop, and a call that never answers, are
// both stopped by the run's limit, with an error naming it. Each runs on
// a VM already started (an Engine's, warmed by a trivial run). How soon
// is not asserted (a loaded machine delays any interrupt): only that the
// run ends far inside ten limits, which a limit not enforced fails.
func TestRunTimeout(t *testing.T) {
	const limit = 300 * time.Millisecond
	for _, code := range []string{`for (;;) {}`, `while (true) { [1, 2, 3].map(x => x * 2) }`, `await proxy.call("slow", {})`} {
		t.Run(code, func(t *testing.T) {
			e := NewEngine(Limits{Timeout: limit})
			h := Host{Proxy: (&fakeProxy{}).proxy}
			if r := e.Run(context.Background(), `1`, h); r.Err != nil {
				t.Fatal(r.Err)
			}
			idleAfter(t, e)
			start := time.Now()
			r := e.Run(context.Background(), code, h)
			took := time.Since(start)
			if r.Err == nil || !strings.Contains(r.Err.Error(), "time limit of 300ms") {
				t.Fatalf("err %v, want the time limit", r.Err)
			}
			if took > 10*limit {
				t.Errorf("stopped after %s, want well within %s", took, 10*limit)
			}
		})
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeProxy{}
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	r := Run(ctx, `for (;;) {}`, Host{Proxy: f.proxy}, Limits{})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "stopped") {
		t.Fatalf("err %v, want stopped", r.Err)
	}
}

// TestRunCancelledBeforeStart: a context that ends before the script
// runs stops it too. The engine clears an interrupt when Go calls into
// it, so one that landed just before the call was lost, and an endless
// loop then ran on (TestRunCancel hung a CI run this way). Whether the
// old code loses the interrupt here depends on timing; the run stopping
// does not.
func TestRunCancelledBeforeStart(t *testing.T) {
	for _, engine := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		done := make(chan Result, 1)
		go func() {
			h := Host{Proxy: (&fakeProxy{}).proxy}
			if engine {
				done <- NewEngine(Limits{}).Run(ctx, `for (;;) {}`, h)
				return
			}
			done <- Run(ctx, `for (;;) {}`, h, Limits{})
		}()
		select {
		case r := <-done:
			if r.Err == nil || !strings.Contains(r.Err.Error(), "stopped") {
				t.Errorf("engine %v: err %v, want stopped", engine, r.Err)
			}
		case <-time.After(20 * time.Second): // far past the 30s default would be a hang
			t.Fatalf("engine %v: a run whose context had ended did not stop", engine)
		}
	}
}

func TestRunApprove(t *testing.T) {
	var asked []Pending
	approve := func(ctx context.Context, p Pending) error {
		asked = append(asked, p)
		if p.Tool == "echo" {
			return errors.New("the user declined")
		}
		time.Sleep(400 * time.Millisecond) // a person thinking: not the run's time
		return nil
	}
	f := &fakeProxy{}
	code := `const s = (await proxy.call("add", {x: 1, y: 2})).sum;
		try { await proxy.call("echo", {text: "x"}) } catch (e) { return [s, e.message] }`
	r := Run(context.Background(), code, Host{Proxy: f.proxy, Approve: approve}, Limits{Timeout: 300 * time.Millisecond})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if string(r.Value) != `[3,"proxy.call(\"echo\"): the user declined"]` {
		t.Errorf("value %s", r.Value)
	}
	if len(asked) != 2 || asked[0].Tool != "add" || string(asked[0].Args) != `{"x":1,"y":2}` {
		t.Errorf("asked %v", asked)
	}
	if len(f.seen) != 1 {
		t.Errorf("the host saw %d calls, want 1 (the declined one is not sent)", len(f.seen))
	}
}
