package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/waitfor"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/nbpipe"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream/remote"
	"github.com/mcpx/mcpx/upstream/stdio"
)

// protocolVersion is the version mcpx asks for at initialize.
const protocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION

// transport carries one connection's messages: a child's pipes
// (package stdio) or HTTP (package remote).
type transport interface {
	Start(ctx context.Context) error
	SendRequest(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error)
	SendNotification(ctx context.Context, n jsonrpc.Message) error
	SetNotificationHandler(f func(jsonrpc.Message))
	SetRequestHandler(f jsonrpc.RequestHandler)
	Close() error
}

// resyncDelay gathers a burst of list_changed notifications (servers often
// send several at start) into one resync.
const resyncDelay = 50 * time.Millisecond

// RPCError is a JSON-RPC error returned by an upstream server, kept whole
// so it can be passed on unchanged.
type RPCError = jsonrpc.Error

// serverError is the error member a server answered with. An error that
// is not a JSON object (some servers send a bare string) is an internal
// error, as mcp-go's client has it. Its data is put on one line: it may
// be passed on to a client that reads a message a line.
func serverError(raw json.RawMessage) *RPCError {
	e := jsonrpc.DecodeError(raw)
	if len(raw) == 0 || raw[0] != '{' || !rawjson.Valid(raw) {
		e.Code = jsonrpc.CodeInternalError
	}
	e.Data = jsonrpc.OneLine(e.Data)
	return e
}

// conn is one live connection to a server: created by connect, ended by
// close or by the server going away.
type conn struct {
	c      *Client
	tr     transport
	proc   *process // nil for remote servers
	stdout *lineWatch
	cancel context.CancelFunc

	serverInfo mcp.Implementation
	protocol   string
	caps       mcp.ServerCapabilities
	catalog    Catalog // as of connect; later syncs go to the Client
	// instructions is what the server said about how to use it, as
	// cleanInstructions keeps it; "" when it said nothing.
	instructions string
	// meta is what goes first in every request's _meta when the server is
	// modern (see metaFields), replaced when the log level changes; nil for
	// a legacy server.
	meta atomic.Pointer[[]byte]
	// paramHeaders holds, by tool name, the arguments a modern tools/call
	// over HTTP also sends as headers (see checkTools).
	paramHeaders atomic.Pointer[map[string][]remote.ParamHeader]
	// listen keeps the subscriptions/listen stream of a modern
	// connection open (see listen.go); it runs only once the connection
	// is found modern.
	listen *listener

	ids atomic.Int64

	progressMu sync.Mutex
	progress   map[string]progressRoute // by the request's own id, its token

	lost     chan struct{}
	lostOnce sync.Once
	lostMu   sync.Mutex
	lostWhy  error

	syncMu  sync.Mutex // serializes resyncs
	dirtyMu sync.Mutex
	dirty   map[string]bool
	timer   *time.Timer
	closed  bool
}

// connect makes one attempt: start the transport, make the handshake
// and list the catalog, all within the server's timeout. A child found
// to speak both eras is started again to be initialized (see
// connectOnce).
func (c *Client) connect(ctx context.Context) (*conn, error) {
	cn, err := c.connectOnce(ctx)
	if errors.Is(err, errBothEras) {
		c.mu.Lock()
		c.era = EraLegacy
		c.mu.Unlock()
		cn, err = c.connectOnce(ctx)
	}
	return cn, err
}

// connectOnce starts the transport, makes the handshake and lists the
// catalog. A child that answered server/discover listing a legacy
// version too, and then refused initialize on the same session (as the
// Go SDK does), fails with errBothEras, so the child is started again.
func (c *Client) connectOnce(ctx context.Context) (*conn, error) {
	life, cancel := context.WithCancel(ctx)
	cn := &conn{c: c, cancel: cancel, lost: make(chan struct{}), dirty: map[string]bool{}}
	cn.listen = newListener(cn)
	ok := false
	defer func() {
		if !ok {
			cn.close()
		}
	}()

	if c.cfg.Transport == config.TransportStdio {
		c.step(StepSpawn)
	} else {
		c.step(StepConnect)
	}
	tr, err := cn.dial()
	if err != nil {
		return nil, err
	}
	cn.tr = tr
	tr.SetNotificationHandler(cn.onNotification)
	tr.SetRequestHandler(cn.onServerRequest)
	// The transport lives as long as the connection: SSE ties its stream
	// to this context, so it must not be the timeout context below.
	if err := tr.Start(life); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}

	timeout := c.timeout()
	tctx, tcancel := context.WithTimeout(life, timeout)
	defer tcancel()

	c.step(StepInitialize)
	c.mu.Lock()
	known := c.era
	c.mu.Unlock()
	if err := cn.handshake(tctx, known); err != nil {
		if errors.Is(err, errBothEras) {
			return nil, err
		}
		return nil, cn.explain("initialize", timeout, tctx, err)
	}
	c.mu.Lock()
	level := c.logLevel
	c.mu.Unlock()
	// A modern server has no logging/setLevel: the level is per request.
	if level != "" && cn.caps.Logging != nil && !cn.modern() {
		if err := cn.setLogLevel(tctx, level); err != nil {
			c.log.Warn("could not set the log level", "err", c.opts.Redact(err.Error()))
		}
	}
	c.step(StepList)
	cat, err := cn.listCatalog(tctx)
	if err != nil {
		return nil, cn.explain("list", timeout, tctx, err)
	}
	cat.Tools = cn.checkTools(cat.Tools)
	cn.catalog = cat
	if cn.proc != nil {
		proc := cn.proc
		proc.whenExited(func() { cn.markLost(proc.exitError()) })
	} else if every := c.opts.Heartbeat; every > 0 {
		go cn.heartbeat(life, every)
	}
	if cn.modern() {
		go cn.listen.run(life)
	}
	ok = true
	return cn, nil
}

