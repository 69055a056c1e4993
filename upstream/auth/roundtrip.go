package auth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Challenge is what a server's WWW-Authenticate Bearer challenge said
// (RFC 6750 §3, RFC 9728 §5.1).
type Challenge struct {
	Error            string   // e.g. "invalid_token", "insufficient_scope"
	Scopes           []string // the scope parameter, split
	ResourceMetadata string   // the resource_metadata URL
}

// ParseChallenge reads the Bearer challenge of a 401 or 403 response;
// the zero Challenge when there is none.
func ParseChallenge(h http.Header) Challenge {
	var c Challenge
	for _, v := range h.Values("WWW-Authenticate") {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		for k, v := range authParams(rest) {
			switch strings.ToLower(k) {
			case "error":
				c.Error = v
			case "scope":
				c.Scopes = strings.Fields(v)
			case "resource_metadata":
				c.ResourceMetadata = v
			}
		}
		return c
	}
	return c
}

// authParams splits `a="x, y", b=z` into its parameters (RFC 9110
// §11.2), quoted strings with backslash escapes included.
func authParams(s string) map[string]string {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,\t")
		k, rest, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return out
		}
		k = strings.TrimSpace(k)
		rest = strings.TrimLeft(rest, " \t")
		var v strings.Builder
		if strings.HasPrefix(rest, `"`) {
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				v.WriteByte(rest[i])
			}
			s = rest[min(i+1, len(rest)):]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			v.WriteString(strings.TrimSpace(rest[:end]))
			s = rest[end:]
		}
		out[k] = v.String()
	}
}

// RoundTripper returns an http.RoundTripper for the server's MCP requests:
// it adds the access token (refreshing it first when it is about to
// expire); on a 401 it refreshes and sends the request once more; a 401
// it cannot cure, or a 403 insufficient_scope, becomes a
// [*LoginRequiredError]. A nil base means http.DefaultTransport.
func (a *Authenticator) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{a: a, base: base}
}

type roundTripper struct {
	a    *Authenticator
	base http.RoundTripper
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	tok, err := t.a.Token(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	sent := ""
	if tok != nil {
		sent = tok.AccessToken
	}
	resp, err := t.base.RoundTrip(withToken(req, sent))
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		ch := ParseChallenge(resp.Header)
		discard(resp)
		if sent == "" {
			return nil, t.a.needLogin(ctx, ch, "")
		}
		tok, err := t.a.refresh(ctx, sent)
		if err != nil {
			return nil, err
		}
		retry, err := rewind(req)
		if err != nil {
			return nil, err
		}
		resp, err = t.base.RoundTrip(withToken(retry, tok.AccessToken))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusUnauthorized {
			ch := ParseChallenge(resp.Header)
			discard(resp)
			return nil, t.a.needLogin(ctx, ch, "the server refused a freshly refreshed token")
		}
	case http.StatusForbidden:
		if ch := ParseChallenge(resp.Header); ch.Error == "insufficient_scope" {
			discard(resp)
			return nil, t.a.stepUp(ctx, ch)
		}
	}
	return resp, nil
}

// needLogin returns the error for a 401 mcpx cannot cure, with the scopes
// the server's challenge named.
func (a *Authenticator) needLogin(_ context.Context, ch Challenge, reason string) error {
	return &LoginRequiredError{Server: a.server, Scopes: ch.Scopes, Reason: reason}
}

// stepUp records the scopes a 403 insufficient_scope named, so that the
// next login asks for them as well as the ones it has.
func (a *Authenticator) stepUp(ctx context.Context, ch Challenge) error {
	if r, err := a.record(ctx); err == nil && r != nil {
		if more := union(r.Scopes, ch.Scopes); len(more) > len(r.Scopes) {
			r.Scopes = more
			_ = a.save(ctx, r)
		}
	}
	return &LoginRequiredError{Server: a.server, Scopes: ch.Scopes, StepUp: true}
}

func withToken(req *http.Request, token string) *http.Request {
	if token == "" {
		return req
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// rewind returns req ready to send again, with a fresh body.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("cannot send the request again after refreshing the token")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r.Body = body
	return r, nil
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
