package main

import (
	"context"
	"net/http"

	"github.com/charmbracelet/log"
	"go.opentelemetry.io/otel"

	"github.com/mcpx/mcpx/telemetry"
)

// openTelemetry sets up the exporters the OTEL_* environment asks for,
// and with pull the Prometheus reader behind serve --http's /metrics. It
// never stops a command: a bad setting is logged and telemetry is off.
func openTelemetry(ctx context.Context, logger *log.Logger, pull bool) *telemetry.Providers {
	l := logger.WithPrefix("otel")
	p, err := telemetry.Setup(ctx, &telemetry.Options{Version: version, Pull: pull, Logger: slogger(l)})
	if err != nil {
		logger.Warn("telemetry is off", "err", err)
		return nil
	}
	if p.TracerProvider != nil || p.MeterProvider != nil {
		// The exporters report a collector they cannot reach through
		// otel's one error handler, which by default writes to stderr
		// past mcpx's log.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { l.Warn("export failed", "err", err) }))
	}
	return p
}

// metricsHandler serves /metrics; nil when there is none.
func (s *session) metricsHandler() http.Handler {
	if s.tel == nil {
		return nil
	}
	return s.tel.MetricsHandler
}

// closeTelemetry flushes what is queued (the last spans and metrics)
// within step.
func (s *session) closeTelemetry() {
	if s.tel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownStep(s.cfg))
	defer cancel()
	if err := s.tel.Shutdown(ctx); err != nil {
		s.log.Warn("telemetry: the last spans or metrics were not exported", "err", err)
	}
}
