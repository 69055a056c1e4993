package config

import (
	"fmt"
	"slices"
)

// Trust is how a server's tool and prompt definitions are pinned (see
// docs/trust.md).
type Trust string

// The values of the trust keys.
const (
	// TrustPin withholds a changed or new tool or prompt until `mcpx
	// trust` approves it; the default.
	TrustPin Trust = "pin"
	// TrustWarn serves it and logs the change.
	TrustWarn Trust = "warn"
	// TrustOff pins nothing.
	TrustOff Trust = "off"
)

var trustValues = []Trust{TrustPin, TrustWarn, TrustOff}

// trustEnv overrides the top-level trust key, as MCPX_EXPOSE does expose;
// a server's own trust key still wins.
const trustEnv = "MCPX_TRUST"

// checkTrust reports whether v is a trust value, failing field if not.
func checkTrust(fail func(field, format string, args ...any), field, v string) bool {
	if slices.Contains(trustValues, Trust(v)) {
		return true
	}
	fail(field, "unknown trust %q (want \"pin\", \"warn\" or \"off\")", v)
	return false
}

// TrustOf is how server s is pinned: its own trust key, else the
// top-level one.
func (c *Config) TrustOf(s Server) Trust {
	if s.Trust != "" {
		return s.Trust
	}
	if c.Trust == "" {
		return TrustPin
	}
	return c.Trust
}

// trust reads the top-level trust, over which MCPX_TRUST goes.
func (p *parser) trust(tree map[string]any, o *LoadOptions) {
	r := &reader{p: p, m: tree}
	if s, ok := r.str("trust"); ok && checkTrust(r.fail, "trust", s) {
		p.cfg.Trust = Trust(s)
	}
	if r.err != nil {
		p.errs = append(p.errs, r.err)
	}
	if v, ok := o.LookupEnv(trustEnv); ok && v != "" {
		if slices.Contains(trustValues, Trust(v)) {
			p.cfg.Trust = Trust(v)
		} else {
			p.errs = append(p.errs, &Error{Field: trustEnv, Msg: fmt.Sprintf("unknown trust %q (want \"pin\", \"warn\" or \"off\")", v)})
		}
	}
}

// serverTrust reads a server's own trust key; "" when it has none.
func (r *reader) serverTrust() Trust {
	if s, ok := r.str("trust"); ok && checkTrust(r.fail, "trust", s) {
		return Trust(s)
	}
	return ""
}
