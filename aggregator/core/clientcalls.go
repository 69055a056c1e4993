package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
)

// ErrInputEnded fails a request to a client that closed its input: no
// answer can come.
var ErrInputEnded = errors.New("the client closed its input: it cannot answer")

// clientRequest sends a request to the client (on behalf of an upstream)
// and waits for its answer. A capability the client did not declare is
// refused at once with a clear error, so the upstream never hangs.
func (s *Session) clientRequest(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := s.clientSupports(method, params); err != nil {
		return nil, err
	}
	select {
	case <-s.inputEnded:
		return nil, ErrInputEnded
	default:
	}
	s.mu.Lock()
	s.callSeq++
	id := fmt.Sprintf(`"mcpx-%d"`, s.callSeq)
	reply := make(chan Message, 1)
	s.calls[id] = reply
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, id)
		s.mu.Unlock()
	}()

	msg := []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":` + quote(method))
	if len(params) > 0 && string(params) != "null" {
		msg = append(append(msg, `,"params":`...), params...)
	}
	s.out.raw(append(msg, '}'))
	select {
	case <-s.inputEnded:
		return nil, ErrInputEnded
	case m := <-reply:
		if len(m.Error) > 0 {
			var e struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			}
			_ = json.Unmarshal(m.Error, &e)
			return nil, &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: e.Data}
		}
		return m.Result, nil
	case <-ctx.Done():
		s.out.raw([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`))
		return nil, ctx.Err()
	}
}

// clientResponse delivers the client's answer to one of our requests.
func (s *Session) clientResponse(m Message) {
	s.mu.Lock()
	reply := s.calls[string(m.ID)]
	s.mu.Unlock()
	if reply != nil {
		select {
		case reply <- m:
		default:
		}
	}
}

// clientSupports checks the capabilities the client declared in
// initialize against the request about to be sent to it.
func (s *Session) clientSupports(method string, params json.RawMessage) error {
	caps := s.hs.clientCaps()
	name := s.hs.clientInfo().Name
	if name == "" {
		name = "the MCP client"
	}
	refuse := func(what string) error {
		return &jsonrpc.Error{Code: CodeMethodNotFound,
			Message: fmt.Sprintf("%s did not declare the %s capability, so mcpx cannot forward %s", name, what, method)}
	}
	switch method {
	case string(mcp.MethodSamplingCreateMessage):
		if caps.Sampling == nil {
			return refuse("sampling")
		}
	case string(mcp.MethodElicitationCreate):
		if caps.Elicitation == nil {
			return refuse("elicitation")
		}
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Mode == "url" && caps.Elicitation.URL == nil {
			return refuse("elicitation (url mode)")
		}
	case string(mcp.MethodListRoots):
		if caps.Roots == nil {
			return refuse("roots")
		}
	}
	return nil
}

// notify writes a relayed notification to the client, once it is ready
// for them. It runs on an upstream's reader, so it never waits: see
// outbox.notify.
func (s *Session) notify(method string, params json.RawMessage) {
	if !s.hs.ready.Load() {
		return
	}
	msg := []byte(`{"jsonrpc":"2.0","method":` + quote(method))
	if len(params) > 0 && string(params) != "null" {
		msg = append(append(msg, `,"params":`...), params...)
	}
	s.out.notify(append(msg, '}'))
}

// elicitURL reports whether the client declared URL-mode elicitation.
func (s *Session) elicitURL() bool {
	caps := s.hs.clientCaps()
	return caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// spawn runs f on its own goroutine until the client is gone: ServeLegacy
// waits for it before returning.
func (s *Session) spawn(ctx context.Context, f func(context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(ctx)
	}()
}
