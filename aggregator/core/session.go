package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/callopt"
	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/internal/waitfor"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/telemetry"
)

// output is where a legacy session's messages go: its transport, told
// what each one is (an answer to an id, progress, anything else), so that
// it never reads the session's output back. stdio writes them all to one
// stream (outbox); HTTP routes each to a stream of its session
// (routedOut).
type output interface {
	callopt.Flusher
	// result answers id, waiting for room while the client reads slowly.
	result(id, result json.RawMessage)
	// hold answers id from an upstream's reader: it never waits, and
	// may keep the answer until Flush.
	hold(id, result json.RawMessage)
	// error answers id with an error; it never waits.
	error(id json.RawMessage, code int, message string, data json.RawMessage)
	// raw sends a message that must not be lost (a request to the
	// client, a list change), waiting for room.
	raw(msg []byte)
	// notify sends a notification without ever waiting: it is dropped
	// when the client has fallen a whole queue behind.
	notify(msg []byte)
	// unanswered says that request id, which the client cancelled, gets
	// no answer; it never waits.
	unanswered(id json.RawMessage)
	// progress is notify for an upstream's progress on the request
	// whose id is of.
	progress(of json.RawMessage, msg []byte)
	// run writes until close; a failed write ends the session by cancel.
	run(cancel context.CancelCauseFunc)
	// close writes what is queued within the time given and stops.
	close(within time.Duration) bool
}

