package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/upstream"
)

// Log levels per session. Each session's logging/setLevel is its own: it
// gets the upstreams' log messages at or above the level it asked for,
// and none of the more verbose ones another session asked for. A shared
// upstream has one level, so it is set to the most verbose level any
// served session asked for, and set again when the session that asked
// for it ends; mcpx filters per session. A session that never sets a
// level gets every message, as over stdio, where the one session's level
// is the upstreams' and nothing changes.

// logLevelNames are logging/setLevel's levels (RFC 5424's), most verbose
// first.
var logLevelNames = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// setLevelTimeout bounds applying a log level to the upstreams.
const setLevelTimeout = 10 * time.Second

// sessionLevels is what the shared catalog remembers of the level its
// upstreams were last set to.
type sessionLevels struct {
	mu      sync.Mutex // held while the upstreams are being set, so the last set wins
	applied string     // the level the shared upstreams were last set to; "" none
}

// root is the shared catalog: a session's own catalog's parent, or a.
func (a *Aggregator) root() *Aggregator {
	if a.parent != nil {
		return a.parent
	}
	return a
}

// wantsLog reports whether l gets a log message at level: every one
// until it sets a level; a level mcpx does not know passes.
func (l *listener) wantsLog(level string) bool {
	set := l.logLevel.Load()
	i := slices.Index(logLevelNames, level)
	return set == 0 || i < 0 || int32(i) >= set-1
}

// setLogLevel records the level of the session l (nil: none) and
// applies it: the shared upstreams get the most verbose level of every
// served session, the session's own (perSession) upstreams its level.
func (a *Aggregator) setLogLevel(ctx context.Context, l *listener, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Level string `json:"level"`
	}
	i := -1
	if err := json.Unmarshal(orEmpty(params), &p); err == nil {
		i = slices.Index(logLevelNames, p.Level)
	}
	if i < 0 {
		return nil, fmt.Errorf("%w: level must be one of %s", ErrInvalidParams, strings.Join(logLevelNames, ", "))
	}
	if l != nil {
		l.logLevel.Store(int32(i + 1))
	}
	ctx, cancel := context.WithTimeout(ctx, setLevelTimeout)
	defer cancel()
	root := a.root()
	root.levels.mu.Lock()
	shared := root.mostVerboseLevel()
	if shared == "" {
		shared = p.Level // a call from no served session
	}
	root.levels.applied = shared
	root.applyLogLevel(ctx, root.clients(), shared)
	root.levels.mu.Unlock()
	if a != root {
		a.applyLogLevel(ctx, a.clients(), p.Level)
	}
	return json.RawMessage(`{}`), nil
}

// mostVerboseLevel is the most verbose level a served session set, or ""
// when none did.
func (a *Aggregator) mostVerboseLevel() string {
	most := int32(0)
	a.listeners.Range(func(k, _ any) bool {
		if v := k.(*listener).logLevel.Load(); v > 0 && (most == 0 || v < most) {
			most = v
		}
		return true
	})
	if most == 0 {
		return ""
	}
	return logLevelNames[most-1]
}

// applyLogLevel sets level on every client at once.
func (a *Aggregator) applyLogLevel(ctx context.Context, clients []*upstream.Client, level string) {
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.SetLogLevel(ctx, level); err != nil {
				a.log.Warn("logging/setLevel", "server", c.Name(), "err", a.opts.Redact(err.Error()))
			}
		}()
	}
	wg.Wait()
}

// logSessionEnded sets the shared upstreams back to the most verbose
// level of the sessions left, when the session that ended (no longer a
// listener) asked for a more verbose one. With none left that set a
// level, the upstreams keep theirs: MCP has no way to unset it.
func (a *Aggregator) logSessionEnded(l *listener) {
	if l.logLevel.Load() == 0 {
		return
	}
	root := a.root()
	go func() {
		ctx, cancel := context.WithTimeout(root.lifetime(), setLevelTimeout)
		defer cancel()
		root.levels.mu.Lock()
		defer root.levels.mu.Unlock()
		next := root.mostVerboseLevel()
		if next == "" || next == root.levels.applied {
			return
		}
		root.levels.applied = next
		root.applyLogLevel(ctx, root.clients(), next)
		root.log.Debug("a session ended: the shared servers' log level is set back", "level", next)
	}()
}

// lifetime is the context of the started catalog (background before
// Start), for work a session leaves behind when it ends.
func (a *Aggregator) lifetime() context.Context {
	if a.ctx == nil {
		return context.Background()
	}
	return a.ctx
}