func (cn *conn) dial() (transport, error) {
	cfg := cn.c.cfg
	switch cfg.Transport {
	case config.TransportStdio:
		if cn.c.opts.Supervisor == "" {
			return nil, errors.New("cannot find the mcpx executable to supervise the child")
		}
		p, err := startProcess(cfg, cn.c.opts.Supervisor, cn.c.logStderr)
		if err != nil {
			return nil, err
		}
		cn.proc = p
		cn.c.mu.Lock()
		cn.c.proc = p
		cn.c.mu.Unlock()
		cn.stdout = newLineWatch(nbpipe.NewPolledReader(p.stdout))
		cn.c.mu.Lock()
		cn.c.watch = cn.stdout
		cn.c.mu.Unlock()
		return stdio.New(p.stdin, cn.stdout, stdio.Options{Max: cn.c.opts.MaxMessageBytes, TooLong: cn.tooLong,
			Dropped: func(why string, line []byte) {
				cn.c.log.Debug("ignored a line on stdout: "+why, "bytes", len(line))
			},
			Broken: cn.markLost}), nil
	case config.TransportHTTP:
		// The GET stream carries list_changed and other notifications
		// nobody asked for. getStream backs it off when it fails (see
		// there); under it, every body is held to maxMessageBytes.
		hc := cn.httpClient()
		stream := newGETStream(hc.Transport, cn.c.log, cn.c.opts.MinBackoff, cn.c.opts.MaxBackoff)
		t := remote.NewStreamable(cfg.URL, remote.Options{
			Client: hc, StreamClient: &http.Client{Transport: stream}, Header: cfg.Headers,
			Listen: true, OnLost: cn.lostRemote, Logger: cn.c.transportLogger(),
		})
		t.SetToolHeaders(cn.toolParamHeaders)
		return t, nil
	case config.TransportSSE:
		return remote.NewSSE(cfg.URL, remote.Options{
			Client: cn.httpClient(), Header: cfg.Headers, OnLost: cn.lostRemote, Logger: cn.c.transportLogger(),
		}), nil
	default:
		return nil, fmt.Errorf("unknown transport %q", cfg.Transport)
	}
}

// initialize is the handshake: initialize, then notifications/initialized.
// mcpx declares the client capabilities it can relay (see
// clientCapabilities) and refuses a protocol version it does not know, as
// the spec asks.
func (cn *conn) initialize(ctx context.Context) error {
	params, err := json.Marshal(mcp.InitializeParams{
		ProtocolVersion: protocolVersion,
		ClientInfo:      mcp.Implementation{Name: "mcpx", Version: cn.c.opts.Version},
		Capabilities:    clientCapabilities(cn.c.opts.OnServerRequest != nil),
	})
	if err != nil {
		return err
	}
	raw, err := cn.request(ctx, string(mcp.MethodInitialize), params)
	if err != nil {
		return err
	}
	var res initializeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("unreadable initialize result: %w", err)
	}
	if !mcp.IsValidProtocolVersion(res.ProtocolVersion) {
		return fmt.Errorf("the server speaks protocol version %q, which mcpx does not know", res.ProtocolVersion)
	}
	cn.serverInfo = res.ServerInfo
	cn.protocol = res.ProtocolVersion
	cn.caps = res.Capabilities
	cn.setInstructions(res.Instructions)
	if v, ok := cn.tr.(interface{ SetProtocolVersion(string) }); ok {
		v.SetProtocolVersion(res.ProtocolVersion)
	}
	n := jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: string(mcp.MethodNotificationInitialized)}
	if err := cn.tr.SendNotification(ctx, n); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	return nil
}

