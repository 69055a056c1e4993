package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// site is an HTTP server answering a fixed set of paths, recording every
// path asked for. The authorization servers these tests need misbehave in
// ways no real peer does on purpose, hence a fixture.
type site struct {
	*httptest.Server
	routes map[string]http.HandlerFunc
	mu     sync.Mutex
	asked  []string
}

// newSite serves the routes (path → handler) that routes returns for the
// site's URL; every other path is a 404.
func newSite(t testing.TB, routes func(url string) map[string]http.HandlerFunc) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.asked = append(s.asked, r.URL.Path)
		s.mu.Unlock()
		if h, ok := s.routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	s.routes = routes(s.URL) // before any request: the handler only reads it
	return s
}

func (s *site) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asked)
}

// jsonDoc answers v as JSON; a func() any is called at request time, for
// documents that name the server's own URL.
func jsonDoc(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if f, ok := v.(func() any); ok {
			v = f()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}
