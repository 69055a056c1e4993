package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"modernc.org/quickjs"
)

// The engine is QuickJS, as modernc.org/quickjs builds it in pure Go.
// It was chosen over goja by measurement (docs/proxy-tool.md, "Code
// mode"): its heap has a real cap, so a script that allocates a GiB
// fails inside its limit instead of growing the host; goja cannot stop
// one allocation such as 'x'.repeat(1<<30).
//
// A VM has ECMAScript's globals and nothing else: no std or os module,
// no module loader (import() fails), no timers, no network, and no
// WeakRef or FinalizationRegistry, whose callbacks would run after the
// script ended. What the script reaches of the host is the one function
// prelude.js is handed, which is gone from the global object before any
// script runs. Nothing depends on the script leaving its globals alone:
// every gate is in Go.
//
// A fresh VM per run made a short run cost twice what it does on a kept
// one (BenchmarkEngineOneCall), so a VM serves many runs, one at a time.
// lockdown.js freezes the built-ins first, and after each run the
// engine checks what freezing cannot hold (the global object's values,
// the job queue); a VM that fails, or whose run was stopped, is closed
// rather than used again.

// stackSlots bounds the script's call depth, so that deep recursion
// throws a RangeError-like InternalError instead of exhausting the
// goroutine's stack.
const stackSlots = 4096

// hostName is the global the setup takes the host function from; it is
// deleted before any script runs.
const hostName = "__mcpx_host"

// settleTime bounds what a VM's check after a run may take: running the
// jobs a script left (which makes the VM unfit anyway) and comparing
// the globals.
const settleTime = 100 * time.Millisecond

// interruptEvery is how often a run whose context ended is interrupted
// again until it stops (see executeHere).
const interruptEvery = 10 * time.Millisecond

// gcRuns and gcBusy say when settle collects the garbage of the runs
// before: every gcRuns runs, and after a run that kept the VM busy
// longer than gcBusy.
const (
	gcRuns = 16
	gcBusy = 2 * time.Millisecond
)

// machine is a VM set up for scripts: the built-ins frozen, the
// script's globals in place, the host function gone from them. entry is
// the prelude's function that starts a script and checks the VM after
// one; serve is what the host function calls, set by the run that holds
// the machine.
type machine struct {
	vm    *quickjs.VM
	entry quickjs.Value
	serve func(args []any) (any, error)
	runs  int
	// fit is false once a run left the VM in a state no other run may
	// see: stopped midway, out of memory, or waiting on nothing.
	fit bool
	// sinceGC counts the runs since the last collection that settle
	// forced; busy is how long the VM ran the last one.
	sinceGC int
	busy    time.Duration
	// work is served by the machine's own goroutine, on which all of
	// the VM's work runs: the engine's frames need a deep Go stack, and
	// growing a fresh goroutine's stack to it took a quarter of a short
	// run (BenchmarkEngineOneCall against the same on a new goroutine).
	work chan func()
}

// do runs f on m's goroutine and waits for it. A panic in f goes on in
// the caller, and m is fit for nothing but closing.
func (m *machine) do(f func()) {
	var p any
	done := make(chan struct{})
	m.work <- func() {
		defer close(done)
		defer func() {
			if p = recover(); p != nil {
				m.fit = false
			}
		}()
		f()
	}
	<-done
	if p != nil {
		panic(p)
	}
}

// newMachine starts a VM within memory bytes, on a goroutine of its own.
func newMachine(memory int64) (*machine, error) {
	m := &machine{work: make(chan func())}
	go func() {
		for f := range m.work {
			f()
		}
	}()
	var err error
	m.do(func() { err = m.start(memory) })
	if err != nil {
		close(m.work)
		return nil, err
	}
	return m, nil
}

