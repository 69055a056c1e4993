package core

import (
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// handshake is what a legacy server knows of its one client: what it
// said in initialize, and how far the handshake has come. One per served
// client, so that several (tests, HTTP sessions) can live in one process.
type handshake struct {
	id    string
	ready atomic.Bool // notifications/initialized received

	mu   sync.Mutex
	info mcp.Implementation
	caps mcp.ClientCapabilities
}

// initialized keeps what the client said of itself in initialize.
func (s *handshake) initialized(info mcp.Implementation, caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info, s.caps = info, caps
}

// clientInfo is the client's name and version from initialize.
func (s *handshake) clientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// clientCaps are the capabilities the client declared in initialize.
func (s *handshake) clientCaps() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}
