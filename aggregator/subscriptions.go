package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpx/mcpx/upstream"
)

// Resource subscriptions per session. An upstream sees one subscriber,
// mcpx: it subscribes upstream when the first served session subscribes
// to a URI and unsubscribes when the last one does, or ends. Updates go
// only to the sessions subscribed to their URI; one for a URI no session
// is subscribed to (sent unasked, or late after the last one left) goes
// to none.
//
// The registry lives in the catalog that owns the URI's source: the
// shared catalog for shared upstreams, a session's own catalog for its
// perSession servers (whose updates reach only that session anyway).

// unsubscribeTimeout bounds the unsubscribe sent when a session ends.
const unsubscribeTimeout = 5 * time.Second

// subscriptions are the served sessions subscribed to each URI.
type subscriptions struct {
	// op is held across the request upstream, so that which session is
	// first and which is last is decided once per URI. mu guards by and
	// is never held across a request: the upstreams' readers take it.
	op sync.Mutex
	mu sync.Mutex
	by map[string]map[*listener]bool // uri -> sessions
}

// subscribe answers resources/subscribe and resources/unsubscribe for
// the session l.
func (a *Aggregator) subscribe(ctx context.Context, l *listener, method string, params json.RawMessage) (json.RawMessage, error) {
	uri, err := paramString(params, "uri")
	if err != nil {
		return nil, err
	}
	owner := a.subscriptionOwner(uri)
	subs := &owner.subs
	subs.op.Lock()
	defer subs.op.Unlock()
	subs.mu.Lock()
	set := subs.by[uri]
	if method == "resources/subscribe" {
		if len(set) > 0 {
			set[l] = true // the upstream already sends its updates
			subs.mu.Unlock()
			return json.RawMessage(`{}`), nil
		}
		subs.mu.Unlock()
		res, err := a.routeSubscription(ctx, l, method, params)
		if err == nil {
			subs.mu.Lock()
			if subs.by == nil {
				subs.by = map[string]map[*listener]bool{}
			}
			subs.by[uri] = map[*listener]bool{l: true}
			subs.mu.Unlock()
		}
		return res, err
	}
	if len(set) > 0 {
		delete(set, l)
		if len(set) > 0 {
			subs.mu.Unlock()
			return json.RawMessage(`{}`), nil // others still want its updates
		}
		delete(subs.by, uri)
	}
	subs.mu.Unlock()
	return a.routeSubscription(ctx, l, method, params)
}

// subscriptionOwner is the catalog whose registry holds uri: the shared
// one when a shared upstream lists it, else a (a session's own catalog
// routes a URI it does not know to its own servers only).
func (a *Aggregator) subscriptionOwner(uri string) *Aggregator {
	if a.parent != nil {
		if _, ok := a.parent.Catalog().Resource(uri); ok {
			return a.parent
		}
	}
	return a
}

// routeSubscription sends resources/subscribe or unsubscribe to the
// source of its URI. Updates come back with the same URI: mcpx never
// rewrites URIs.
//
// A URI no source lists may still be one a source serves (resources need
// not be listed, and links in content name them), so it is offered to
// every source: the first that accepts it has it. l is the session that
// asks (nil: none).
func (a *Aggregator) routeSubscription(ctx context.Context, l *listener, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := a.forwardURI(ctx, l, method, params)
	if !errors.Is(err, ErrUnknown) {
		return res, err
	}
	a.srvMu.RLock()
	members := slices.Clone(a.members)
	a.srvMu.RUnlock()
	for _, m := range members {
		if _, ok := m.src.(*upstream.Client); !ok {
			continue
		}
		if r, e := a.do(ctx, sourceCall{l: l, src: m.src, method: method, params: params}); e == nil {
			return r, nil
		}
	}
	return nil, err
}

// subscriptionsSessionEnded drops a session that ended (no longer a
// listener) from every URI it subscribed to, and unsubscribes upstream
// from those it was the last subscriber of. A session's own catalog is
// closed with it, so only the shared catalog's registry needs this.
func (a *Aggregator) subscriptionsSessionEnded(l *listener) {
	root := a.root()
	subs := &root.subs
	subs.mu.Lock()
	var last []string
	for uri, set := range subs.by {
		if set[l] {
			if delete(set, l); len(set) == 0 {
				delete(subs.by, uri)
				last = append(last, uri)
			}
		}
	}
	subs.mu.Unlock()
	if len(last) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(root.lifetime(), unsubscribeTimeout)
		defer cancel()
		subs.op.Lock()
		defer subs.op.Unlock()
		for _, uri := range last {
			subs.mu.Lock()
			again := len(subs.by[uri]) > 0 // subscribed again since
			subs.mu.Unlock()
			if again {
				continue
			}
			params, _ := json.Marshal(map[string]string{"uri": uri})
			if _, err := root.routeSubscription(ctx, nil, "resources/unsubscribe", params); err != nil {
				root.log.Debug("resources/unsubscribe after the session ended", "uri", uri, "err", root.opts.Redact(err.Error()))
			}
		}
	}()
}

// relayFilter returns which served sessions get a notification from an
// upstream of a: a log message those whose level it meets, a resource
// update those subscribed to its URI, anything else every session.
func (a *Aggregator) relayFilter(method string, params json.RawMessage) func(*listener) bool {
	switch method {
	case "notifications/message":
		var p struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(params, &p)
		return func(l *listener) bool { return l.wantsLog(p.Level) }
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		a.subs.mu.Lock()
		to := maps.Clone(a.subs.by[p.URI])
		a.subs.mu.Unlock()
		return func(l *listener) bool { return to[l] }
	}
	return func(*listener) bool { return true }
}

// sessionEnded forgets what a session that ended (no longer a listener)
// asked of the shared upstreams: its log level and its subscriptions.
func (a *Aggregator) sessionEnded(l *listener) {
	a.logSessionEnded(l)
	a.subscriptionsSessionEnded(l)
}