func (m *machine) start(memory int64) error {
	vm, err := quickjs.NewVM()
	if err != nil {
		return fmt.Errorf("start the script engine: %w", err)
	}
	vm.SetMemoryLimit(uintptr(memory))
	vm.SetMaxStackSize(stackSlots)
	err = vm.RegisterHostFunc(hostName, func(args []any) (any, error) {
		if m.serve == nil {
			return nil, errors.New("the run is over")
		}
		return m.serve(args)
	})
	setup, serr := setupBytecode()
	if err == nil && serr == nil {
		m.entry, err = vm.EvalBytecodeValue(setup)
	}
	if err = errors.Join(err, serr); err != nil {
		vm.Close()
		return fmt.Errorf("start the script engine: %w", err)
	}
	m.vm, m.fit = vm, true
	return nil
}

// close closes m's VM and ends its goroutine.
func (m *machine) close() {
	m.do(func() {
		m.entry.Free()
		m.vm.Close()
	})
	close(m.work)
}

// execute runs code in m and returns the JSON of its value.
func (m *machine) execute(ctx context.Context, code string, hs *host, lim Limits) (v json.RawMessage, err error) {
	m.do(func() {
		start := time.Now()
		v, err = m.executeHere(ctx, code, hs, lim)
		m.busy = time.Since(start)
	})
	return v, err
}

func (m *machine) executeHere(ctx context.Context, code string, hs *host, lim Limits) (json.RawMessage, error) {
	vm := m.vm
	m.runs++
	m.fit = false // until the run ends as a script may
	// The engine clears a pending interrupt each time Go calls into it
	// (the script, then each round of jobs), so one that lands just
	// before a call would be lost and an endless loop would run on: once
	// ctx ends, the run is interrupted again every interruptEvery until
	// it is over.
	ended := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		for {
			vm.Interrupt()
			select {
			case <-ended:
				return
			case <-time.After(interruptEvery):
			}
		}
	})
	var out outcome
	m.serve = func(args []any) (any, error) { return out.serve(ctx, hs, args) }
	defer func() {
		close(ended)
		m.serve = nil
		// An interrupt that fired after the run would stop the next one.
		if !stop() {
			m.fit = false
		}
	}()
	if ctx.Err() != nil {
		return nil, engineError(ctx, ctx.Err(), lim)
	}
	expr := ""
	if !startsStatement(code) {
		expr = strings.TrimRight(strings.TrimSpace(code), "; \t\r\n")
	}
	if _, err := m.entry.Call(quickjs.UndefinedValue, "run", expr, code); err != nil {
		m.fit = ctx.Err() == nil && strings.HasPrefix(err.Error(), "SyntaxError") // nothing of the script ran
		return nil, engineError(ctx, err, lim)
	}
	// The script's awaits resolve as jobs; host calls are synchronous,
	// so the queue drains once the script is done or waits on a promise
	// nothing will settle.
	for !out.ended {
		n, err := vm.ExecutePendingJobs()
		if err != nil {
			return nil, engineError(ctx, err, lim)
		}
		if n == 0 {
			break
		}
	}
	switch {
	case ctx.Err() != nil:
		return nil, engineError(ctx, ctx.Err(), lim)
	case !out.ended:
		return nil, errors.New("the script awaits a promise that nothing settles (there are no timers or events in a script)")
	}
	m.fit = !out.broke
	if out.failure != "" {
		return nil, engineError(ctx, errors.New(out.failure), lim)
	}
	return out.value, nil
}

// settle readies m for another run and reports whether it is fit for
// one: its last run ended as a script may, left no jobs and changed no
// global. Every gcRuns runs, or after a run long enough to have made
// much garbage, it collects first, so that what scripts left
// unreachable does not count against the next one's memory; a short
// run makes little, and QuickJS collects on its own as its heap grows.
func (m *machine) settle(maxRuns int) (fit bool) {
	if !m.fit || m.runs >= maxRuns {
		return false
	}
	m.do(func() { fit = m.settleHere() })
	return fit
}

func (m *machine) settleHere() bool {
	vm := m.vm
	if err := vm.SetEvalTimeout(settleTime); err != nil {
		return false
	}
	defer vm.SetEvalTimeout(0)
	if n, err := vm.ExecutePendingJobs(); n > 0 || err != nil {
		return false
	}
	if m.sinceGC++; m.sinceGC >= gcRuns || m.busy > gcBusy {
		vm.SetGCThreshold(0) // the next allocation collects first
		m.sinceGC = 0
	}
	ok, err := m.entry.Call(quickjs.UndefinedValue, "clean")
	return err == nil && ok == true
}