// initializeResult is initialize's result as mcpx reads it.
type initializeResult struct {
	mcp.InitializeResult
	// Instructions hides the embedded string field, so that an
	// instructions member that is not a string does not fail the
	// handshake (see instructionsOf).
	Instructions json.RawMessage `json:"instructions"`
}

// lostRemote ends the connection when its HTTP transport says the server
// is gone (the SSE stream ended, the session expired).
func (cn *conn) lostRemote(err error) { cn.markLost(fmt.Errorf("connection lost: %w", err)) }

// explain turns a failed step into an error a person can act on: the exit
// status and last stderr of a child that died, or what it wrote on stdout
// instead of JSON-RPC.
func (cn *conn) explain(step string, timeout time.Duration, ctx context.Context, err error) error {
	if cn.proc != nil && childGone(err) {
		// A dead child shows up as a closed transport or a broken pipe;
		// give the reaper a moment to report how it ended.
		waitfor.Closed(cn.proc.exited, 500*time.Millisecond)
	}
	if cn.proc != nil {
		if perr := cn.proc.exitError(); perr != nil {
			waitfor.Closed(cn.proc.stderrDone, 200*time.Millisecond)
			return fmt.Errorf("%s: %w%s", step, perr, cn.c.stderrTail())
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", timeout)
		if cn.stdout != nil {
			if junk := cn.stdout.lastJunk(); junk != "" {
				err = fmt.Errorf("%w; it wrote non-JSON-RPC on stdout: %q", err, junk)
			}
		}
		if cn.proc != nil {
			// What a hung child last said is most often why it hangs.
			err = fmt.Errorf("%w%s", err, cn.c.stderrTail())
		}
	}
	return fmt.Errorf("%s: %w", step, err)
}

// request sends a raw request with a string id ("mcpx-N"), which mcp-go's
// own integer ids can never collide with. A cancelled ctx sends
// notifications/cancelled for that id, in the background.
func (cn *conn) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return cn.call(ctx, nil, nil, method, params)
}

// call is request for a client's call: touch is the call's limits, which
// progress for it keeps alive (nil: none), and progress is where the
// server's progress for it goes (CallOptions.Progress; nil: dropped).
func (cn *conn) call(ctx context.Context, touch *limitedCall, progress func(json.RawMessage), method string, params json.RawMessage) (json.RawMessage, error) {
	if pipe, ok := cn.tr.(*stdio.Transport); ok {
		type reply struct {
			res json.RawMessage
			err error
		}
		ch := make(chan reply, 1)
		cn.start(ctx, pipe, touch, CallOptions{Progress: progress}, method, params, func(res json.RawMessage, err error) { ch <- reply{res, err} })
		r := <-ch
		return r.res, r.err
	}
	id := cn.nextID()
	params, routed := cn.routeProgress(id, touch, progress, params)
	defer cn.unroute(id, routed)
	if m := cn.meta.Load(); m != nil {
		params = spliceMeta(params, *m)
	} else if cn.protocol != "" {
		params = withoutHopMeta(params) // a legacy server's: hopmeta.go
	}
	req := jsonrpc.Message{JSONRPC: jsonrpc.Version, ID: json.RawMessage(`"` + id + `"`), Method: method}
	if len(params) > 0 {
		req.Params = params
	}
	resp, err := cn.send(ctx, req)
	return cn.outcome(ctx, id, method, resp, err)
}

// nextID is a request id of mcpx's own.
func (cn *conn) nextID() string { return cn.ownID("mcpx-", "") }

// ownID is a number unique on the connection between prefix and suffix,
// built in one allocation: it is made on every call.
func (cn *conn) ownID(prefix, suffix string) string {
	var buf [48]byte
	b := strconv.AppendInt(append(buf[:0], prefix...), cn.ids.Add(1), 10)
	return string(append(b, suffix...))
}

