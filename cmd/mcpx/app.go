package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/aggregator/httpserve/accesstoken"
	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/trust"
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
	audit  *audit.Recorder
	pins   *trust.Store         // nil when there is no state directory
	tel    *telemetry.Providers // nil: none (telemetry.go)
	closed func()
	// stderr is ios.Err shared with the logger, for a command's own lines
	// while servers still log; on a terminal it also holds the spinner.
	stderr *statusLine
	spin   bool // stderr is a terminal (and the command is not serve): show a spinner while waiting
	// summarize makes close say, on stderr, which servers failed or are
	// still starting: what the command's output lacks. When about is
	// set, only the servers it names matter to the output.
	summarize bool
	about     []string
	// keys are the http.keys in force: the first config's, then each
	// reload's (serve --http checks every request against them).
	keys atomic.Pointer[[]config.APIKey]
	// oauth is http.oauth's resource server in force (setOAuth).
	oauth atomic.Pointer[accesstoken.Checker]
}

// open loads the config and starts every upstream. Serve mode logs at info
// and keeps failed upstreams reconnecting; one-shot commands log at warn,
// start only the upstreams they wait for (see openFor) and make one
// attempt each. pull adds the metrics reader of serve --http's /metrics.
func open(ctx context.Context, ios *streams, g *globalFlags, serve, pull bool) (*session, error) {
	opts := g.loadOptions()
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
	stderr := &statusLine{w: ios.Err}
	logger, closeLog, err := newLogger(stderr, level, g.logFile, red)
	if err != nil {
		return nil, exitWith(ios, 2, err)
	}
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	self, _ := os.Executable()
	for _, w := range guardRecursion(cfg, currentDepth(os.LookupEnv), self) {
		logger.Warn(w)
	}
	tokens, err := openTokenStore()
	if err != nil {
		logger.Warn("OAuth logins are off: no place to keep tokens", "err", err)
		tokens = nil
	}
	if cfg.File == "" {
		logger.Warn("no config file found (looked for " + config.SearchOrder + "): the catalog is empty")
	} else {
		logger.Info("config loaded", "file", cfg.File, "servers", len(cfg.Servers))
	}

	// Libraries that log through log/slog's default (mcp-go's stdio
	// transport does) go through the same logger, never raw to stderr.
	slog.SetDefault(slog.New(logger.WithPrefix("mcp-go")))

	step := shutdownStep(cfg)
	rec := openAudit(cfg, logger)
	pins, err := openPins(cfg, logger, serve)
	if err != nil {
		closeLog()
		return nil, exitWith(ios, 2, err)
	}
	tel := openTelemetry(ctx, logger, pull)
	o := &aggregator.Options{
		Logger:       slogger(logger),
		Redact:       red.Redact,
		Reconnect:    serve,
		Serving:      serve,
		Remembered:   serve,
		Deferred:     !serve,
		ReadyTimeout: readyTimeout(cfg, serve),
		Version:      version,
		Drain:        step,
		Linger:       shutdownLinger(cfg),
		Audit:        rec,
		Trust:        pins,
		// Replicas behind one load balancer share it to verify each
		// other's requestState (docs/protocol.md).
		StateSecret: strings.TrimSpace(os.Getenv("MCPX_STATE_SECRET")),
		Replica:     strings.TrimSpace(os.Getenv("MCPX_REPLICA")),
		Upstream: upstream.Options{StopGrace: step, TermGrace: step, Tokens: tokens,
			CacheDir: upstream.DefaultCacheDir(), Offline: g.cached},
	}
	if tel != nil {
		o.TracerProvider, o.MeterProvider = tel.TracerProvider, tel.MeterProvider
	}
	if g.approve {
		o.Approve = func(_ context.Context, server, tool string, _ json.RawMessage) error {
			logger.Info("approved by --approve", "tool", tool, "server", server)
			return nil
		}
	}
	agg := aggregator.New(cfg, o)
	agg.Start(ctx)
	return &session{cfg: cfg, load: opts, red: red, log: logger, agg: agg, audit: rec, pins: pins, tel: tel, closed: closeLog, stderr: stderr, spin: ios.ErrTTY && !serve}, nil
}

// readyTimeout is how long to wait for upstreams before answering. A
// terminal command waits for every server's own timeout; serve answers the
// first list after at most the config's readyTimeout, so that one slow or
// hung server never holds up the others, and announces late servers with
// list_changed (a call to a late server's tool waits for it).
func readyTimeout(cfg *config.Config, serve bool) time.Duration {
	if serve {
		if cfg.ReadyTimeout > 0 {
			return cfg.ReadyTimeout
		}
		return config.DefaultReadyTimeout
	}
	longest := config.DefaultTimeout
	for _, s := range cfg.Servers {
		longest = max(longest, s.Timeout)
	}
	return longest + time.Second
}

func (s *session) close() {
	var lines []string
	if s.summarize {
		// Before Close, which stops every server.
		lines = notReady(s.matter(s.agg.Upstreams()), time.Now())
	}
	s.agg.Close()
	s.closePins()
	s.audit.Close() // after the calls, before the log it may write to
	s.closed()
	for _, l := range lines {
		fmt.Fprintln(s.stderr, "mcpx:", s.red.Redact(l))
	}
}

// shutdownStep divides shutdownTimeout between the steps of a shutdown:
// serve's drain of calls in flight, then of its output (one step each),
// and the stopping of children: a grace after closing their stdin, a
// grace after SIGTERM, and the rest before SIGKILL. Each is at most 1s,
// as before the limit existed.
func shutdownStep(cfg *config.Config) time.Duration {
	total := cfg.ShutdownTimeout
	if total <= 0 {
		total = config.DefaultShutdownTimeout
	}
	return min(total/5, time.Second)
}

