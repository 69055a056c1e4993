// Package pagepolicy owns the headers every page mcpx serves to a
// browser carries (the dashboard's and its login's): one definition, so
// that the login page cannot drift from the pages behind it.
package pagepolicy

import "net/http"

// Set sets them on h: no script but the page's own files, nothing loaded
// from elsewhere, no framing, and a referrer only to the same origin
// (with none at all, a browser sends a form's Origin as "null", which the
// CSRF check refuses).
func Set(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
}
