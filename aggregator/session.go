package aggregator

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// session is what a stdio server knows of its one client: what it said in
// initialize, and how far the handshake has come. One per server, so that
// several (tests, HTTP sessions) can live in one process.
type session struct {
	id          string
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool // initialize answered
	ready       atomic.Bool // notifications/initialized received

	mu       sync.Mutex
	info     mcp.Implementation
	caps     mcp.ClientCapabilities
	logLevel mcp.LoggingLevel
}

func newSession(id string) *session {
	return &session{id: id, notes: make(chan mcp.JSONRPCNotification, 256), logLevel: mcp.LoggingLevelInfo}
}

func (s *session) SessionID() string                                   { return s.id }
func (s *session) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *session) Initialize()                                         { s.initialized.Store(true) }
func (s *session) Initialized() bool                                   { return s.initialized.Load() }

func (s *session) SetLogLevel(level mcp.LoggingLevel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = level
}

func (s *session) GetLogLevel() mcp.LoggingLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

func (s *session) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

func (s *session) SetClientInfo(info mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
}

func (s *session) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

func (s *session) SetClientCapabilities(caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}

// sessionIDKey carries the id a transport gave the session it serves.
type sessionIDKey struct{}

// withSessionID gives the session served with ctx the id of its
// transport's session (an HTTP session's Mcp-Session-Id).
func withSessionID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionIDKey{}, id)
}

// sessionID is the id withSessionID gave, else "stdio".
func sessionID(ctx context.Context) string {
	if id, ok := ctx.Value(sessionIDKey{}).(string); ok && id != "" {
		return id
	}
	return "stdio"
}
