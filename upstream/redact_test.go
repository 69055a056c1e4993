package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/config"
)

func redactingClient() *Client {
	return New(config.Server{Name: "s"}, &Options{Redact: func(s string) string {
		return strings.ReplaceAll(s, "sk-secret", "[redacted]")
	}})
}

// TestRedactErr: what leaves Request is redacted, and errors.Is/As still
// see the original.
func TestRedactErr(t *testing.T) {
	c := redactingClient()
	rpc := c.redactErr(&RPCError{Code: -32602, Message: "bad key sk-secret", Data: json.RawMessage(`{"key":"sk-secret"}`)})
	var got *RPCError
	if !errors.As(rpc, &got) || got.Code != -32602 || got.Message != "bad key [redacted]" || string(got.Data) != `{"key":"[redacted]"}` {
		t.Errorf("RPC error = %#v", rpc)
	}
	wrapped := c.redactErr(fmt.Errorf("post https://x/?k=sk-secret: %w", context.DeadlineExceeded))
	if strings.Contains(wrapped.Error(), "sk-secret") || !errors.Is(wrapped, context.DeadlineExceeded) {
		t.Errorf("wrapped error = %v (Is deadline: %v)", wrapped, errors.Is(wrapped, context.DeadlineExceeded))
	}
	plain := errors.New("nothing secret")
	if c.redactErr(plain) != plain {
		t.Error("an error without secrets was replaced")
	}
}

func TestRedactResult(t *testing.T) {
	c := redactingClient()
	for _, tc := range []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"key sk-secret"}],"isError":true}`, `{"content":[{"type":"text","text":"key [redacted]"}],"isError":true}`},
		{`{"content":[{"type":"text","text":"key sk-secret"}], "isError" : true}`, `{"content":[{"type":"text","text":"key [redacted]"}], "isError" : true}`},
		// Successful results pass untouched: a tool may return the value.
		{`{"content":[{"type":"text","text":"key sk-secret"}]}`, `{"content":[{"type":"text","text":"key sk-secret"}]}`},
		{`{"content":[{"type":"text","text":"key sk-secret"}],"isError":false}`, `{"content":[{"type":"text","text":"key sk-secret"}],"isError":false}`},
		{`{"content":[{"type":"text","text":"\"isError\":true sk-secret"}]}`, `{"content":[{"type":"text","text":"\"isError\":true sk-secret"}]}`},
	} {
		if got := string(c.redactResult(json.RawMessage(tc.in))); got != tc.want {
			t.Errorf("redactResult(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
