package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
	"time"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"github.com/mcpx/mcpx/aggregator/httpserve"
	"github.com/mcpx/mcpx/aggregator/httpserve/accesstoken"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/execpages"
	"github.com/mcpx/mcpx/nbpipe"
)

// defaultHTTPAddr is where `serve --http` listens when given no address.
const defaultHTTPAddr = "127.0.0.1:7777"

func newServeCmd(ios *streams, g *globalFlags) *cobra.Command {
	var stdio bool
	var httpAddr, tokenFile string
	cmd := &cobra.Command{
		Use:   "serve [--stdio] [--http [ADDR]]",
		Short: "Serve the catalog as one MCP server on stdin/stdout (what an MCP client runs) or over HTTP",
		Long: `Serve every configured server as one MCP server over stdio. Stdout
carries JSON-RPC and nothing else; logs go to stderr or --log-file. mcpx
exits, taking every child server with it, when stdin closes or on SIGINT or
SIGTERM, within shutdownTimeout (default 5s) whatever a child or the
client is doing. The config file is watched: added servers start, removed
ones stop, changed ones restart, and the client is told with list_changed;
a file that does not parse is logged and the running config kept. SIGHUP
reloads as well.

With --http [ADDR] (default ` + defaultHTTPAddr + `) one mcpx serves every client
that connects, sharing the upstreams: MCP streamable HTTP at /mcp, the
legacy HTTP+SSE transport at /sse and /messages, /healthz, and a web
dashboard at /ui (http.ui: false turns it off). Requests
whose Host or Origin is not allowed get 403 (http.allowedHosts,
http.allowedOrigins). A non-loopback ADDR needs a bearer token
(--token-file, MCPX_HTTP_TOKEN or http.token). --stdio and --http may be
given together; stdio is served alone unless --http is given.`,
		// `--http ADDR` with a space reaches here as an argument: the flag's
		// value is optional, so pflag cannot take the next word as it.
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			withHTTP := cmd.Flags().Changed("http")
			if len(args) == 1 {
				if !withHTTP || httpAddr != defaultHTTPAddr {
					return usagef("serve: unexpected argument %q (an address goes after --http)", args[0])
				}
				httpAddr = args[0]
			}
			withStdio := stdio && (cmd.Flags().Changed("stdio") || !withHTTP)
			if !withStdio && !withHTTP {
				return usagef("serve: give --stdio, --http or both")
			}
			var token string
			if withHTTP {
				var err error
				if token, err = httpToken(tokenFile); err != nil {
					return exitWith(ios, 2, err)
				}
			}
			if os.Getenv("GOGC") == "" {
				defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
			}
			s, err := open(cmd.Context(), ios, g, true, withHTTP)
			if err != nil {
				return err
			}
			if withHTTP && s.cfg.HTTP.Problem != "" {
				// The http section guards the listener: never serve
				// without what it asks for.
				s.shutdown()
				return exitWith(ios, 2, &config.Error{File: s.cfg.File, Field: "http", Msg: s.cfg.HTTP.Problem})
			}
			if withStdio && ios.InTTY {
				// Typed by a person, who would otherwise see nothing happen.
				fmt.Fprintln(s.stderr, handTypedServe)
			}
			if token == "" {
				token = s.cfg.HTTP.Token
			}
			s.red.add([]string{token})
			stop, err := s.watchConfig(cmd.Context())
			if err != nil {
				s.shutdown()
				return err
			}
			err = serve(cmd.Context(), ios, s, withStdio, withHTTP, httpAddr, token)
			stop()
			s.shutdown()
			if errors.Is(err, httpserve.ErrTokenRequired) {
				return exitWith(ios, 2, err)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", true, "serve on stdin/stdout")
	// No default value: HTTP is off unless --http is given, and help would
	// show a default as if it were on. The address --http alone means is
	// its NoOptDefVal, which help shows as ADDR[="127.0.0.1:7777"].
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve MCP over HTTP on `ADDR` (streamable HTTP at /mcp, legacy SSE at /sse); off unless given")
	cmd.Flags().Lookup("http").NoOptDefVal = defaultHTTPAddr
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the bearer token HTTP clients must send (else MCPX_HTTP_TOKEN, else http.token)")
	return cmd
}

// serveGCPercent is the garbage collector's GOGC while serving, unless
// the environment sets one. What serve keeps (the catalog, buffers) is a
// few MB while every call leaves a few KB of garbage, so at the default
// of 100 the collector ran every few hundred calls under load. At 400 it
// runs a quarter as often, and the heap stays under 16 MB before the
// first collection (4 MB at 100): the idle RSS does not change.
// 64 concurrent callers of an out-of-process mcpx: 0.56-0.57 of a direct
// connection's throughput at 100, 0.58-0.59 at 400.
const serveGCPercent = 400

// handTypedServe is what `mcpx serve` says when stdin is a terminal.
const handTypedServe = "mcpx serve is waiting for an MCP client to speak JSON-RPC on stdin: an MCP client (Claude Desktop, Cursor, ...) runs this command itself.\n" +
	"To see the tools from a shell, run `mcpx list tools` (or `mcpx servers`). Ctrl-C stops."

// serve runs the transports asked for until ctx is done or stdio ends
// (the client that started mcpx is gone, so mcpx goes too).
func serve(ctx context.Context, ios *streams, s *session, withStdio, withHTTP bool, addr, token string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.pins != nil {
		// An approval (mcpx trust) shows at once: the catalog is built
		// again and clients are sent list_changed. The watch begins when
		// something waits for an approval.
		if err := s.pins.Watch(ctx, s.agg.Rebuild); err != nil {
			s.log.Warn("approvals by mcpx trust are seen only after a restart", "err", err)
		}
	}
	// serve reads the pin file while it answers initialize (see
	// trust.Options.Background); one that is not a pin file stops it as
	// it would have stopped the start.
	if s.pins != nil {
		go func() {
			if s.pins.Loaded(ctx) != nil {
				cancel()
			}
		}()
	}
	go settle(ctx, s)
	errs := make(chan error, 2)
	n := 0
	if withHTTP {
		n++
		step := shutdownStep(s.cfg)
		s.keys.Store(&s.cfg.HTTP.Keys)
		ui, err := s.dashboardHandler()
		if err != nil {
			return err
		}
		api, err := s.apiHandler()
		if err != nil {
			return err
		}
		s.setOAuth(s.cfg.HTTP.OAuth)
		opts := &httpserve.Options{Token: token, Keys: func() []config.APIKey { return *s.keys.Load() }, OAuth: s.oauth.Load,
			AllowedHosts:   s.cfg.HTTP.AllowedHosts,
			AllowedOrigins: s.cfg.HTTP.AllowedOrigins, SessionTimeout: s.cfg.HTTP.SessionTimeout,
			ShutdownTimeout: 2 * step, Metrics: s.metricsHandler(), API: api, UI: ui,
			Logger: slogger(s.log), MaxMessageBytes: s.cfg.MaxMessageBytes, MaxBodyMemory: s.cfg.HTTP.MaxBodyMemory, Drain: step,
			OnListen: func(a net.Addr) {
				s.log.Info("serving on http", "addr", a.String(), "mcp", "http://"+a.String()+"/mcp",
					"servers", len(s.cfg.Servers), "expose", s.cfg.Expose)
			}}
		go func() {
			errs <- httpserve.ListenAndServe(ctx, addr, s.agg, opts)
			cancel()
		}()
	}
	if withStdio {
		n++
		s.log.Info("serving on stdio", "servers", len(s.cfg.Servers), "expose", s.cfg.Expose)
		in, inDone := pollableIn(ios, s.log)
		out, outDone := pollableOut(ios, s.log)
		go func() {
			errs <- s.agg.ServeStdio(ctx, in, out)
			outDone()
			inDone()
			cancel()
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if s.pins != nil {
		if err := s.pins.Loaded(context.WithoutCancel(ctx)); err != nil {
			return exitWith(ios, 2, err)
		}
	}
	return first
}

// settle gives back, once every server has made its first connect
// attempt, what the start left behind: the pins of the servers seen for
// the first time are written at once, and the garbage (the servers'
// lists as read, the catalogs and search indexes built on the way, the
// pins' canonical forms) is collected and its memory returned to the
// system. At serve's GOGC of 400 nothing would collect it for minutes,
// and an idle mcpx would keep it resident.
//
// What the servers' first connects leave after that (catalogs rebuilt as
// the last ones arrive, the pins of those written, their search indexes)
// is given back the same way once the catalog has stayed the same for
// settleQuiet, or settleMax after the start at the latest: with 1,000
// servers that was 13-24 MB still resident at rest.
func settle(ctx context.Context, s *session) {
	start := time.Now()
	if s.agg.WaitStarted(ctx) != nil {
		return
	}
	if s.pins != nil {
		s.pins.Flush()
	}
	giveBack(s.log)
	tick := time.NewTicker(settleQuiet / 3)
	defer tick.Stop()
	last, since := s.agg.Catalog(), time.Now()
	for time.Since(start) < settleMax {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if c := s.agg.Catalog(); c != last {
			last, since = c, time.Now()
			continue
		}
		if time.Since(since) >= settleQuiet {
			break
		}
	}
	if s.pins != nil {
		s.pins.Flush()
	}
	giveBack(s.log)
}

// giveBack returns to the system what a start keeps and no longer needs:
// its garbage, and the pages of mcpx's executable that only the start
// touched (package initialisation, the servers' first connects), which
// were most of an idle mcpx's memory (docs/performance.md).
func giveBack(logger *log.Logger) {
	debug.FreeOSMemory()
	if _, err := execpages.Drop(); err != nil {
		logger.Debug("the start's pages of the executable stay mapped", "err", err)
	}
}

// settleQuiet and settleMax bound settle's wait for a catalog at rest.
const (
	settleQuiet = 3 * time.Second
	settleMax   = 2 * time.Minute
)

// pollableOut is the client's end of stdio to write answers to: stdout
// in non-blocking mode when it is a pipe or socket, so that an upstream's
// reader can write an answer itself without ever waiting on the client
// (see nbpipe), else stdout as it is. done releases it once serving ends.
func pollableOut(ios *streams, logger *log.Logger) (out io.Writer, done func()) {
	f, ok := ios.Out.(*os.File)
	if !ok || ios.OutTTY {
		return ios.Out, func() {}
	}
	p, err := nbpipe.Pollable(f)
	if err != nil {
		logger.Debug("stdout stays in blocking mode", "err", err)
		return ios.Out, func() {}
	}
	return p, func() { p.Close() }
}

// pollableIn is the client's end of stdio to read requests from: stdin
// read in Go's poller (nbpipe.PolledReader) when it is not a terminal,
// else as it is. A pipe or socket as a client hands it over is in
// blocking mode and is put in non-blocking mode first; a descriptor
// already in the poller (os.Pipe's, in-process tests) is its holder's.
// done releases it once serving ends.
func pollableIn(ios *streams, logger *log.Logger) (in io.Reader, done func()) {
	f, ok := ios.In.(*os.File)
	if !ok || ios.InTTY {
		return ios.In, func() {}
	}
	if f.SetReadDeadline(time.Time{}) == nil {
		return nbpipe.NewPolledReader(f), func() {}
	}
	p, err := nbpipe.Pollable(f)
	if err != nil {
		logger.Debug("stdin stays in blocking mode", "err", err)
		return ios.In, func() {}
	}
	return nbpipe.NewPolledReader(p), func() { p.Close() }
}

// httpToken reads the bearer token from --token-file, else MCPX_HTTP_TOKEN;
// "" means neither is set (http.token may still be).
func httpToken(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", fmt.Errorf("--token-file %s is empty", file)
		}
		return t, nil
	}
	return strings.TrimSpace(os.Getenv("MCPX_HTTP_TOKEN")), nil
}

// setOAuth puts http.oauth's resource server in force, keeping the one in
// force, and the issuer's keys it holds, when the section is unchanged.
func (s *session) setOAuth(c *config.OAuth) {
	if c == nil {
		s.oauth.Store(nil)
		return
	}
	if cur := s.oauth.Load(); cur != nil && reflect.DeepEqual(cur.Config(), *c) {
		return
	}
	s.oauth.Store(accesstoken.New(*c, nil))
}
