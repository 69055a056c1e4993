package aggregator

import (
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// profileOf is the profile a request's path names: NAME of /mcp/NAME or
// /sse/NAME; "" for /mcp and /sse, which show the whole catalog.
func profileOf(r *http.Request) string {
	for _, prefix := range []string{"/mcp/", "/sse/"} {
		if name, ok := strings.CutPrefix(r.URL.Path, prefix); ok {
			return name
		}
	}
	return ""
}

// profiled answers 404, naming the profiles there are, for a path whose
// profile the config does not define.
func (h *httpHandler) profiled(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, msg := h.a.HasProfile(profileOf(r)); !ok {
			httpError(w, http.StatusNotFound, mcp.INVALID_REQUEST, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}
