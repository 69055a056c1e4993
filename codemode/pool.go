package codemode

import (
	"context"
	"sync"
	"sync/atomic"
)

// idleMachines bounds the VMs an Engine keeps between runs: what runs at
// once beyond it starts its own VM and closes it after.
const idleMachines = 2

// machineRuns bounds the runs one VM serves, so that what a run may
// leave that no check sees (strings in the runtime's symbol registry)
// cannot pile up.
const machineRuns = 1024

// An Engine runs scripts within one set of limits, on VMs it keeps
// between runs. A VM serves one run at a time and is checked after each
// (machine.settle), off the path of the run that used it; a run that
// finds none idle waits for one being checked, which is much quicker
// than starting one. The zero Engine is not ready; use NewEngine. Its
// methods are safe for concurrent use.
type Engine struct {
	lim Limits

	mu       sync.Mutex
	idle     []*machine
	settling int
	changed  chan struct{} // closed when idle or settling changes

	// started counts the VMs started, for tests of reuse.
	started atomic.Int64
}

// NewEngine returns an Engine for runs within lim (with its defaults).
// It starts no VM until the first run.
func NewEngine(lim Limits) *Engine {
	return &Engine{lim: lim.OrDefaults(), changed: make(chan struct{})}
}

// Run is [Run] with the Engine's limits, on a VM it keeps.
func (e *Engine) Run(ctx context.Context, code string, h Host) Result {
	m, err := e.take(ctx)
	if err != nil {
		return Result{Err: err}
	}
	r := run(ctx, code, h, e.lim, m)
	e.mu.Lock()
	e.settling++
	e.mu.Unlock()
	go e.keep(m)
	return r
}

// take returns an idle VM, or the next one to finish its check, or a
// new one when none is being checked.
func (e *Engine) take(ctx context.Context) (*machine, error) {
	for {
		e.mu.Lock()
		if n := len(e.idle); n > 0 {
			m := e.idle[n-1]
			e.idle = e.idle[:n-1]
			e.mu.Unlock()
			return m, nil
		}
		if e.settling == 0 {
			e.mu.Unlock()
			e.started.Add(1)
			return newMachine(e.lim.Memory)
		}
		changed := e.changed
		e.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// keep checks m after a run and keeps it for the next one when it is fit
// and an idle slot is free; otherwise it closes m. A VM closed because it
// served its runs, or failed its check, is replaced here, off the path of
// any run: starting one costs as much as dozens of short runs
// (BenchmarkRunOneCall against BenchmarkEngineOneCall), which the run
// after it would otherwise wait for.
func (e *Engine) keep(m *machine) {
	fit := m.settle(machineRuns)
	e.mu.Lock()
	kept := fit && len(e.idle) < idleMachines
	if kept {
		e.idle = append(e.idle, m)
	}
	// A replacement counts as settling until it is ready, so that a run
	// waits for it rather than starting one of its own.
	replace := !kept && len(e.idle)+e.settling-1 < idleMachines
	if !replace {
		e.settling--
		e.signalLocked()
	}
	e.mu.Unlock()
	if !kept {
		m.close()
	}
	if !replace {
		return
	}
	e.started.Add(1)
	fresh, err := newMachine(e.lim.Memory)
	e.mu.Lock()
	e.settling--
	if err == nil && len(e.idle) < idleMachines {
		e.idle = append(e.idle, fresh)
		fresh = nil
	}
	e.signalLocked()
	e.mu.Unlock()
	if fresh != nil {
		fresh.close()
	}
}

// signalLocked wakes the runs waiting for a VM; e.mu is held.
func (e *Engine) signalLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}
