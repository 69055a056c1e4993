package auth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// probe sends an unauthenticated request and returns the server's
// challenge; [ErrNotRequired] when it answers without one.
func (a *Authenticator) probe(ctx context.Context) (Challenge, error) {
	needs, ch, err := a.Probe(ctx)
	if err != nil {
		return Challenge{}, err
	}
	if !needs {
		return Challenge{}, fmt.Errorf("%s: %w", a.server, ErrNotRequired)
	}
	return ch, nil
}

// Probe asks the server, without credentials, whether it needs a login: a
// JSON-RPC ping by POST, which a protected server refuses with 401 before
// reading it; a server that takes no POST there (an SSE endpoint) is asked
// with a GET instead. No answer's body is read: it may be an endless
// stream.
func (a *Authenticator) Probe(ctx context.Context) (needs bool, ch Challenge, err error) {
	ask := func(method string) (int, http.Header, error) {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":"mcpx-auth-probe","method":"ping"}`)
		}
		req, err := http.NewRequestWithContext(ctx, method, a.url, body)
		if err != nil {
			return 0, nil, fmt.Errorf("probe %s: %w", a.server, err)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := a.http.Do(req)
		if err != nil {
			return 0, nil, fmt.Errorf("probe %s: %w", a.server, err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header, nil
	}
	status, h, err := ask(http.MethodPost)
	if err == nil && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) {
		status, h, err = ask(http.MethodGet)
	}
	if err != nil {
		return false, Challenge{}, err
	}
	if status == http.StatusUnauthorized {
		return true, ParseChallenge(h), nil
	}
	return false, Challenge{}, nil
}

func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host != "" &&
		strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}
