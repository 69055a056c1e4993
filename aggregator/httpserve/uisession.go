package httpserve

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/aggregator/httpserve/accesstoken"
	"github.com/mcpx/mcpx/internal/pagepolicy"
	"github.com/mcpx/mcpx/internal/principal"
)

// The dashboard's logins. A browser cannot send a bearer header when it
// navigates, so off loopback a person logs in at /ui/login with the token
// or a named API key; the answer sets a cookie holding a random session
// id, never the credential, which maps here to who logged in. The cookie
// is accepted on /ui paths only: /mcp and the terminal API still need the
// header.

// uiCookie is the name of the dashboard's session cookie.
const uiCookie = "mcpx_ui"

// uiSessionTTL is how long a login lasts; uiMaxSessions bounds how many
// are kept (the oldest goes first).
const (
	uiSessionTTL  = 12 * time.Hour
	uiMaxSessions = 1024
)

// uiSessions are the logins in force. Safe for concurrent use.
type uiSessions struct {
	mu sync.Mutex
	by map[string]*uiSession
}

// uiSession is one login: the sha256 of the credential it was made with,
// checked again at each request, so that a key removed from the config
// ends its logins at once.
type uiSession struct {
	sum   [32]byte
	token bool   // made with the shared token
	key   string // else the name of the API key
	// oauth is set for a login made with an OAuth access token: it lasts
	// no longer than the token and as long as http.oauth is set, as
	// who, limited to profile.
	oauth        bool
	who, profile string
	expires      time.Time
}

// add records a login and returns its id.
func (s *uiSessions) add(sess *uiSession) string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	id := hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[string]*uiSession{}
	}
	if len(s.by) >= uiMaxSessions {
		var oldest string
		for k, v := range s.by {
			if oldest == "" || v.expires.Before(s.by[oldest].expires) {
				oldest = k
			}
		}
		delete(s.by, oldest)
	}
	s.by[id] = sess
	return id
}

func (s *uiSessions) get(id string, now time.Time) *uiSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.by[id]
	if sess != nil && now.After(sess.expires) {
		delete(s.by, id)
		return nil
	}
	return sess
}

func (s *uiSessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.by, id)
}

// uiCookieSession returns r carrying the principal (and the profile of
// its key) of the login its cookie names, or false when it has none in
// force: no cookie, an unknown or expired id, or a credential no longer
// accepted.
func (h *httpHandler) uiCookieSession(r *http.Request) (*http.Request, bool) {
	c, err := r.Cookie(uiCookie)
	if err != nil || c.Value == "" {
		return r, false
	}
	sess := h.uiLogins.get(c.Value, time.Now())
	if sess == nil {
		return r, false
	}
	if sess.token {
		if h.o.Token == "" || subtle.ConstantTimeCompare(sess.sum[:], h.token[:]) != 1 {
			h.uiLogins.remove(c.Value)
			return r, false
		}
		return r, true
	}
	if sess.oauth {
		if h.o.OAuth == nil || h.o.OAuth() == nil {
			h.uiLogins.remove(c.Value)
			return r, false
		}
		return r.WithContext(principal.WithProfile(principal.With(r.Context(), sess.who), sess.profile)), true
	}
	if h.o.Keys != nil {
		for _, k := range h.o.Keys() {
			if k.Name == sess.key && subtle.ConstantTimeCompare(sess.sum[:], k.Hash[:]) == 1 {
				ctx := principal.WithProfile(principal.With(r.Context(), k.Name), k.Profile)
				return r.WithContext(ctx), true
			}
		}
	}
	h.uiLogins.remove(c.Value)
	return r, false
}

// needsCredentials reports whether a request must show the token or a
// key: everywhere but a loopback listener with neither set (as admit
// decides).
func (h *httpHandler) needsCredentials() bool {
	return h.o.Token != "" || (h.o.Keys != nil && len(h.o.Keys()) > 0) || (h.o.OAuth != nil && h.o.OAuth() != nil) || !h.loopback
}

