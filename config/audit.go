package config

// DefaultAuditMaxBytes is the size at which the audit trail rotates.
const DefaultAuditMaxBytes = 10 << 20

// minAuditMaxBytes keeps a rotation from happening at every line.
const minAuditMaxBytes = 4 << 10

// Audit is the audit key: the trail of calls in
// $XDG_STATE_HOME/mcpx/audit.jsonl. The zero value is the default: on,
// no argument names or values, rotated at 10 MiB.
type Audit struct {
	// Disabled is "audit": false (or "enabled": false).
	Disabled bool
	// Arguments is what a line keeps of the arguments besides their size
	// and hash: "" (or "none"), "keys" (their names) or "full".
	Arguments string
	// MaxBytes is the size past which the file rotates; zero means
	// DefaultAuditMaxBytes.
	MaxBytes int64
}

// audit reads the top-level audit key: false, true, or an object.
func (p *parser) audit(tree map[string]any) {
	a := &p.cfg.Audit
	v, ok := tree["audit"]
	if !ok || v == nil {
		return
	}
	if b, isBool := v.(bool); isBool {
		a.Disabled = !b
		return
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		p.fail("", "audit", "want false or an object, not "+kind(v))
		return
	}
	r := &reader{p: p, prefix: "audit.", m: m}
	if on, ok := r.boolean("enabled"); ok {
		a.Disabled = !on
	}
	if s, ok := r.str("arguments"); ok {
		switch s {
		case "none":
		case "keys", "full":
			a.Arguments = s
		default:
			r.fail("arguments", "%q: want \"none\", \"keys\" or \"full\"", s)
		}
	}
	if n, ok := r.size("maxBytes", minAuditMaxBytes); ok {
		a.MaxBytes = n
	}
	r.warnUnknown("enabled", "arguments", "maxBytes")
	if r.err != nil {
		p.errs = append(p.errs, r.err)
	}
}
