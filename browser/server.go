package browser

import (
	"context"
	"encoding/json"
	"fmt"
)

// Server presents the browser tools to mcpx's aggregator as one more
// source of capabilities: tools only, called by their unprefixed names.
type Server struct {
	name  string
	tools *Tools
}

// NewServer returns the tools as a source named name.
func NewServer(name string, tools *Tools) *Server { return &Server{name: name, tools: tools} }

func (s *Server) Name() string                         { return s.name }
func (s *Server) Tools() []json.RawMessage             { return s.tools.List() }
func (s *Server) Resources() []json.RawMessage         { return nil }
func (s *Server) ResourceTemplates() []json.RawMessage { return nil }
func (s *Server) Prompts() []json.RawMessage           { return nil }

// Request answers tools/call; the browser offers nothing else.
func (s *Server) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != "tools/call" {
		return nil, fmt.Errorf("the browser has no %s", method)
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("tools/call params: %w", err)
	}
	return s.tools.Call(ctx, p.Name, p.Arguments), nil
}
