package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/mcpx/mcpx/callopt"
	"github.com/mcpx/mcpx/telemetry"
)

// Legacy is the catalog as a legacy session (one that began with
// initialize) uses it: the [Catalog] and [Sender] a modern client's
// requests reach, with the session's client ([Client]) as the Caller of
// each, and the life of a session around them. Its methods are called
// concurrently.
type Legacy interface {
	Catalog
	Sender
	// Join makes c a client of the catalog until leave is called: what
	// the catalog's sources ask of a client, their notifications and
	// their list changes may reach c meanwhile.
	Join(c *Client) (leave func(), err error)
	// Ready returns once the catalog can answer the list method in
	// full, or ctx is done.
	Ready(ctx context.Context, method string)
	// Initialized tells the catalog that c completed the handshake
	// (notifications/initialized): it can be asked things now.
	Initialized(c *Client)
	// RootsChanged tells the catalog that a client's roots changed, or
	// that a client that has roots came.
	RootsChanged()
	// Modern returns the server of the catalog's modern requests, for
	// one a legacy transport reads before any initialize.
	Modern() (*Server, error)
}

// List names a list a client fetches and is told of a change to.
type List uint8

// The lists a legacy client is told have changed.
const (
	ListTools List = iota
	ListResources
	ListPrompts
	numLists
)

// SessionOptions configure one legacy session ([ServeLegacy]).
type SessionOptions struct {
	// ID names the session in the audit trail and in spans ("stdio", or
	// an HTTP session's Mcp-Session-Id).
	ID string
	// Version is mcpx's, in initialize's serverInfo.
	Version string
	// MaxMessageBytes bounds a message either way; 0 means no limit.
	MaxMessageBytes int64
	// Drain is how long each of the two steps of the end may take, and
	// Linger how long answers are awaited after the client's input ended.
	Drain, Linger time.Duration
	// Logger receives the session's diagnostics; nil discards them.
	Logger *slog.Logger
	// Telemetry records each request's span; nil records nothing.
	Telemetry *telemetry.Telemetry
}

// Client is one legacy client as the catalog sees it, from Join to the
// end of its session: what the catalog may ask of it and tell it. Its
// methods are safe for concurrent use.
type Client struct {
	s *Session
}

// ID names the client's session ("stdio", or its Mcp-Session-Id).
func (c *Client) ID() string { return c.s.hs.id }

// Name is the client's name from initialize; "" before it.
func (c *Client) Name() string { return c.s.hs.clientInfo().Name }

// Request sends a request to the client (on behalf of a source) and
// waits for its answer; see clientRequest.
func (c *Client) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.s.clientRequest(ctx, method, params)
}

// Notify relays a notification to the client once it is ready for them;
// it never waits.
func (c *Client) Notify(method string, params json.RawMessage) { c.s.notify(method, params) }

// ListChanged tells the client that lists changed, each only when the
// client fetched it since it was last told.
func (c *Client) ListChanged(lists ...List) { c.s.listChanged(lists) }

// ElicitURL reports whether the client declared URL-mode elicitation.
func (c *Client) ElicitURL() bool { return c.s.elicitURL() }

// Can reports whether the client declared in initialize the capability a
// request to it needs (Request refuses one it did not).
func (c *Client) Can(method string, params json.RawMessage) bool {
	return c.s.clientSupports(method, params) == nil
}

// Progress relays a source's notifications/progress to the client, on
// the stream of the request whose progressToken it names (the session
// knows each request's token from the request itself); progress for a
// token no request in flight declared is dropped, as the protocol says.
func (c *Client) Progress(params json.RawMessage) { c.s.progressOf(params) }

// Options are what a call the session sends without waiting (Sender.Send,
// from its read loop only) carries to an upstream: its progress
// (Progress), the read loop's batch, which the loop flushes before it
// waits to read, and the session's output as the flusher of answers held
// on an upstream's reader. The catalog must not change them.
func (c *Client) Options() *callopt.Options { return &c.s.send }

// Spawn runs f on its own goroutine until the client is gone; the
// session waits for it before it ends.
func (c *Client) Spawn(f func(context.Context)) { c.s.spawn(c.s.ctx, f) }
