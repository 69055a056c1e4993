package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpx/mcpx/jsonrpc"
)

// A modern server sends nothing nobody asked for: no GET stream, no
// resources/subscribe. mcpx hears its list changes and resource updates
// on one subscriptions/listen request per connection, which the server
// keeps open and answers only when it ends the subscription. Its
// notifications arrive like a legacy session's and go the same way: a
// list change resyncs that list, a resource update goes to
// OnNotification.

// metaSubscriptionID tags each notification of a listen stream with the
// id of its subscriptions/listen request.
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// methodSubscriptionsAcknowledged is the first message of a listen
// stream: the part of the filter the server agreed to.
const methodSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"

// listenFilter is the notifications object of subscriptions/listen.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

func (f listenFilter) empty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0
}

// listenFilter is what mcpx asks the server for now: every list change
// its capabilities say it announces, and, when it takes subscriptions,
// the resources subscribed to through mcpx.
func (cn *conn) listenFilter() listenFilter {
	caps := cn.caps
	f := listenFilter{
		ToolsListChanged:     caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   caps.Prompts != nil && caps.Prompts.ListChanged,
		ResourcesListChanged: caps.Resources != nil && caps.Resources.ListChanged,
	}
	if cn.subscribes() {
		cn.c.mu.Lock()
		f.ResourceSubscriptions = slices.Sorted(maps.Keys(cn.c.subscribed))
		cn.c.mu.Unlock()
	}
	return f
}

// subscribes reports whether the server takes resource subscriptions.
func (cn *conn) subscribes() bool { return cn.caps.Resources != nil && cn.caps.Resources.Subscribe }

// listener keeps a modern connection's subscriptions/listen stream open:
// it opens it after the handshake, opens it again (after a backoff) when
// the server ends it or it fails, and again at once with a new filter
// when the resources subscribed to change. It ends with the connection.
type listener struct {
	cn   *conn
	wake chan struct{} // the filter changed while no stream was open

	mu     sync.Mutex
	cancel context.CancelFunc // ends the stream open now; nil when none
	stale  bool               // the filter changed since the stream opened
	// gap says a stream ended before the one opening now, so changes
	// may have gone unheard: its acknowledgement resyncs every list it
	// asks about.
	gap bool
}

func newListener(cn *conn) *listener {
	return &listener{cn: cn, wake: make(chan struct{}, 1)}
}

// refilter ends the stream open now, if any, for one with the filter as
// it is now.
func (l *listener) refilter() {
	l.mu.Lock()
	l.stale = true
	cancel := l.cancel
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	poke(l.wake)
}

// acknowledged is told of the server's acknowledgement of a stream.
func (l *listener) acknowledged() {
	l.mu.Lock()
	gap := l.gap
	l.gap = false
	l.mu.Unlock()
	if !gap {
		return
	}
	f := l.cn.listenFilter()
	if f.ToolsListChanged {
		l.cn.markDirty(listTools)
	}
	if f.ResourcesListChanged {
		l.cn.markDirty(listResources)
		l.cn.markDirty(listTemplates)
	}
	if f.PromptsListChanged {
		l.cn.markDirty(listPrompts)
	}
}

// run keeps the stream open until ctx ends or the connection is lost.
func (l *listener) run(ctx context.Context) {
	cn := l.cn
	retry := newBackoff(cn.c.opts.MinBackoff, cn.c.opts.MaxBackoff)
	failing := false
	for {
		f := cn.listenFilter()
		if f.empty() {
			select {
			case <-ctx.Done():
				return
			case <-cn.lost:
				return
			case <-l.wake:
				continue
			}
		}
		params, err := json.Marshal(map[string]any{"notifications": f})
		if err != nil {
			return
		}
		sctx, cancel := context.WithCancel(ctx)
		l.mu.Lock()
		l.stale, l.cancel = false, cancel
		l.mu.Unlock()
		opened := time.Now()
		_, err = cn.request(sctx, "subscriptions/listen", params)
		cancel()
		l.mu.Lock()
		l.cancel = nil
		stale := l.stale
		if !stale {
			l.gap = true
		}
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-cn.lost:
			return
		default:
		}
		if stale {
			continue // the filter changed: a new stream at once
		}
		var rpc *RPCError
		if errors.As(err, &rpc) && rpc.Code != CodeUnsupportedProtocolVersion {
			// The server refuses the request itself: asking again
			// would be refused again.
			cn.c.log.Warn("subscriptions/listen refused: the server's changes will not be heard", "err", cn.c.opts.Redact(err.Error()))
			return
		}
		if err != nil {
			cn.c.eraFailed(cn, err)
			if childGone(err) || errors.Is(err, errClosed) {
				// The connection is going: its end says why.
				failing = true
			}
		}
		if time.Since(opened) >= streamMinLife {
			retry.reset()
			failing = false
		}
		delay := retry.wait()
		why := "the server ended it"
		if err != nil {
			why = cn.c.opts.Redact(err.Error())
		}
		if !failing {
			cn.c.log.Warn("subscriptions/listen ended; opening it again with backoff", "why", why, "in", delay)
		} else {
			cn.c.log.Debug("subscriptions/listen ended again", "why", why, "in", delay)
		}
		failing = true
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-cn.lost:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// subscribeModern answers resources/subscribe and resources/unsubscribe
// for a modern server, which has neither: the URI joins or leaves the
// listen stream's filter.
func (c *Client) subscribeModern(cn *conn, method string, params json.RawMessage) (json.RawMessage, error) {
	if !cn.subscribes() {
		return nil, &RPCError{Code: jsonrpc.CodeMethodNotFound, Message: "the server does not support resource subscriptions"}
	}
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == "" {
		return nil, &RPCError{Code: jsonrpc.CodeInvalidParams, Message: method + " needs a uri"}
	}
	c.track(method, params)
	if cn.listen != nil {
		cn.listen.refilter()
	}
	return json.RawMessage(`{}`), nil
}

// isSubscription reports whether method is one a modern server has not.
func isSubscription(method string) bool {
	return method == "resources/subscribe" || method == "resources/unsubscribe"
}
