package httpserve

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/principal"
)

// TestUILogin: off loopback the dashboard sends a browser to /ui/login;
// the token or a key posted there starts a login whose cookie (a random
// id, HttpOnly, SameSite=Strict) admits /ui paths only; a wrong
// credential, a cross-site login and a removed key's cookie are refused.
func TestUILogin(t *testing.T) {
	ciKey, ciHash := config.NewAPIKey()
	aliceKey, aliceHash := config.NewAPIKey()
	var mu sync.Mutex
	keys := []config.APIKey{{Name: "ci", Hash: ciHash}, {Name: "alice", Hash: aliceHash, Profile: "read"}}
	current := func() []config.APIKey { mu.Lock(); defer mu.Unlock(); return keys }
	var seenWho, seenProfile string
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenWho, seenProfile = principal.Of(r.Context()), principal.ProfileOf(r.Context())
		w.WriteHeader(299)
	})
	h := newHandler(t.Context(), stubCatalog{}, Options{Token: "secret", Keys: current, UI: ui, API: ui}, "10.0.0.1", false)
	do := func(method, path, cookie string, form url.Values, hdr map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		r := httptest.NewRequest(method, "http://10.0.0.1:7777"+path, body)
		if form != nil {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != "" {
			r.AddCookie(&http.Cookie{Name: uiCookie, Value: cookie})
		}
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	if w := do("GET", "/ui/", "", nil, nil); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/login" {
		t.Fatalf("GET /ui/ without credentials: %d to %q, want 303 to /ui/login", w.Code, w.Header().Get("Location"))
	}
	if w := do("GET", "/ui/login", "", nil, nil); w.Code != 200 || !strings.Contains(w.Body.String(), `name="token"`) ||
		!strings.Contains(w.Header().Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("GET /ui/login: %d, CSP %q, body %s", w.Code, w.Header().Get("Content-Security-Policy"), w.Body)
	}
	if w := do("POST", "/ui/login", "", url.Values{"token": {"wrong"}}, nil); w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) > 0 {
		t.Fatalf("login with a wrong token: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	if w := do("POST", "/ui/login", "", url.Values{"token": {"secret"}}, map[string]string{"Origin": "http://evil.example"}); w.Code != http.StatusForbidden {
		t.Fatalf("cross-site login: %d, want 403", w.Code)
	}
	login := func(cred string) string {
		t.Helper()
		w := do("POST", "/ui/login", "", url.Values{"token": {cred}}, map[string]string{"Origin": "http://10.0.0.1:7777", "Sec-Fetch-Site": "same-origin"})
		cs := w.Result().Cookies()
		if w.Code != http.StatusSeeOther || len(cs) != 1 {
			t.Fatalf("login: %d, cookies %v", w.Code, cs)
		}
		c := cs[0]
		if c.Name != uiCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui" || c.Value == cred || strings.Contains(c.Value, cred) {
			t.Fatalf("cookie %+v: want an HttpOnly, SameSite=Strict session id on /ui, not the credential", c)
		}
		return c.Value
	}
	tok := login("secret")
	if w := do("GET", "/ui/", tok, nil, nil); w.Code != 299 || seenWho != "" {
		t.Fatalf("GET /ui/ with the token's login: %d as %q", w.Code, seenWho)
	}
	if w := do("GET", "/mcpx/v1/catalog", tok, nil, nil); w.Code != http.StatusUnauthorized {
		t.Fatalf("the cookie at /mcpx/v1/: %d, want 401 (the cookie is for /ui only)", w.Code)
	}
	ci := login(ciKey)
	if w := do("GET", "/ui/servers", ci, nil, nil); w.Code != 299 || seenWho != "ci" {
		t.Fatalf("GET with ci's login: %d as %q, want ci", w.Code, seenWho)
	}
	alice := login(aliceKey)
	if w := do("GET", "/ui/servers", alice, nil, nil); w.Code != 299 || seenWho != "alice" || seenProfile != "read" {
		t.Fatalf("GET with alice's login: %d as %q in profile %q, want alice in read", w.Code, seenWho, seenProfile)
	}
	mu.Lock()
	keys = nil
	mu.Unlock()
	if w := do("GET", "/ui/servers", ci, nil, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("a removed key's login: %d, want 303 to the login page", w.Code)
	}
	if w := do("POST", "/ui/logout", tok, nil, map[string]string{"Sec-Fetch-Site": "same-origin"}); w.Code != http.StatusSeeOther {
		t.Fatalf("logout: %d", w.Code)
	}
	if w := do("GET", "/ui/", tok, nil, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("after logout: %d, want 303", w.Code)
	}
	if w := do("GET", "/ui/static/app.css", "", nil, nil); w.Code != 299 {
		t.Fatalf("static file without credentials: %d, want it served", w.Code)
	}
}

// TestUIOff: without Options.UI there is no /ui.
func TestUIOff(t *testing.T) {
	h := newHandler(t.Context(), stubCatalog{}, Options{}, "127.0.0.1", true)
	for _, p := range []string{"/ui", "/ui/", "/ui/login"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1:7777"+p, nil))
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
	}
}
