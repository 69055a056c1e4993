package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"modernc.org/quickjs"
)

// The engine is QuickJS, as modernc.org/quickjs builds it in pure Go.
// It was chosen over goja by measurement (docs/proxy-tool.md, "Code
// mode"): its heap has a real cap, so a script that allocates a GiB
// fails inside its limit instead of growing the host; goja cannot stop
// one allocation such as 'x'.repeat(1<<30). A VM starts in about 0.2 ms
// and a call from the script into Go costs the same in both, so every
// run gets a fresh VM and nothing is pooled: no state leaks from one
// run into the next.
//
// A fresh VM has ECMAScript's globals and nothing else: no std or os
// module, no module loader (import() fails), no timers, no network.
// What the script reaches of the host is the one function prelude.js
// is handed, which is gone from the global object before the script
// runs. Nothing depends on the script leaving its globals alone: this
// QuickJS lets a script redefine even a non-configurable property of
// globalThis, so the host function lives only in the prelude's closure
// and every gate is in Go.

// stackSlots bounds the script's call depth, so that deep recursion
// throws a RangeError-like InternalError instead of exhausting the
// goroutine's stack.
const stackSlots = 4096

// hostName is the global the prelude takes the host function from; it
// is deleted before the script runs.
const hostName = "__mcpx_host"

// fresh is a VM that has run nothing but the prelude's setup: the
// script's globals are in place and the host function is gone from
// them. serve is what the prelude's host function calls, set by the one
// run that takes the VM.
type fresh struct {
	vm    *quickjs.VM
	serve func(args []any) (any, error)
}

// newFresh starts a VM within memory bytes, ready for one run.
func newFresh(memory int64) (*fresh, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("start the script engine: %w", err)
	}
	f := &fresh{vm: vm}
	vm.SetMemoryLimit(uintptr(memory))
	vm.SetMaxStackSize(stackSlots)
	err = vm.RegisterHostFunc(hostName, func(args []any) (any, error) {
		if f.serve == nil {
			return nil, errors.New("no run") // the setup does not call it
		}
		return f.serve(args)
	})
	setup, serr := setupBytecode()
	if err == nil && serr == nil {
		_, err = vm.EvalBytecode(setup)
	}
	if err = errors.Join(err, serr); err != nil {
		vm.Close()
		return nil, fmt.Errorf("start the script engine: %w", err)
	}
	return f, nil
}

// execute runs code in f, whose VM it then owns, and returns the JSON of
// its value.
func execute(ctx context.Context, code string, hs *host, lim Limits, f *fresh) (json.RawMessage, error) {
	vm := f.vm
	stop := context.AfterFunc(ctx, vm.Interrupt)
	defer stop()
	var out outcome
	f.serve = func(args []any) (any, error) { return out.serve(ctx, hs, args) }
	script, err := compile(vm, code)
	if err == nil {
		_, err = vm.EvalBytecode(script)
	}
	if err != nil {
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
	case out.failure != "":
		return nil, engineError(ctx, errors.New(out.failure), lim)
	}
	return out.value, nil
}

// outcome is what the script reported through the host function.
type outcome struct {
	ended   bool
	value   json.RawMessage
	failure string
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
			}
		}
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, errors.New("the run is stopped")
	}
	v, err := hs.serve(ctx, op, []byte(arg))
	if err != nil {
		b, _ := json.Marshal(map[string]string{"e": err.Error()})
		return string(b), nil
	}
	return `{"v":` + string(v) + `}`, nil
}

// setupBytecode is the prelude's setup, compiled once per process:
// parsing it took half of a run's time (BenchmarkRunOneCall). Bytecode
// is immutable and belongs to the QuickJS version linked in, so one
// compilation serves every VM.
var setupBytecode = sync.OnceValues(func() ([]byte, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	return vm.Compile("globalThis.__mcpx_finish = ("+prelude+")("+hostName+"); delete globalThis."+hostName+";", quickjs.EvalGlobal)
})

// compile makes code the body of an async function whose promise is
// handed to the prelude's finish, compiled once. A lone expression
// ("await proxy.call(...)") is its own value; anything else is a body
// that returns its value.
func compile(vm *quickjs.VM, code string) ([]byte, error) {
	const finish = "(function (f) { delete globalThis.__mcpx_finish; return f; })(globalThis.__mcpx_finish)"
	expr := strings.TrimRight(strings.TrimSpace(code), "; \t\r\n")
	if b, err := vm.Compile(finish+"((async () => (\n"+expr+"\n))())", quickjs.EvalGlobal); err == nil {
		return b, nil
	}
	return vm.Compile(finish+"((async () => {\n"+code+"\n})())", quickjs.EvalGlobal)
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
