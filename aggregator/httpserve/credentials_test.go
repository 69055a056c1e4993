package httpserve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/principal"
)

// TestAdmitKeys: a named API key lets its holder in as its principal,
// limited to its profile; the token still works; a key removed from the
// config is refused at the next request.
func TestAdmitKeys(t *testing.T) {
	aliceKey, aliceHash := config.NewAPIKey()
	ciKey, ciHash := config.NewAPIKey()
	var mu sync.Mutex
	keys := []config.APIKey{{Name: "alice", Hash: aliceHash, Profile: "read"}, {Name: "ci", Hash: ciHash}}
	current := func() []config.APIKey { mu.Lock(); defer mu.Unlock(); return keys }
	var seenPath, seenWho, seenProfile string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenPath, seenWho, seenProfile = r.URL.Path, principal.Of(r.Context()), principal.ProfileOf(r.Context())
		w.WriteHeader(299)
	})
	for _, bound := range []struct {
		name     string
		token    string
		loopback bool
	}{{"token and keys", "secret", true}, {"keys alone, off loopback", "", false}} {
		h := newHandler(t.Context(), stubCatalog{profiles: []string{"read"}}, Options{Token: bound.token, Keys: current}, "127.0.0.1", bound.loopback)
		g := h.guard(next)
		for _, c := range []struct {
			path, auth string
			want       int
			path2, who string // what the handler sees
			body       string
		}{
			{"/mcp", "Bearer " + aliceKey, 299, "/mcp/read", "alice", ""},
			{"/mcp/read", "Bearer " + aliceKey, 299, "/mcp/read", "alice", ""},
			{"/sse", "Bearer " + aliceKey, 299, "/sse/read", "alice", ""},
			{"/messages", "Bearer " + aliceKey, 299, "/messages", "alice", ""},
			{"/mcp/dev", "Bearer " + aliceKey, 403, "", "", "key alice sees profile read only"},
			{"/mcpx/v1/catalog", "Bearer " + aliceKey, 299, "/mcpx/v1/catalog", "alice", ""},
			{"/metrics", "Bearer " + aliceKey, 403, "", "", "needs the token"},
			{"/mcp", "Bearer " + ciKey, 299, "/mcp", "ci", ""},
			{"/mcpx/v1/catalog", "Bearer " + ciKey, 299, "/mcpx/v1/catalog", "ci", ""},
			{"/mcp", "Bearer " + aliceKey[:len(aliceKey)-1], 401, "", "", "bearer token is required"},
			{"/mcp", aliceKey, 401, "", "", "bearer token is required"}, // not as a bearer
			{"/mcp", "", 401, "", "", "bearer token is required"},
		} {
			seenPath, seenWho = "", ""
			r := httptest.NewRequest("POST", c.path, strings.NewReader("{}"))
			r.Host = "127.0.0.1"
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			if w.Code != c.want || !strings.Contains(w.Body.String(), c.body) || seenPath != c.path2 || seenWho != c.who {
				t.Errorf("%s: %s as %q: %d %q, handler saw %q as %q; want %d %q, %q as %q", bound.name, c.path, c.auth[min(len(c.auth), 12):min(len(c.auth), 12)], w.Code, w.Body.String(), seenPath, seenWho, c.want, c.body, c.path2, c.who)
			}
			if strings.Contains(w.Body.String(), aliceKey) || strings.Contains(w.Body.String(), ciKey) {
				t.Errorf("an answer shows a key: %q", w.Body.String())
			}
		}
		// The terminal API is limited to alice's profile, not ci's.
		for key, want := range map[string]string{aliceKey: "read", ciKey: ""} {
			r := httptest.NewRequest("GET", "/mcpx/v1/catalog", nil)
			r.Host, r.Header["Authorization"] = "127.0.0.1", []string{"Bearer " + key}
			if g.ServeHTTP(httptest.NewRecorder(), r); seenProfile != want {
				t.Errorf("%s: the API is limited to %q, want %q", bound.name, seenProfile, want)
			}
		}
		if bound.token != "" {
			r := httptest.NewRequest("POST", "/mcpx/v1/catalog", nil)
			r.Host, r.Header["Authorization"] = "127.0.0.1", []string{"Bearer secret"}
			w := httptest.NewRecorder()
			if g.ServeHTTP(w, r); w.Code != 299 || seenWho != "" {
				t.Errorf("the token: %d as %q", w.Code, seenWho)
			}
		}
	}
	// Revoked: the config no longer has alice.
	mu.Lock()
	keys = keys[1:]
	mu.Unlock()
	h := newHandler(t.Context(), stubCatalog{profiles: []string{"read"}}, Options{Keys: current}, "127.0.0.1", true)
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Host, r.Header["Authorization"] = "127.0.0.1", []string{"Bearer " + aliceKey}
	w := httptest.NewRecorder()
	if h.guard(next).ServeHTTP(w, r); w.Code != 401 {
		t.Errorf("a revoked key: %d, want 401", w.Code)
	}
	// With keys, a loopback listener without a token still asks for one.
	r = httptest.NewRequest("POST", "/mcp", nil)
	r.Host = "127.0.0.1"
	w = httptest.NewRecorder()
	if h.guard(next).ServeHTTP(w, r); w.Code != 401 {
		t.Errorf("no credentials with keys set: %d, want 401", w.Code)
	}
}
