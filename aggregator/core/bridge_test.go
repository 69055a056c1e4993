package core

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// askingCatalog is a legacy source as the bridge sees it: its one tool
// asks the client for an elicitation, then reports progress and answers.
type askingCatalog struct{}

func (askingCatalog) List(context.Context, string) (json.RawMessage, error) { return nil, nil }
func (askingCatalog) Tool(string) (json.RawMessage, bool)                   { return nil, false }
func (askingCatalog) Watch(context.Context, []string, func(string, json.RawMessage)) {
}

func (askingCatalog) Call(ctx context.Context, peer Caller, method string, params json.RawMessage) (json.RawMessage, error) {
	// The progress token here is the first request's, as the source
	// put it back.
	peer.Notify("notifications/progress", json.RawMessage(`{"progressToken":"first","progress":1}`))
	if _, err := peer.Request(ctx, "elicitation/create", json.RawMessage(`{"message":"sure?","requestedSchema":{"type":"object"}}`)); err != nil {
		return nil, err
	}
	peer.Notify("notifications/progress", json.RawMessage(`{"progressToken":"first","progress":2}`))
	return json.RawMessage(`{"content":[]}`), nil
}

// TestBridgeProgressOfRetry: the progress of a call the bridge resumes on
// a retry goes out under the retry's progressToken, not the first
// request's.
func TestBridgeProgressOfRetry(t *testing.T) {
	s, err := NewServer(askingCatalog{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := func(token string) string {
		return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"` + token + `"}`
	}
	var mu sync.Mutex
	var notes []string
	notify := func(b []byte) { mu.Lock(); notes = append(notes, string(b)); mu.Unlock() }
	handle := func(params string) json.RawMessage {
		req, e := Decode(json.RawMessage(`1`), "tools/call", json.RawMessage(params))
		if e != nil {
			t.Fatal(e)
		}
		res, e := s.Handle(context.Background(), req, notify)
		if e != nil {
			t.Fatalf("tools/call: %+v", e)
		}
		return res
	}
	var first struct {
		ResultType    string
		RequestState  string
		InputRequests map[string]json.RawMessage
	}
	json.Unmarshal(handle(`{"name":"t","arguments":{},"_meta":`+meta("first")+`}`), &first)
	if first.ResultType != "input_required" || len(first.InputRequests) != 1 {
		t.Fatalf("first request: %+v, want input_required", first)
	}
	var key string
	for k := range first.InputRequests {
		key = k
	}
	res := handle(`{"name":"t","arguments":{},"requestState":` + quote(first.RequestState) +
		`,"inputResponses":{` + quote(key) + `:{"action":"accept","content":{}}},"_meta":` + meta("retry") + `}`)
	if !strings.Contains(string(res), `"resultType":"complete"`) {
		t.Fatalf("retry: %s, want the result", res)
	}
	mu.Lock()
	defer mu.Unlock()
	var tokens []string
	for _, n := range notes {
		var m struct {
			Params struct{ ProgressToken string } `json:"params"`
		}
		json.Unmarshal([]byte(n), &m)
		tokens = append(tokens, m.Params.ProgressToken)
	}
	if strings.Join(tokens, ",") != "first,retry" {
		t.Errorf("progress went out under %q, want first then retry", tokens)
	}
}