// outcome is what a request returns given the transport's answer: the
// result, the server's error as an *RPCError, or what went wrong on the
// way, with notifications/cancelled sent when ctx ended it or mcpx
// aborted it (a limit, or the caller's cancel).
func (cn *conn) outcome(ctx context.Context, id, method string, resp *jsonrpc.Message, err error) (json.RawMessage, error) {
	if err != nil {
		if a, ok := err.(aborted); ok {
			go cn.cancelRequest(id, a.cause)
			return nil, a.cause
		}
		if ctx.Err() != nil {
			go cn.cancelRequest(id, context.Cause(ctx))
			return nil, ctx.Err()
		}
		if childGone(err) && cn.proc != nil {
			waitfor.Closed(cn.proc.exited, 200*time.Millisecond)
			if perr := cn.proc.exitError(); perr != nil {
				return nil, fmt.Errorf("%s: server %s", method, perr)
			}
		}
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if resp.HasError() {
		return nil, serverError(resp.Error)
	}
	if len(resp.Result) == 0 {
		return json.RawMessage(`{}`), nil
	}
	return resp.Result, nil
}

// send is the transport's SendRequest, except that it returns as soon as
// ctx ends whatever the layers below are doing: the HTTP transports
// watch ctx, but the OAuth token read under them may wait on the OS
// keychain, which does not. What is left ends with the connection.
func (cn *conn) send(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
	type reply struct {
		resp *jsonrpc.Message
		err  error
	}
	ch := make(chan reply, 1)
	go func() {
		resp, err := cn.tr.SendRequest(ctx, req)
		ch <- reply{resp, err}
	}()
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (cn *conn) cancelRequest(id string, why error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	reason := "cancelled by the client"
	var te *TimeoutError
	switch {
	case errors.As(why, &te):
		reason = fmt.Sprintf("timed out (%s %s)", te.Limit, te.After)
	case errors.Is(why, context.DeadlineExceeded):
		reason = "timed out"
	}
	params, _ := json.Marshal(map[string]string{"requestId": id, "reason": reason})
	n := jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: string(mcp.MethodNotificationCancelled), Params: params}
	if err := cn.tr.SendNotification(ctx, n); err != nil {
		cn.c.log.Debug("could not cancel upstream request", "id", id, "err", err)
		return
	}
	cn.c.log.Debug("cancelled upstream request", "id", id, "reason", reason)
}

// checkAlive pings a remote server after a transport error; a failed ping
// ends the connection so that it is started again. Children are watched by
// their exit instead.
func (cn *conn) checkAlive() {
	if cn.proc != nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := cn.ping(ctx); err != nil {
			var rpc *RPCError
			if !errors.As(err, &rpc) {
				cn.markLost(fmt.Errorf("server stopped answering: %w", err))
			}
		}
	}()
}

// ping asks the server whether it is there: ping, or, in the modern era,
// which has no ping (a modern server answers it method not found, over
// HTTP with a 404), server/discover.
func (cn *conn) ping(ctx context.Context) error {
	if cn.modern() {
		_, err := cn.request(ctx, "server/discover", json.RawMessage(`{}`))
		return err
	}
	_, err := cn.request(ctx, "ping", nil)
	return err
}

// heartbeat pings a remote server while the connection lives: nothing
// else would notice that an idle server went away.
func (cn *conn) heartbeat(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-cn.lost:
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, min(every, 10*time.Second))
			err := cn.ping(pctx)
			cancel()
			var rpc *RPCError
			if err != nil && ctx.Err() == nil && !errors.As(err, &rpc) {
				cn.markLost(fmt.Errorf("server stopped answering: %w", err))
				return
			}
		}
	}
}

func (cn *conn) markLost(err error) {
	cn.lostOnce.Do(func() {
		cn.lostMu.Lock()
		cn.lostWhy = err
		cn.lostMu.Unlock()
		close(cn.lost)
	})
}

func (cn *conn) lostErr() error {
	cn.lostMu.Lock()
	defer cn.lostMu.Unlock()
	if cn.lostWhy == nil {
		return errors.New("connection lost")
	}
	if cn.proc != nil {
		waitfor.Closed(cn.proc.stderrDone, 200*time.Millisecond)
		return fmt.Errorf("%w%s", cn.lostWhy, cn.c.stderrTail())
	}
	return cn.lostWhy
}

// errClosed ends a connection that mcpx closed itself.
var errClosed = errors.New("connection closed")

// close ends the connection and, for a child, stops the process. A resync
// in progress is cancelled and waited for, so nothing of this connection
// runs after close returns.
func (cn *conn) close() {
	cn.dirtyMu.Lock()
	cn.closed = true
	if cn.timer != nil {
		cn.timer.Stop()
	}
	cn.dirtyMu.Unlock()
	cn.markLost(errClosed)
	// Taking the lock waits out a resync that is running now.
	cn.syncMu.Lock()
	cn.syncMu.Unlock()
	if cn.cancel != nil {
		cn.cancel()
	}
	if cn.tr != nil {
		done := make(chan struct{})
		go func() { cn.tr.Close(); close(done) }()
		if cn.proc == nil {
			waitfor.Closed(done, 5*time.Second)
		}
	} else if cn.proc != nil {
		cn.proc.stdin.Close()
	}
	if cn.proc != nil {
		cn.proc.stop(cn.c.opts.StopGrace, cn.c.opts.TermGrace)
		cn.proc.stdout.Close()
		cn.c.mu.Lock()
		if cn.c.proc == cn.proc {
			cn.c.proc = nil
		}
		cn.c.mu.Unlock()
	}
}

var _ io.Reader = (*lineWatch)(nil)

// childGone reports whether err is how a child's end shows on its pipes:
// the transport closed when stdout ended, or a write to a stdin that no
// process reads any more (EPIPE), whichever the exit raced to first.
func childGone(err error) bool {
	return errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, syscall.EPIPE)
}
