package aggregator

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/upstream"
	"github.com/mcpx/mcpx/upstream/auth"
)

// This file finishes OAuth logins through the MCP client: when a server
// needs a login and the client declared URL-mode elicitation (2025-11-25),
// mcpx asks the client to open the authorization URL, runs the loopback
// redirect listener itself, and the server's tools appear with
// list_changed once its client connects on the new tokens.

// elicitTimeout bounds how long a login asked of the client may take: the
// user has to notice the prompt, log in, and come back.
const elicitTimeout = 10 * time.Minute

// loginAsks remembers, per served client and server, a login mcpx is
// asking for or that the user turned down, so that nobody is asked twice
// for the same thing in a session.
type loginAsks struct {
	mu    sync.Mutex
	asked map[loginAsk]bool
}

type loginAsk struct {
	l      *listener
	server string
}

func (la *loginAsks) claim(k loginAsk) bool {
	la.mu.Lock()
	defer la.mu.Unlock()
	if la.asked[k] {
		return false
	}
	if la.asked == nil {
		la.asked = map[loginAsk]bool{}
	}
	la.asked[k] = true
	return true
}

// release forgets k after a login that worked, so that losing that login
// later (revoked, expired) asks again.
func (la *loginAsks) release(k loginAsk) {
	la.mu.Lock()
	defer la.mu.Unlock()
	delete(la.asked, k)
}

// offerLogins asks a served client that can open URLs to log in to each
// server that needs it. It never blocks: each login runs on its own.
func (a *Aggregator) offerLogins() {
	for _, c := range a.upstreams {
		if c != nil && c.Auth() != nil && c.Status().State == upstream.StateNeedsLogin {
			a.offerLogin(c)
		}
	}
}

// offerStepUp offers a new login, asking for more scopes, when a call
// failed on a 403 insufficient_scope.
func (a *Aggregator) offerStepUp(src Source, err error) {
	var lr *auth.LoginRequiredError
	if !errors.As(err, &lr) || !lr.StepUp {
		return
	}
	for _, c := range a.upstreams {
		if c != nil && c.Auth() != nil && Source(c) == src {
			a.offerLogin(c)
		}
	}
}

// offerLogin asks the first served client that can open URLs to log in to
// c, unless it was asked already.
func (a *Aggregator) offerLogin(c *upstream.Client) {
	a.listeners.Range(func(k, _ any) bool {
		l := k.(*listener)
		if _, ok := l.conn.(spawner); !ok || !l.elicitURL() {
			return true
		}
		key := loginAsk{l, c.Name()}
		if a.logins.claim(key) {
			l.spawn(func(ctx context.Context) { a.loginThroughClient(ctx, l, c, key) })
		}
		return false // one client is asked, not each of them
	})
}

// loginThroughClient runs one login with the client opening the URL.
func (a *Aggregator) loginThroughClient(ctx context.Context, l *listener, c *upstream.Client, key loginAsk) {
	ctx, cancel := context.WithTimeout(ctx, elicitTimeout)
	defer cancel()
	name := c.Name()
	logger := a.log.With("server", name)
	flow, err := c.Auth().StartLogin(ctx)
	if err != nil {
		logger.Warn("cannot start the login to ask the client for", "err", a.opts.Redact(err.Error()))
		return
	}
	defer flow.Close()
	id := rand.Text()
	params, _ := json.Marshal(map[string]any{
		"mode":          "url",
		"elicitationId": id,
		"url":           flow.URL,
		"message": fmt.Sprintf("The MCP server %q needs you to log in. Open this page to log in; "+
			"mcpx finishes the login and then offers the server's tools.", name),
	})
	res, err := l.request(ctx, string(mcp.MethodElicitationCreate), params)
	if err != nil {
		logger.Warn("the client did not take the login URL", "err", a.opts.Redact(err.Error()),
			"run", "mcpx auth login "+name)
		return
	}
	var answer struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(res, &answer)
	if answer.Action != "accept" {
		logger.Info("the user did not open the login page", "action", answer.Action, "run", "mcpx auth login "+name)
		return
	}
	lr, err := flow.Wait(ctx, elicitTimeout)
	if err != nil {
		logger.Warn("login through the client failed", "err", a.opts.Redact(err.Error()), "run", "mcpx auth login "+name)
		return
	}
	done, _ := json.Marshal(map[string]string{"elicitationId": id})
	l.notify(string(mcp.MethodNotificationElicitationComplete), done)
	a.logins.release(key)
	logger.Info("logged in through the client", "account", lr.Account, "scopes", strings.Join(lr.Scopes, " "))
}

// loginHint says, for a tool name that belongs to a server waiting for a
// login, how to give it one; "" otherwise.
func (a *Aggregator) loginHint(name string) string {
	for i, c := range a.upstreams {
		if c == nil || c.Status().State != upstream.StateNeedsLogin || i >= len(a.cfg.Servers) {
			continue
		}
		// Without a prefix the name says nothing about its server.
		prefix := namePrefix(a.cfg.Servers[i].Prefix, a.cfg.Separator)
		if prefix != "" && strings.HasPrefix(name, prefix) {
			return fmt.Sprintf("server %s needs a login before its tools are listed: run `mcpx auth login %s`", c.Name(), c.Name())
		}
	}
	return ""
}