// guardUI guards the dashboard: the DNS-rebinding checks as every path
// has, then a login's cookie or the credentials admit accepts. Its static
// files, which hold nothing of the server's, and the login page pass
// without credentials. Every answer carries the dashboard's strict
// Content-Security-Policy.
func (h *httpHandler) guardUI(next http.Handler) http.Handler {
	next = h.bounded(next)
	login := h.bounded(http.HandlerFunc(h.uiLogin))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pagepolicy.Set(w.Header())
		if !h.rebindingChecked(w, r) {
			return
		}
		if strings.HasPrefix(r.URL.Path, "/ui/static/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		switch r.URL.Path {
		case "/ui/login":
			login.ServeHTTP(w, r)
			return
		case "/ui/logout":
			h.uiLogout(w, r)
			return
		}
		if r2, ok := h.uiCookieSession(r); ok {
			next.ServeHTTP(w, r2)
			return
		}
		if r.Header.Get("Authorization") == "" && h.needsCredentials() && r.Method == http.MethodGet {
			http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
			return
		}
		r, ok := h.admit(w, r)
		if !ok {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether a state-changing request comes from a page
// of this server: its Origin, when sent, names the request's own host,
// and Sec-Fetch-Site, when sent, is same-origin (or none: typed by the
// user).
func sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return false
		}
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mcpx: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/ui/static/app.css"></head>
<body><main class="login"><h1>mcpx</h1>
<form method="post" action="/ui/login">
<label for="token">Token or API key</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>{{if .}}<p class="error">{{.}}</p>{{end}}</main></body></html>
`))

// uiLogin serves /ui/login: a form for the token or a named API key, and
// its POST, which checks the credential as admit checks a bearer header
// and starts a login.
func (h *httpHandler) uiLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	show := func(status int, msg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		loginPage.Execute(w, msg)
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if !h.needsCredentials() {
			http.Redirect(w, r, "/ui/", http.StatusSeeOther)
			return
		}
		show(http.StatusOK, "")
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "forbidden: a login must come from this server's own page", http.StatusForbidden)
		return
	}
	if !h.needsCredentials() {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther) // nothing to log in with
		return
	}
	if err := r.ParseForm(); err != nil {
		show(http.StatusBadRequest, "the form could not be read")
		return
	}
	cred := strings.TrimSpace(r.PostForm.Get("token"))
	// The credential as a bearer header, through admit: one check for
	// both, which answers into a writer nobody reads.
	try := r.Clone(r.Context())
	try.Header = http.Header{"Authorization": {"Bearer " + cred}}
	admitted, ok := h.admit(discard{}, try)
	if cred == "" || !ok {
		show(http.StatusUnauthorized, "not accepted: give the token or a named API key")
		return
	}
	sess := &uiSession{sum: sha256.Sum256([]byte(cred)), expires: time.Now().Add(uiSessionTTL)}
	switch name := principal.Of(admitted.Context()); {
	case name == "":
		sess.token = true
	case h.isKey(name, sess.sum):
		sess.key = name
	default:
		// An OAuth access token: the login ends when the token expires.
		tok := h.accessToken(r, cred)
		if tok == nil {
			show(http.StatusUnauthorized, "not accepted: give the token, a named API key or an access token")
			return
		}
		sess.oauth, sess.who, sess.profile = true, tok.Principal, tok.Profile
		if tok.Expiry.Before(sess.expires) {
			sess.expires = tok.Expiry
		}
	}
	id := h.uiLogins.add(sess)
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: id, Path: "/ui", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: int(time.Until(sess.expires) / time.Second)})
	h.o.Logger.Info("dashboard login", "principal", cmp.Or(sess.key, sess.who))
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// accessToken is what the OAuth access token raw says, as admit checked
// it; nil when http.oauth is not set or refuses it.
func (h *httpHandler) accessToken(r *http.Request, raw string) *accesstoken.Token {
	if h.o.OAuth == nil {
		return nil
	}
	rs := h.o.OAuth()
	if rs == nil {
		return nil
	}
	tok, err := rs.Check(r.Context(), raw, rs.ResourceOf(r, "/mcp").Audiences()...)
	if err != nil {
		return nil
	}
	return tok
}

// isKey reports whether name is a named API key in force whose hash is
// sum.
func (h *httpHandler) isKey(name string, sum [32]byte) bool {
	if h.o.Keys == nil {
		return false
	}
	for _, k := range h.o.Keys() {
		if k.Name == name && subtle.ConstantTimeCompare(sum[:], k.Hash[:]) == 1 {
			return true
		}
	}
	return false
}

// uiLogout ends the login of the cookie a POST carries.
func (h *httpHandler) uiLogout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "forbidden: a logout must come from this server's own page", http.StatusForbidden)
		return
	}
	if c, err := r.Cookie(uiCookie); err == nil {
		h.uiLogins.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/ui", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// discard is a ResponseWriter whose answer goes nowhere.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
