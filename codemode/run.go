package codemode

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Limits bound one run. Zero fields take the defaults of [Limits.OrDefaults].
type Limits struct {
	// Timeout bounds the run's wall clock, time waiting for approvals
	// aside.
	Timeout time.Duration
	// Memory bounds what the script allocates, in bytes.
	Memory int64
	// MaxCalls bounds the inner calls (proxy.call, and each call of
	// proxy.callAll).
	MaxCalls int
	// Parallel bounds the calls of one proxy.callAll in flight at once.
	Parallel int
	// MaxOutput bounds the answer: the value's JSON and the log.
	MaxOutput int
}

// OrDefaults returns l with its zero fields set to the defaults: 30s,
// 64 MiB, 100 calls, 8 at once, 100 KiB of output.
func (l Limits) OrDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 30 * time.Second
	}
	if l.Memory <= 0 {
		l.Memory = 64 << 20
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = 100
	}
	if l.Parallel <= 0 {
		l.Parallel = 8
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 100 << 10
	}
	return l
}

// Result is how a run ended.
type Result struct {
	// Value is the JSON of the script's value; nil when it failed.
	Value json.RawMessage
	// Log is what the script wrote with console.log, a line each.
	Log string
	// LogCut counts the lines dropped past the log's share of MaxOutput.
	LogCut int
	// Calls counts the inner calls the script made.
	Calls int
	// Err says why the script failed: what it threw, or the limit it
	// broke.
	Err error
}

//go:embed prelude.js
var prelude string

//go:embed lockdown.js
var lockdown string

// Run runs code against h within lim. code is a script: the body of an
// async function whose return value is the answer (a lone expression is
// its own value). It never panics; a script that throws, breaks a limit
// or is cancelled through ctx has Err set.
func Run(ctx context.Context, code string, h Host, lim Limits) Result {
	lim = lim.OrDefaults()
	m, err := newMachine(lim.Memory)
	if err != nil {
		return Result{Err: err}
	}
	defer m.close()
	return run(ctx, code, h, lim, m)
}

// run runs code in m, within lim (with its defaults).
func run(ctx context.Context, code string, h Host, lim Limits, m *machine) Result {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hs := &host{h: h, lim: lim}
	hs.clock = newClock(lim.Timeout, cancel)
	defer hs.clock.stop()
	val, err := m.execute(ctx, code, hs, lim)
	if err == nil && len(val) > lim.MaxOutput {
		err = fmt.Errorf("the script's value is %d bytes of JSON, over the run's limit of %d: return less (count, filter or pick in the script); it starts %s",
			len(val), lim.MaxOutput, cutUTF8(string(val), 200))
		val = nil
	}
	if err != nil && hs.clock.expired() {
		err = fmt.Errorf("the script ran past its time limit of %s (code.timeout)", lim.Timeout)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return Result{Value: val, Log: hs.log.String(), LogCut: hs.logCut, Calls: min(hs.calls, lim.MaxCalls), Err: err}
}

// ToolResult is the run's answer as the proxy gives it: the value's JSON
// as text, then the log when there is one; a failure is isError with its
// reason.
func (r Result) ToolResult() json.RawMessage {
	type item struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var items []item
	if r.Err != nil {
		items = append(items, item{"text", "The script failed: " + r.Err.Error()})
	} else {
		items = append(items, item{"text", string(r.Value)})
	}
	if r.Log != "" || r.LogCut > 0 {
		log := "console:\n" + strings.TrimSuffix(r.Log, "\n")
		if r.LogCut > 0 {
			log += fmt.Sprintf("\n[%d more lines cut]", r.LogCut)
		}
		items = append(items, item{"text", log})
	}
	b, _ := json.Marshal(struct {
		Content []item `json:"content"`
		IsError bool   `json:"isError,omitempty"`
	}{items, r.Err != nil})
	return b
}

// clock is a run's deadline, which stops while the run waits for a
// person.
type clock struct {
	mu      sync.Mutex
	left    time.Duration
	started time.Time
	timer   *time.Timer
	paused  int
	fired   bool
	onFire  func()
}

func newClock(d time.Duration, onFire func()) *clock {
	c := &clock{left: d, started: time.Now(), onFire: onFire}
	c.timer = time.AfterFunc(d, c.fire)
	return c
}

func (c *clock) fire() {
	c.mu.Lock()
	if c.paused > 0 {
		c.mu.Unlock()
		return
	}
	c.fired = true
	c.mu.Unlock()
	c.onFire()
}

func (c *clock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused++; c.paused == 1 && c.timer.Stop() {
		c.left -= time.Since(c.started)
	}
}

func (c *clock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused--; c.paused == 0 && !c.fired {
		c.started = time.Now()
		c.timer.Reset(max(c.left, 0))
	}
}

func (c *clock) expired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

func (c *clock) stop() { c.timer.Stop() }