// outcome is what the script reported through the host function.
type outcome struct {
	ended   bool
	value   json.RawMessage
	failure string
	// broke is set when the script's failure is the engine's, not the
	// script's own: out of memory, a stack overflow.
	broke bool
}

// serve answers one host(op, json) call of the prelude: {"v": value} or
// {"e": message}, which the prelude throws.
func (o *outcome) serve(ctx context.Context, hs *host, args []any) (any, error) {
	if len(args) != 2 {
		return nil, errors.New("host: want (op, json)")
	}
	op, _ := args[0].(string)
	arg, _ := args[1].(string)
	switch op {
	case "done", "fail":
		if !o.ended {
			o.ended = true
			if op == "done" {
				o.value = json.RawMessage(arg)
			} else {
				o.failure = arg
				o.broke = engineBroke(arg)
			}
		}
		return nil, nil
	}
	switch {
	case o.ended:
		return nil, errors.New("the run is over: a script's calls end with its value")
	case ctx.Err() != nil:
		return nil, errors.New("the run is stopped")
	}
	v, err := hs.serve(ctx, op, []byte(arg))
	if err != nil {
		b, _ := json.Marshal(map[string]string{"e": err.Error()})
		return string(b), nil
	}
	return `{"v":` + string(v) + `}`, nil
}

// setupBytecode is the VM's setup, compiled once per process: parsing
// it took half of a run's time (BenchmarkRunOneCall). Bytecode is
// immutable and belongs to the QuickJS version linked in, so one
// compilation serves every VM. Its value is the prelude's entry.
var setupBytecode = sync.OnceValues(func() ([]byte, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	return vm.Compile(`(() => {
  const host = globalThis.`+hostName+`;
  delete globalThis.`+hostName+`;
  delete globalThis.WeakRef;
  delete globalThis.FinalizationRegistry;
  const entry = (`+prelude+`)(host);
  (`+lockdown+`)();
  entry("seal");
  return entry;
})()`, quickjs.EvalGlobal)
})

// statementWords are the words that cannot begin an expression in
// strict code: a script that begins with one is statements, and is not
// tried as a lone expression first. That try fails, at the cost of a
// parse and a SyntaxError, in most scripts, which begin "return" or
// "const" (a third of a one-call run on a kept VM).
var statementWords = []string{"return", "const", "let", "var", "if", "for", "while", "do", "try", "throw", "switch", "break", "continue", "function"}

// startsStatement reports whether code begins with one of statementWords.
func startsStatement(code string) bool {
	code = strings.TrimLeft(code, " \t\r\n")
	for _, w := range statementWords {
		rest, ok := strings.CutPrefix(code, w)
		if ok && (rest == "" || !isIdentPart(rest[0])) {
			return true
		}
	}
	return false
}

func isIdentPart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// engineBroke reports whether a script's failure is one after which
// its VM may be in a state the next script must not see.
func engineBroke(msg string) bool {
	return msg == "null" || msg == "the script threw null" || strings.Contains(msg, "out of memory") || strings.Contains(msg, "stack overflow") || strings.Contains(msg, "interrupted")
}

// engineError says which limit an engine error broke, or what the
// script did wrong.
func engineError(ctx context.Context, err error, lim Limits) error {
	msg := err.Error()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("the run was stopped: %w", context.Cause(ctx))
	case msg == "null" || msg == "the script threw null" || strings.Contains(msg, "out of memory"):
		// QuickJS throws null when it cannot allocate even the error.
		return fmt.Errorf("the script ran out of memory: its limit is %d MiB (code.memory)", lim.Memory>>20)
	case strings.Contains(msg, "stack overflow"):
		return fmt.Errorf("the script recursed too deep: %s", msg)
	case strings.HasPrefix(msg, "SyntaxError"):
		return fmt.Errorf("the script does not parse: %s", msg)
	}
	return errors.New(msg)
}
