package config

import (
	"encoding/json"
	"time"
)

// lifecycle reads the top-level lazy and idleTimeout, the defaults of the
// servers' own keys of the same names.
func (p *parser) lifecycle(tree map[string]any) {
	r := &reader{p: p, m: tree}
	if b, ok := r.boolean("lazy"); ok {
		p.cfg.Lazy = b
	}
	if d, ok := r.idle("idleTimeout"); ok {
		p.cfg.IdleTimeout = d
	}
	if r.err != nil {
		p.errs = append(p.errs, r.err)
	}
}

// serverLifecycle reads a server's lazy and idleTimeout over the defaults.
func (r *reader) serverLifecycle(s *Server) {
	s.PerSession, _ = r.boolean("perSession")
	if b, ok := r.boolean("lazy"); ok {
		s.Lazy = b
	}
	if d, ok := r.idle("idleTimeout"); ok {
		s.IdleTimeout = d
	}
}

// idle reads a duration like timeout does, where "off", false and 0 mean
// never (so a server can turn off a top-level default).
func (r *reader) idle(key string) (d time.Duration, ok bool) {
	v, present := r.get(key)
	if !present {
		return 0, false
	}
	switch v := v.(type) {
	case bool:
		if !v {
			return 0, true
		}
	case string:
		if v == "off" || v == "0" {
			return 0, true
		}
	case json.Number:
		if v == "0" {
			return 0, true
		}
	}
	return r.duration(key, false)
}
