package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// session is what every command starts from: the config, a logger that
// redacts the config's secrets, and the aggregator over its servers.
type session struct {
	cfg    *config.Config
	load   *config.LoadOptions // how cfg was found, for a reload
	red    *redactor
	log    *log.Logger
	agg    *aggregator.Aggregator
	closed func()
}

// open loads the config and starts every upstream. Serve mode logs at info
// and keeps failed upstreams reconnecting; one-shot commands log at warn
// and make one attempt each.
func open(ctx context.Context, ios *streams, g *globalFlags, serve bool) (*session, error) {
	opts := &config.LoadOptions{File: g.config, Expose: g.expose}
	if g.separator != "" {
		opts.Separator = &g.separator
	}
	cfg, err := config.Load(opts)
	if err != nil {
		return nil, exitWith(ios, 2, err)
	}
	level := g.logLevel
	if level == "" {
		level = "warn"
		if serve {
			level = "info"
		}
	}
	red := newRedactor(cfg.Secrets())
	logger, closeLog, err := newLogger(ios.Err, level, g.logFile, red)
	if err != nil {
		return nil, exitWith(ios, 2, err)
	}
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	if cfg.File == "" {
		logger.Warn("no config file found (--config, $MCPX_CONFIG, ./mcpx.json, ~/.config/mcpx/config.json): the catalog is empty")
	} else {
		logger.Debug("config loaded", "file", cfg.File, "servers", len(cfg.Servers))
	}

	agg := aggregator.New(cfg, &aggregator.Options{
		Logger:       logger,
		Redact:       red.Redact,
		Reconnect:    serve,
		Serving:      serve || g.asServe,
		Remembered:   serve,
		ReadyTimeout: readyTimeout(cfg, serve),
		Version:      version,
		Upstream:     upstream.Options{CacheDir: upstream.DefaultCacheDir(), Offline: g.cached},
	})
	agg.Start(ctx)
	return &session{cfg: cfg, load: opts, red: red, log: logger, agg: agg, closed: closeLog}, nil
}

// readyTimeout is how long to wait for upstreams before answering. A
// terminal command waits for every server's own timeout; serve answers
// after at most 10s and announces late servers with list_changed.
func readyTimeout(cfg *config.Config, serve bool) time.Duration {
	if serve {
		return 10 * time.Second
	}
	longest := config.DefaultTimeout
	for _, s := range cfg.Servers {
		longest = max(longest, s.Timeout)
	}
	return longest + time.Second
}

func (s *session) close() {
	s.agg.Close()
	s.closed()
}

// exitWith prints err and returns an error that only carries the status.
func exitWith(ios *streams, code int, err error) error {
	fmt.Fprintln(ios.Err, "mcpx:", err)
	return exitError{code}
}

// openReady opens a session for a one-shot command and waits for the
// first connect attempts to be over.
func openReady(ctx context.Context, ios *streams, g *globalFlags) (*session, error) {
	s, err := open(ctx, ios, g, false)
	if err != nil {
		return nil, err
	}
	if err := s.wait(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// wait blocks until the first connect attempts are over.
func (s *session) wait(ctx context.Context) error {
	if err := s.agg.WaitReady(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return exitError{130}
		}
		return err
	}
	return nil
}