// ServeLegacy serves one legacy client, whose connection is conn, on cat
// until the client's input ends (Read's io.EOF), a write fails, or ctx is
// done; conn is closed then.
//
// mcpx answers every method itself rather than through mcp-go's
// MCPServer: the catalog methods (lists, tools/call, resources/read,
// prompts/get) from raw JSON, because mcp-go's typed structs drop fields
// an upstream sent, and the few of the session (initialize, ping) by hand,
// because MCPServer decoded each message again, lost digits of large ids,
// and its package pulls a JSON-schema library whose initialisation alone
// cost 23 ms of every start. Each message is read in one scan (see
// ParseMessage); one writer keeps every message whole and in order; there
// is no cap on concurrent calls, and the session is not a package global.
func ServeLegacy(ctx context.Context, cat Legacy, conn Conn, opts SessionOptions) error {
	o := opts
	if conn == nil {
		return errors.New("legacy session: no connection")
	}
	defer conn.Close()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	s := &Session{cat: cat, o: o, log: o.Logger, tel: o.Telemetry, ctx: ctx, hs: &handshake{id: o.ID},
		inflight: map[string]*running{}, calls: map[string]chan Message{}, inputEnded: make(chan struct{})}
	if sc, ok := conn.(*streamConn); ok {
		sc.limit(o.MaxMessageBytes)
		s.out = newOutbox(ctx, sc.out, o.Logger, o.MaxMessageBytes)
	} else {
		s.out = newRoutedOut(ctx, func(m Routed) {
			if err := conn.Write(m); err != nil {
				cancel(fmt.Errorf("write to the client: %w", err))
			}
		}, o.Logger, o.MaxMessageBytes)
	}
	s.client = &Client{s: s}
	s.send = callopt.Options{Progress: s.progressOf, Batch: &s.batch, Flusher: s.out}
	leave, err := cat.Join(s.client)
	if err != nil {
		return err
	}
	defer leave() // last: once it is no longer the catalog's client

	go s.out.run(cancel)

	// A read from a pipe cannot be interrupted, so the reading runs on
	// its own and a signal (ctx) does not wait for the client's next line.
	readErr := make(chan error, 1)
	s.rctx = ctx
	s.done, s.sendCtx = ctx.Done(), context.WithoutCancel(s.rctx)
	go func() { readErr <- s.read(conn) }()
	select {
	case err = <-readErr:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	// The end takes at most two steps of Drain (and the Linger of an
	// input that ended), as shutdownTimeout counts them.
	end := time.Now().Add(2 * o.Drain)
	close(s.inputEnded)
	if errors.Is(err, io.EOF) {
		// The client sent all it had: a pipe closed after its last
		// request (printf ... | mcpx serve --stdio) still expects the
		// answers, as from any MCP server. Those that come within a
		// step and the Linger are written.
		end = end.Add(o.Linger)
		s.awaitAnswers(ctx, o.Drain+o.Linger)
		// Answers an upstream's reader holds for its next Flush
		// (fastcall.go) go out with the rest.
		s.out.Flush()
	}
	// The client is gone or we are shutting down: stop what is in flight
	// and let the writer flush what is already queued, within what is
	// left of the two steps: a call stuck on an upstream is released when
	// the upstream is closed, and a client that stopped reading never
	// will.
	cancel(err)
	s.mu.Lock()
	s.closing = true
	stop := make([]*running, 0, len(s.inflight))
	for _, r := range s.inflight {
		stop = append(stop, r)
	}
	s.mu.Unlock()
	for _, r := range stop { // those answered from an upstream's reader watch no context
		r.cancel()
	}
	if !waitfor.Group(&s.wg, time.Until(end)/2) {
		s.log.Warn("calls still running after the client left; leaving them to the shutdown")
	}
	s.out.close(time.Until(end))
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// awaitAnswers waits for the requests read from the client to be
// answered, for at most d or until ctx is done. The transport has
// stopped handing messages over: no request starts any more.
func (s *Session) awaitAnswers(ctx context.Context, d time.Duration) {
	answered := make(chan struct{})
	go func() {
		s.answering.Wait()
		close(answered)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-answered:
	case <-t.C:
		s.log.Warn("the client closed its input: requests still running are cancelled unanswered", "after", d)
	case <-ctx.Done():
	}
}

// Session is one legacy (initialize) session, whatever its transport:
// it handles one decoded message at a time, as its Conn reads them, and hands what it
// sends to its output. Its state: the client's initialize, the requests
// in flight, our requests to the client, the lists the client fetched.
type Session struct {
	cat    Legacy
	o      SessionOptions
	log    *slog.Logger
	tel    *telemetry.Telemetry // nil: no spans
	hs     *handshake
	client *Client // the client, as the catalog sees it
	out    output
	// ctx is the session's: it ends with it.
	ctx context.Context
	// rctx is what the session's requests run under.
	rctx context.Context
	// batch gathers the requests the read loop sends (fastcall.go)
	// until no message is waiting (read); only that loop uses it.
	batch callopt.Batch
	// send is what the calls the read loop sends carry (Client.Options).
	send callopt.Options
	wg   sync.WaitGroup // requests and spawned tasks running
	// answering counts the requests read and not yet answered; only
	// Handle adds to it.
	answering sync.WaitGroup
	// sendCtx is what Handle sends calls under: the session's
	// values, but no end (see running); done is the session's end.
	sendCtx context.Context
	done    <-chan struct{}

	// inputEnded is closed when the client's input has ended or the
	// session ends: the client can no longer answer a request of ours.
	inputEnded chan struct{}

	mu       sync.Mutex
	inflight map[string]*running // by raw request id
	// tokens are the requests in flight that asked for progress: the
	// request's id by its progressToken as raw JSON.
	tokens   map[string]json.RawMessage
	closing  bool                    // no new requests start
	initSeen atomic.Bool             // an initialize request was read
	calls    map[string]chan Message // our requests to the client, by id
	callSeq  int
	listed   [numLists]bool // lists fetched since the last list_changed
}

// Message is a client's JSON-RPC message as a session handles it: the
// envelope, decoded once (ParseMessage), and the era it was found to
// belong to.
type Message struct {
	jsonrpc.Message
	// Invalid says why the bytes read are not a message (ParseMessage's
	// error, or a *frame.TooLongError); the session answers them with an
	// error.
	Invalid error
	// modern marks a request of revision 2026-07-28 (its _meta names
	// the protocol version), which the session core answers.
	modern bool
}

// read handles the client's messages in order until conn's input ends
// or the session does. Requests gathered for upstreams while messages
// were waiting go out once none is, one write per upstream, before the
// next Read may wait.
func (s *Session) read(conn Conn) error {
	ctx := s.rctx
	buffered, _ := conn.(Buffered)
	for {
		m, err := conn.Read()
		if err != nil {
			s.batch.Flush()
			return err
		}
		// A Conn sets Invalid itself (Conn.Read), so a type assertion,
		// which does not allocate as errors.As does here, finds it.
		if tl, ok := m.Invalid.(*frame.TooLongError); ok {
			s.tooLong(tl)
		} else {
			s.dispatch(ctx, m, m.Invalid)
		}
		if buffered == nil || !buffered.Buffered() {
			s.batch.Flush()
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
	}
}

func (s *Session) dispatch(ctx context.Context, m Message, err error) {
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			s.out.error(json.RawMessage("null"), CodeParseError, "parse error: "+err.Error(), nil)
		} else {
			s.out.error(json.RawMessage("null"), CodeInvalidRequest, "invalid request: a message must be a JSON object", nil)
		}
		return
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	if hasID && !validID(m.ID) {
		// The id cannot be echoed: JSON-RPC allows only a string or a
		// number (or null), so the answer carries null.
		s.out.error(json.RawMessage("null"), CodeInvalidRequest, "invalid request: id must be a string or a number", nil)
		return
	}
	if m.Method != "" && (len(m.Result) > 0 || len(m.Error) > 0) {
		id := m.ID
		if !hasID {
			id = json.RawMessage("null")
		}
		s.out.error(id, CodeInvalidRequest, "invalid request: a message has a method or a result/error, not both", nil)
		return
	}
	if hasID && m.Method != "" && !s.initSeen.Load() && HasModernMeta(m.Params) {
		// A client that began with initialize speaks the legacy era
		// throughout: only one that did not is looked at for modern
		// _meta, which keeps the legacy hot path free of the scan.
		m.modern = true
	}
	switch {
	case m.modern:
		s.startRequest(ctx, m)
	case m.Method == "initialize" && hasID:
		s.initSeen.Store(true)
		s.startRequest(ctx, m)
	case m.Method != "" && hasID && m.Method != "ping" && !s.initSeen.Load():
		// Read in order, so a client that pipelines initialize and its
		// first requests is served; one that skips it is not.
		s.out.error(m.ID, CodeInvalidRequest, "invalid request: "+m.Method+" before initialize: the session must begin with initialize", nil)
	case m.Method != "" && hasID:
		s.startRequest(ctx, m)
	case m.Method != "":
		s.notification(ctx, m)
	case len(m.Result) > 0 || len(m.Error) > 0:
		s.clientResponse(m)
	case hasID:
		s.out.error(m.ID, CodeInvalidRequest, "invalid request: no method", nil)
	default:
		s.out.error(json.RawMessage("null"), CodeInvalidRequest, "invalid request: no method and no id", nil)
	}
}

// validID reports whether a request id is a JSON string or number.
func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

func (s *Session) notification(ctx context.Context, m Message) {
	switch m.Method {
	case string(mcp.MethodNotificationCancelled):
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			r := s.inflight[string(p.RequestID)]
			s.mu.Unlock()
			if r != nil {
				r.cancel()
				s.out.unanswered(p.RequestID)
			}
		}
	case string(mcp.MethodNotificationInitialized):
		s.hs.ready.Store(true)
		// Servers already waiting for a login can now ask this client.
		s.cat.Initialized(s.client)
		if s.hs.clientCaps().Roots != nil {
			// Upstreams started before this client came, and any roots
			// they asked for were refused: have them ask again.
			s.cat.RootsChanged()
		}
	case string(mcp.MethodNotificationRootsListChanged):
		s.cat.RootsChanged()
	}
}
