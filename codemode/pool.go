package codemode

import "context"

// An Engine runs scripts within one set of limits, with a fresh VM ready
// for the next run: starting a VM (and closing the last one) is half of
// what a short run costs (BenchmarkRunOneCall), so it happens between
// runs rather than in one. A VM serves one run and is closed: nothing of
// one script is there for the next. The zero Engine is not ready; use
// NewEngine. Its methods are safe for concurrent use.
type Engine struct {
	lim   Limits
	spare chan *fresh
}

// NewEngine returns an Engine for runs within lim (with its defaults).
// It starts no VM until the first run.
func NewEngine(lim Limits) *Engine {
	return &Engine{lim: lim.OrDefaults(), spare: make(chan *fresh, 1)}
}

// Run is [Run] with the Engine's limits, on its spare VM when it has
// one.
func (e *Engine) Run(ctx context.Context, code string, h Host) Result {
	var f *fresh
	select {
	case f = <-e.spare:
	default:
		var err error
		if f, err = newFresh(e.lim.Memory); err != nil {
			return Result{Err: err}
		}
	}
	// After the run, not during it: the spare's start would take CPU
	// from the run it is not for.
	defer func() {
		go func() {
			f.vm.Close()
			e.refill()
		}()
	}()
	return run(ctx, code, h, e.lim, f)
}

// refill readies a VM for the next run, unless one is ready.
func (e *Engine) refill() {
	if len(e.spare) > 0 {
		return
	}
	f, err := newFresh(e.lim.Memory)
	if err != nil {
		return // the next run starts its own and says why it cannot
	}
	select {
	case e.spare <- f:
	default:
		f.vm.Close()
	}
}
