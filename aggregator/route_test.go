package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// askable is a served client that declared sampling or not, and records
// the questions it is asked.
func askable(a *Aggregator, name string, sampling bool, asked *[]string) *listener {
	l := &listener{owner: name, conn: askConn{name, sampling, asked}}
	a.listeners.Store(l, struct{}{})
	return l
}

type askConn struct {
	name     string
	sampling bool
	asked    *[]string
}

func (c askConn) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	*c.asked = append(*c.asked, c.name)
	return json.RawMessage(`{}`), nil
}

func (c askConn) Can(method string, _ json.RawMessage) bool {
	return method != string(mcp.MethodSamplingCreateMessage) || c.sampling
}
func (askConn) Notify(string, json.RawMessage) {}
func (askConn) ElicitURL() bool                { return false }
func (askConn) ListChanged([]Kind)             {}

// TestQuestionsGoToAClientThatCanAnswer: an upstream's sampling request
// goes to the one client with a call in flight on it (the call caused
// it); where that cannot be known (several in flight, or none), only to
// a client that declared sampling, even when another called the upstream
// last; with none that did, the upstream gets the protocol's error at
// once, naming the method, and no client is asked.
func TestQuestionsGoToAClientThatCanAnswer(t *testing.T) {
	a := New(&config.Config{Separator: "_", Expose: config.ExposeDirect}, &Options{Serving: true})
	var asked []string
	ask := func() error {
		t.Helper()
		_, err := a.serverRequest(context.Background(), "fx", string(mcp.MethodSamplingCreateMessage), json.RawMessage(`{}`))
		return err
	}
	mute := askable(a, "mute", false, &asked)

	// Only a client that cannot answer: refused at once, no one asked.
	err := ask()
	var re *upstream.RPCError
	if !errors.As(err, &re) || re.Code != mcp.METHOD_NOT_FOUND || !strings.Contains(re.Message, "sampling/createMessage") {
		t.Fatalf("no client declared sampling: %v, want method not found naming sampling/createMessage", err)
	}
	if len(asked) != 0 {
		t.Fatalf("asked %v, want no one", asked)
	}

	able := askable(a, "able", true, &asked)
	for range 20 { // whatever order Range visits them in
		asked = asked[:0]
		if err := ask(); err != nil || len(asked) != 1 || asked[0] != "able" {
			t.Fatalf("no call in flight: asked %v (%v), want able", asked, err)
		}
	}

	// The mute client called fx last, with both in flight: the cause is
	// unknown, so it goes to the one that can answer.
	endAble := a.callers.begin("fx", able)
	endMute := a.callers.begin("fx", mute)
	asked = asked[:0]
	if err := ask(); err != nil || len(asked) != 1 || asked[0] != "able" {
		t.Errorf("two calls in flight, the mute client's last: asked %v (%v), want able", asked, err)
	}
	// Only the mute client's call in flight: it caused the question, and
	// answers it as it can.
	endAble()
	asked = asked[:0]
	if err := ask(); err != nil || len(asked) != 1 || asked[0] != "mute" {
		t.Errorf("the mute client's call alone in flight: asked %v (%v), want mute", asked, err)
	}
	endMute()
	// None in flight, the mute client last: to the one that can.
	asked = asked[:0]
	if err := ask(); err != nil || len(asked) != 1 || asked[0] != "able" {
		t.Errorf("no call in flight, the mute client's last: asked %v (%v), want able", asked, err)
	}
}
