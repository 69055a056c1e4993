package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"log/slog"

	"github.com/coder/websocket"
)

// Options configure a Client. Zero values mean the defaults given.
type Options struct {
	// URL is the relay's MCP endpoint (ws:// or wss://); empty means the
	// token's connection_url claim.
	URL string
	// Token is the relay access token (a JWT). It is sent in the
	// handshake and never logged. A relay of one's own (local mode)
	// needs none: then URL is required.
	Token string
	// Prepare, when set, runs before each dial and returns headers for
	// the WebSocket upgrade. Local mode uses it to host the relay when
	// no one does and to present the relay's secret.
	Prepare func(ctx context.Context) (http.Header, error)
	// ClientID names this client to the relay (default "mcpx").
	ClientID string
	// Extension picks the browser by extension id or name; empty means
	// the only one connected.
	Extension string
	// Logger receives connection events. Nil discards.
	Logger *slog.Logger
	// CallTimeout bounds one forwarded call (default 60s); ControlTimeout
	// the relay's own methods (default 15s); ReadyTimeout how long a call
	// waits for the relay to be reachable (default 5s).
	CallTimeout, ControlTimeout, ReadyTimeout time.Duration
	// ExtensionWait is how long after the relay connection comes up a
	// call that finds no browser connected to the relay waits for one
	// (default 5s). Right after mcpx starts, or hosts a relay anew, the
	// extension has not found the relay yet: it tries every second. Later
	// calls wait only briefly for a browser that is starting.
	ExtensionWait time.Duration
	// MinBackoff and MaxBackoff bound the redial delay (250ms, 15s).
	MinBackoff, MaxBackoff time.Duration
	// ReadLimit is the largest frame accepted (default 64 MiB: screenshots
	// are megabytes).
	ReadLimit int64
	// Now is the clock for token expiry; nil means time.Now.
	Now func() time.Time
}

// DefaultExtensionWait is the default of [Options].ExtensionWait.
const DefaultExtensionWait = 5 * time.Second

func (o *Options) defaults() {
	if o.ClientID == "" {
		o.ClientID = "mcpx"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.CallTimeout, 60*time.Second)
	def(&o.ControlTimeout, 15*time.Second)
	def(&o.ReadyTimeout, 5*time.Second)
	def(&o.ExtensionWait, DefaultExtensionWait)
	def(&o.MinBackoff, 250*time.Millisecond)
	def(&o.MaxBackoff, 15*time.Second)
	if o.ReadLimit <= 0 {
		o.ReadLimit = 64 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Client is mcpx's connection to the browser relay, as an MCP client of
// the MCP Proxy Protocol. Its methods are safe for concurrent use.
type Client struct {
	opts   Options
	url    string
	claims Claims
	badCfg error // a token or URL problem: no dial is ever attempted

	mu       sync.Mutex
	sock     *socket
	sockWait chan struct{} // closed (and replaced) whenever sock is set
	userID   string
	ext      *extension // connected extension; nil when none
	lastErr  error
	status   relayStatus
	attempt  *connectAttempt // the extension connect under way; nil when none
	lastTab  string          // id of the tab this client works in, kept across connections
	worked   []string        // ids of the tabs this client has worked in, oldest first (bounded)
	moving   int             // calls under way that may attach another tab (see movesTab)
	moves    uint64          // such calls started, and attachment changes: see EvalTab
	life     context.Context // the client's life, for connect attempts

	started bool // guarded by mu
	cancel  context.CancelFunc
	done    chan struct{} // closed when the dial loop has ended
	once    sync.Once
}

// extension is the browser the client is connected to on one socket.
type extension struct {
	sock     *socket
	id, name string
	connID   string
	attached bool // a tab is attached for CDP commands
}

type relayStatus struct {
	peers   int
	clients int // MCP clients sharing the relay, when it says (mcpx's relay does)
	at      time.Time
}

// NewClient checks the options and returns a Client; nothing is dialed
// until Start. A malformed or expired token is not an error here: the
// Client reports it in Status and in every call, so mcpx starts anyway.
func NewClient(opts Options) *Client {
	opts.defaults()
	c := &Client{opts: opts, sockWait: make(chan struct{}), done: make(chan struct{}), life: context.Background()}
	claims, err := ParseToken(opts.Token)
	switch {
	case opts.Token == "" && opts.URL == "":
		c.badCfg = errors.New("no browser relay: set browser.token (and browser.url), or use \"browser\": {} to host one")
	case opts.Token == "":
	case err != nil:
		c.badCfg = err
	case claims.expired(opts.Now()):
		c.badCfg = fmt.Errorf("%w at %s: get a new token", ErrTokenExpired, claims.expiry())
	}
	c.claims = claims
	if c.badCfg == nil {
		c.url, c.badCfg = relayURL(opts.URL, claims, opts.Token != "")
	}
	return c
}

// Start dials the relay in the background and returns at once; it redials
// with backoff whenever the socket drops.
func (c *Client) Start(ctx context.Context) {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return
	}
	c.started = true
	ctx, c.cancel = context.WithCancel(ctx)
	c.life = ctx
	c.mu.Unlock()
	if c.badCfg != nil {
		c.opts.Logger.Error("browser disabled", "err", c.badCfg)
		close(c.done)
		return
	}
	go c.run(ctx)
}

// Close says goodbye to the relay and closes the socket. Idempotent.
func (c *Client) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		s := c.sock
		c.mu.Unlock()
		if s != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, _ = s.call(ctx, "disconnect", struct{}{}, false)
			cancel()
			s.conn.Close(websocket.StatusNormalClosure, "mcpx closing")
		}
		c.mu.Lock()
		started, cancel := c.started, c.cancel
		c.started = true // a Start after Close does nothing
		c.mu.Unlock()
		if !started {
			close(c.done)
		} else if cancel != nil {
			cancel()
		}
	})
	<-c.done
	return nil
}

