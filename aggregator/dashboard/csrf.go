package dashboard

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpx/mcpx/internal/principal"
)

// csrfHeader carries the token of a POST sent by the script; a form
// sends it as the field csrfField.
const (
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf"
)

// csrfToken is the token of the pages shown to whoever r comes from: an
// HMAC, under a secret drawn when the process started, of the principal
// and profile, so that a page of one principal does not serve another's
// POST, and nothing of it is kept per session. A page on another site
// cannot read it (the same-origin policy), so it cannot send it.
func (d *Dashboard) csrfToken(r *http.Request) string {
	m := hmac.New(sha256.New, d.secret[:])
	m.Write([]byte("mcpx dashboard csrf\x00" + principal.Of(r.Context()) + "\x00" + principal.ProfileOf(r.Context())))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkPost answers a state-changing request that is not a POST from
// the dashboard's own page with its token, and reports false for it: a
// POST whose Origin is another's or whose Sec-Fetch-Site is not
// same-origin is refused before its token is looked at. It parses the
// form, for the handler to read r.PostForm.
func (d *Dashboard) checkPost(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: a change is a POST", http.StatusMethodNotAllowed)
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			http.Error(w, "forbidden: cross-site request (Origin is not this dashboard's)", http.StatusForbidden)
			return false
		}
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		http.Error(w, "forbidden: cross-site request (Sec-Fetch-Site)", http.StatusForbidden)
		return false
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read: "+err.Error(), http.StatusBadRequest)
		return false
	}
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostForm.Get(csrfField)
	}
	if !hmac.Equal([]byte(got), []byte(d.csrfToken(r))) {
		http.Error(w, "forbidden: missing or wrong CSRF token: reload the page", http.StatusForbidden)
		return false
	}
	return true
}
