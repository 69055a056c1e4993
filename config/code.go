package config

import "time"

// Approve says which inner calls of a code-mode script wait for the
// user's consent.
type Approve string

// The values of code.approve.
const (
	// ApproveWrites asks before a call of any tool not marked
	// readOnlyHint, or marked destructiveHint (the default).
	ApproveWrites Approve = "writes"
	// ApproveDestructive asks only before a tool that may destroy: one
	// not read-only whose destructiveHint is true or absent (the MCP
	// default), so a tool marked destructiveHint: false goes ahead.
	ApproveDestructive Approve = "destructive"
	// ApproveAll asks before every tool call of a script.
	ApproveAll Approve = "all"
	// ApproveNone asks before none: the user trusts every tool the
	// client may call to be called from a script.
	ApproveNone Approve = "none"
)

// Defaults of the code key.
const (
	DefaultCodeTimeout  = 30 * time.Second
	DefaultCodeMemory   = 64 << 20
	DefaultCodeMaxCalls = 100
	DefaultCodeParallel = 8
	// minCodeMemory leaves a script room for its runtime's own start.
	minCodeMemory = 4 << 20
)

// Code is the code key: the proxy tool's run action, which runs a
// model's script over the proxy's verbs in a sandbox. Zero fields are
// the defaults; Disabled turns the action off.
type Code struct {
	// Disabled is "code": false (or "enabled": false): the proxy has no
	// run action.
	Disabled bool
	// Timeout bounds one run's wall clock, time spent waiting for the
	// user's approval aside.
	Timeout time.Duration
	// Memory bounds what one run's script may allocate.
	Memory int64
	// MaxCalls bounds the inner calls of one run.
	MaxCalls int
	// Parallel bounds the inner calls of one run in flight at once
	// (proxy.callAll).
	Parallel int
	// MaxOutput bounds the bytes of a run's answer (its value and its
	// log); zero is the client's maxResultBytes.
	MaxOutput int64
	// Approve says which inner calls ask the user first.
	Approve Approve
}

// WithDefaults returns c with its zero fields set to the defaults.
func (c Code) WithDefaults() Code {
	if c.Timeout == 0 {
		c.Timeout = DefaultCodeTimeout
	}
	if c.Memory == 0 {
		c.Memory = DefaultCodeMemory
	}
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultCodeMaxCalls
	}
	if c.Parallel == 0 {
		c.Parallel = DefaultCodeParallel
	}
	if c.Approve == "" {
		c.Approve = ApproveWrites
	}
	return c
}

// code reads the top-level code key: false, true, or an object.
func (p *parser) code(tree map[string]any) {
	c := &p.cfg.Code
	v, ok := tree["code"]
	if !ok || v == nil {
		return
	}
	if b, isBool := v.(bool); isBool {
		c.Disabled = !b
		return
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		p.fail("", "code", "want true, false or an object, not "+kind(v))
		return
	}
	r := &reader{p: p, prefix: "code.", m: m}
	if on, ok := r.boolean("enabled"); ok {
		c.Disabled = !on
	}
	if d, ok := r.duration("timeout", false); ok {
		c.Timeout = d
	}
	if n, ok := r.size("memory", minCodeMemory); ok {
		c.Memory = n
	}
	if n, ok := r.count("maxCalls", 1); ok {
		c.MaxCalls = n
	}
	if n, ok := r.count("parallel", 1); ok {
		c.Parallel = n
	}
	if n, ok := r.size("maxOutput", 1<<10); ok {
		c.MaxOutput = n
	}
	if s, ok := r.str("approve"); ok {
		switch a := Approve(s); a {
		case ApproveWrites, ApproveDestructive, ApproveAll, ApproveNone:
			c.Approve = a
		default:
			r.fail("approve", "%q: want \"writes\", \"destructive\", \"all\" or \"none\"", s)
		}
	}
	r.warnUnknown("enabled", "timeout", "memory", "maxCalls", "parallel", "maxOutput", "approve")
	if r.err != nil {
		p.errs = append(p.errs, r.err)
	}
}
