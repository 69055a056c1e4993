package aggregator

import (
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// session is what a legacy server knows of its one client: what it said
// in initialize, and how far the handshake has come. One per served
// client, so that several (tests, HTTP sessions) can live in one process.
type session struct {
	id    string
	ready atomic.Bool // notifications/initialized received

	mu   sync.Mutex
	info mcp.Implementation
	caps mcp.ClientCapabilities
}

func newSession(id string) *session { return &session{id: id} }

// initialized keeps what the client said of itself in initialize.
func (s *session) initialized(info mcp.Implementation, caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info, s.caps = info, caps
}

// clientInfo is the client's name and version from initialize.
func (s *session) clientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// clientCaps are the capabilities the client declared in initialize.
func (s *session) clientCaps() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}