func (c *Client) run(ctx context.Context) {
	defer close(c.done)
	backoff := c.opts.MinBackoff
	logged := "" // the last failure logged: one line per change, not per retry
	for {
		started := time.Now()
		s, err := c.dial(ctx)
		if err == nil {
			backoff, logged = c.opts.MinBackoff, ""
			<-s.done
			err = s.closedErr()
			c.setSocket(nil, err)
			if ctx.Err() != nil {
				return
			}
			c.opts.Logger.Warn("browser relay connection lost", "err", err)
		} else {
			if ctx.Err() != nil {
				return
			}
			c.setSocket(nil, err)
			refused := errors.Is(err, errRefused) || errors.Is(err, ErrTokenExpired)
			if refused && c.opts.Prepare == nil {
				// A refused token does not get better by retrying.
				c.opts.Logger.Error("browser relay refused this client; not retrying", "err", err)
				return
			}
			// A relay of one's own that refuses us is someone else's
			// program on the address: keep trying, in case it goes.
			if err.Error() != logged {
				logged = err.Error()
				c.opts.Logger.Warn("browser relay unreachable; retrying", "url", redactURL(c.url), "err", err)
			}
			if refused {
				backoff = c.opts.MaxBackoff
			}
		}
		if time.Since(started) > time.Minute {
			backoff = c.opts.MinBackoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, c.opts.MaxBackoff)
	}
}

// dial connects and performs mcp_handshake.
func (c *Client) dial(ctx context.Context) (*socket, error) {
	if c.claims.expired(c.opts.Now()) {
		return nil, fmt.Errorf("%w at %s: get a new token", ErrTokenExpired, c.claims.expiry())
	}
	dctx, cancel := context.WithTimeout(ctx, c.opts.ControlTimeout)
	defer cancel()
	var hdr http.Header
	if c.opts.Prepare != nil {
		var err error
		if hdr, err = c.opts.Prepare(dctx); err != nil {
			return nil, err
		}
	}
	conn, resp, err := websocket.Dial(dctx, c.url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return nil, fmt.Errorf("%w: %s answered %s", errRefused, redactURL(c.url), resp.Status)
		}
		return nil, fmt.Errorf("dial %s: %w", redactURL(c.url), scrub(err, c.opts.Token))
	}
	conn.SetReadLimit(c.opts.ReadLimit)
	s := newSocket(conn, nil)
	s.notify = func(f frame) { c.onNotification(s, f) }
	hs, err := c.handshake(dctx, s)
	if err != nil {
		s.close(err)
		return nil, scrub(err, c.opts.Token)
	}
	go s.readLoop(ctx)
	go c.keepAlive(ctx, s)
	if c.claims.UserID != "" && hs.UserID != "" && hs.UserID != c.claims.UserID {
		c.opts.Logger.Warn("browser relay authenticated a different user than the token names")
	}
	dialect := "1.0"
	if s.legacy {
		dialect = "legacy"
	}
	c.opts.Logger.Info("browser relay connected", "url", redactURL(c.url), "protocol", dialect)
	s.up = time.Now()
	c.setSocket(s, nil)
	c.mu.Lock()
	c.userID = hs.UserID
	c.mu.Unlock()
	return s, nil
}

// keepAlive pings the relay so that a half-open socket is noticed.
func (c *Client) keepAlive(ctx context.Context, s *socket) {
	t := time.NewTicker(25 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := s.conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				s.close(fmt.Errorf("%w: ping: %v", ErrRelayClosed, err))
				return
			}
		}
	}
}

func (c *Client) setSocket(s *socket, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sock != nil && c.sock != s && c.ext != nil && c.ext.sock == c.sock {
		c.ext = nil
	}
	c.sock = s
	c.lastErr = err
	close(c.sockWait)
	c.sockWait = make(chan struct{})
}

func (c *Client) onNotification(s *socket, f frame) {
	switch f.Method {
	case "disconnected":
		var p struct {
			ConnectionID string `json:"connection_id"`
			Reason       string `json:"reason"`
		}
		_ = json.Unmarshal(f.Params, &p)
		reason := p.Reason
		if reason == "" {
			reason = "no reason given"
		}
		c.mu.Lock()
		if c.ext != nil && c.ext.sock == s {
			c.ext = nil
		}
		c.mu.Unlock()
		c.opts.Logger.Warn("browser extension disconnected", "reason", reason)
		s.failForwarded(fmt.Errorf("%w (%s): the call was not completed; the next call reconnects", ErrExtensionDisconnected, reason))
	case "status":
		var p struct {
			PeerCount int `json:"peer_count"`
			Clients   int `json:"clients"`
		}
		_ = json.Unmarshal(f.Params, &p)
		c.mu.Lock()
		c.status = relayStatus{peers: p.PeerCount, clients: p.Clients, at: time.Now()}
		c.mu.Unlock()
	}
}

// scrub removes the token from an error's text: a peer may echo it.
func scrub(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
}
