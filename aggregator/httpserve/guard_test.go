package httpserve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/aggregator/core"
)

// stubCatalog serves no session: the guards and the profile check answer
// before a request reaches the catalog, which is what these tests look at.
type stubCatalog struct{ profiles []string }

func (stubCatalog) ServeSession(context.Context, string, core.Conn, core.SessionOptions) error {
	return errors.New("stubCatalog serves no session")
}
func (stubCatalog) Modern() (*core.Server, error) { return nil, errors.New("stubCatalog has no core") }
func (stubCatalog) StartView(context.Context, string) func() (*core.Server, error) {
	return func() (*core.Server, error) { return nil, errors.New("stubCatalog has no views") }
}
func (c stubCatalog) HasProfile(name string) (bool, string) {
	for _, p := range c.profiles {
		if p == name {
			return true, ""
		}
	}
	return false, "unknown profile " + quote(name)
}
func (stubCatalog) Tracing() bool { return false }

// reached answers 299, so that a test sees which requests got past the
// guards.
var reached = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })

func TestGuard(t *testing.T) {
	for _, c := range []struct {
		name     string
		bound    string // the host ListenAndServe was given
		o        Options
		host     string
		header   map[string]string
		want     int
		wantBody string
	}{
		{"loopback name", "127.0.0.1", Options{}, "localhost:8080", nil, 299, ""},
		{"IPv6 loopback", "127.0.0.1", Options{}, "[::1]:8080", nil, 299, ""},
		{"rebinding Host", "127.0.0.1", Options{}, "evil.example", nil, 403, `Host "evil.example" is not allowed`},
		{"allowed Host, any case", "127.0.0.1", Options{AllowedHosts: []string{"mcpx.example"}}, "MCPX.example:80", nil, 299, ""},
		{"any Host allowed", "127.0.0.1", Options{AllowedHosts: []string{"*"}}, "evil.example", nil, 299, ""},
		{"bound name", "10.0.0.5", Options{Token: "t", AllowedHosts: []string{"other"}}, "10.0.0.5:80", map[string]string{"Authorization": "Bearer t"}, 299, ""},
		{"public bind, no allowedHosts", "10.0.0.5", Options{Token: "t"}, "proxy.example", map[string]string{"Authorization": "Bearer t"}, 299, ""},
		{"public bind, Host not listed", "10.0.0.5", Options{Token: "t", AllowedHosts: []string{"other"}}, "proxy.example", map[string]string{"Authorization": "Bearer t"}, 403, "http.allowedHosts"},
		{"same-origin page", "127.0.0.1", Options{}, "localhost:8080", map[string]string{"Origin": "http://localhost:8080"}, 299, ""},
		{"foreign Origin", "127.0.0.1", Options{}, "localhost:8080", map[string]string{"Origin": "https://evil.example"}, 403, `Origin "https://evil.example" is not allowed`},
		{"allowed Origin, trailing slash", "127.0.0.1", Options{AllowedOrigins: []string{"https://app.example/"}}, "localhost", map[string]string{"Origin": "https://app.example"}, 299, ""},
		{"no token", "127.0.0.1", Options{Token: "secret"}, "localhost", nil, 401, "bearer token is required"},
		{"wrong token", "127.0.0.1", Options{Token: "secret"}, "localhost", map[string]string{"Authorization": "Bearer secreT"}, 401, ""},
		{"token without Bearer", "127.0.0.1", Options{Token: "secret"}, "localhost", map[string]string{"Authorization": "secret"}, 401, ""},
		{"right token", "127.0.0.1", Options{Token: "secret"}, "localhost", map[string]string{"Authorization": "Bearer secret"}, 299, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHandler(t.Context(), stubCatalog{}, c.o, c.bound, isLoopback(c.bound))
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Host = c.host
			for k, v := range c.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.guard(reached).ServeHTTP(w, r)
			if w.Code != c.want || !strings.Contains(w.Body.String(), c.wantBody) {
				t.Fatalf("status %d %q, want %d with %q", w.Code, w.Body, c.want, c.wantBody)
			}
			if c.want == 401 && w.Header().Get("WWW-Authenticate") != `Bearer realm="mcpx"` {
				t.Errorf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// TestRoutes: /healthz answers without the token, the API and /metrics
// are served only behind it, and a path naming a profile the config does
// not define is answered 404 with what the catalog says.
func TestRoutes(t *testing.T) {
	o := Options{Token: "secret", API: reached, Metrics: reached}
	h := newHandler(t.Context(), stubCatalog{profiles: []string{"dev"}}, o, "127.0.0.1", true)
	for _, c := range []struct {
		method, path, auth string
		want               int
		wantBody           string
	}{
		{"GET", "/healthz", "", 200, "ok\n"},
		{"GET", "/mcpx/v1/catalog", "", 401, ""},
		{"GET", "/mcpx/v1/catalog", "Bearer secret", 299, ""},
		{"GET", "/metrics", "", 401, ""},
		{"GET", "/metrics", "Bearer secret", 299, ""},
		{"POST", "/mcp/nope", "Bearer secret", 404, `unknown profile \"nope\"`},
		{"GET", "/sse/nope", "Bearer secret", 404, `unknown profile \"nope\"`},
		{"PUT", "/mcp", "Bearer secret", 405, "method not allowed"},
		{"GET", "/messages", "Bearer secret", 405, "method not allowed"},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Host = "localhost"
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want || !strings.Contains(w.Body.String(), c.wantBody) {
			t.Errorf("%s %s: status %d %q, want %d with %q", c.method, c.path, w.Code, w.Body, c.want, c.wantBody)
		}
	}
}

// TestListenAndServeNeedsToken: a non-loopback address without a token is
// refused before anything listens.
func TestListenAndServeNeedsToken(t *testing.T) {
	err := ListenAndServe(t.Context(), "0.0.0.0:0", stubCatalog{}, nil)
	if !errors.Is(err, ErrTokenRequired) || !strings.Contains(err.Error(), "--token-file") {
		t.Fatalf("err %v, want ErrTokenRequired naming --token-file", err)
	}
}
