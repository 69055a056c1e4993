package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/mcpx/mcpx/aggregator/dashboard"
	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/trust"
)

// dashboardHandler is the dashboard serve --http serves at /ui; nil when
// the config turns it off (http.ui: false).
func (s *session) dashboardHandler() (http.Handler, error) {
	if !s.cfg.HTTP.UIOn() {
		return nil, nil
	}
	o := &dashboard.Options{
		View: func(profile string) dashboard.Catalog {
			if v := s.view(profile); v != nil {
				return v
			}
			return nil // not a nil *Aggregator in the interface
		},
		Control: serveControl{s},
		Redact:  s.red.Redact,
		Logger:  slogger(s.log.WithPrefix("ui")),
	}
	if s.audit != nil {
		o.AuditPath = audit.DefaultPath()
	}
	if s.tel != nil && s.tel.MetricsHandler != nil {
		o.Numbers = func(ctx context.Context) (telemetry.Numbers, error) { return s.tel.Numbers(ctx) }
	}
	return dashboard.New(o)
}

// serveControl makes the dashboard's changes with the functions the
// commands call: mcpx enable and disable edit the config file, which the
// serve reloads (watchConfig); mcpx trust approves through the
// aggregator; a restart has no command, and is the aggregator's.
type serveControl struct{ s *session }

func (c serveControl) Restart(server string) error { return c.s.agg.Restart(server) }

func (c serveControl) SetEnabled(server string, enabled bool) error {
	if c.s.cfg.File == "" {
		return errors.New("there is no config file to change: serve runs without one")
	}
	return config.SetEnabled(c.s.cfg.File, server, enabled)
}

func (c serveControl) Approve(r *trust.Review) error { return c.s.agg.Approve(r) }