// shutdownLinger is what shutdownTimeout has beyond its five steps (past
// 5s): serve waits that much longer, after stdin closes, for the answers
// to what the client sent before, so that they may use all but 4s of
// shutdownTimeout.
func shutdownLinger(cfg *config.Config) time.Duration {
	total := cfg.ShutdownTimeout
	if total <= 0 {
		total = config.DefaultShutdownTimeout
	}
	return max(total-5*shutdownStep(cfg), 0)
}

// shutdown closes the session within what is left of shutdownTimeout
// after serve's two drain steps and its linger: past it, every child tree
// is killed at once and mcpx goes, whatever a child or the client is
// doing.
func (s *session) shutdown() {
	total := s.cfg.ShutdownTimeout
	if total <= 0 {
		total = config.DefaultShutdownTimeout
	}
	// Half a step is kept for killing and exiting.
	budget := total - 5*shutdownStep(s.cfg)/2 - shutdownLinger(s.cfg)
	done := make(chan struct{})
	go func() {
		s.agg.Close()
		close(done)
	}()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.log.Warn("shutdown ran out of shutdownTimeout: killing every child server", "shutdownTimeout", total)
		s.agg.Kill()
	}
	s.closePins()
	s.audit.Close() // the lines still queued, before the log it may write to
	s.closeTelemetry()
	s.closed()
}

// closePins writes the servers seen for the first time whose pins wait
// for their write (see trust.Store), once no catalog is built any more.
func (s *session) closePins() {
	if s.pins == nil {
		return
	}
	if err := s.pins.Close(); err != nil {
		s.log.Debug("trust pins of new servers not written", "err", err) // logged when it failed
	}
}

// exitWith prints err and returns an error that only carries the status.
func exitWith(ios *streams, code int, err error) error {
	fmt.Fprintln(ios.Err, "mcpx:", err)
	return exitError{code}
}

// openReady opens a session for a one-shot command that reports on every
// server itself (servers, doctor): it starts every server and waits for
// their first connect attempts to be over.
func openReady(ctx context.Context, ios *streams, g *globalFlags) (*session, error) {
	s, err := openFor(ctx, ios, g, nil)
	if err != nil {
		return nil, err
	}
	s.summarize = false
	return s, nil
}

// owners names the servers a one-shot command needs, as
// [aggregator.Aggregator.Owners] does: nil for every server; found when
// the catalog has what the command asks for.
type owners func(*aggregator.Aggregator) (names []string, found bool)

// openFor opens a session for a one-shot command that needs only some
// servers (needed nil: all). It starts and waits for those that the
// remembered catalog or a prefix says own what the command asks for,
// and no other; only when they are up and do not have it after all (a
// catalog remembered before the server changed, a name of another
// server's) is every server started and waited for. Its close says which
// of the servers that matter failed or are still starting.
func openFor(ctx context.Context, ios *streams, g *globalFlags, needed owners) (*session, error) {
	s, err := open(ctx, ios, g, false, false)
	if err != nil {
		return nil, err
	}
	s.summarize = true
	if err := s.waitNeeded(ctx, needed); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// waitNeeded starts and waits for the servers needed names, widening to
// every server when those are up and lack the name, and keeps in
// s.about the servers that matter to the command's answer.
func (s *session) waitNeeded(ctx context.Context, needed owners) error {
	if needed == nil {
		return s.wait(ctx, nil)
	}
	names, _ := needed(s.agg)
	if err := s.wait(ctx, names); err != nil {
		return err
	}
	now, found := needed(s.agg)
	switch {
	case found && s.started(now):
		s.about = now
		return nil
	case names == nil:
		return nil // every server was needed, and all matter
	case !found && !s.allReady(names):
		// A server it needs failed: that is the answer, and the
		// others have nothing to add.
		s.about = names
		return nil
	}
	if err := s.wait(ctx, nil); err != nil {
		return err
	}
	if now, found := needed(s.agg); found {
		s.about = now
	}
	return nil
}

// started reports whether every named server was started.
func (s *session) started(names []string) bool {
	for _, st := range s.agg.Upstreams() {
		if slices.Contains(names, st.Name) && st.State == upstream.StateNotStarted {
			return false
		}
	}
	return true
}

// allReady reports whether every named server is connected.
func (s *session) allReady(names []string) bool {
	n := 0
	for _, st := range s.agg.Upstreams() {
		if slices.Contains(names, st.Name) {
			if st.State != upstream.StateConnected {
				return false
			}
			n++
		}
	}
	return n == len(names)
}

// matter keeps the statuses of the servers that matter to the command's
// answer: those in s.about when it is set, else all.
func (s *session) matter(statuses []upstream.Status) []upstream.Status {
	if s.about == nil {
		return statuses
	}
	var out []upstream.Status
	for _, st := range statuses {
		if slices.Contains(s.about, st.Name) {
			out = append(out, st)
		}
	}
	return out
}

// wait blocks until the first connect attempts of the named servers (nil:
// all) are over, showing on a terminal which are still starting.
func (s *session) wait(ctx context.Context, names []string) error {
	if s.spin {
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.spinner(sctx, names)
		}()
		defer func() {
			stop()
			<-done
		}()
	}
	if err := s.agg.WaitServers(ctx, names); err != nil {
		if errors.Is(err, context.Canceled) {
			return exitError{130}
		}
		return err
	}
	return nil
}
