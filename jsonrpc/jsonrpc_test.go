package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The encoders write what json.Marshal of the same Message writes, byte
// for byte, whatever the strings hold (HTML characters, controls,
// non-ASCII, invalid UTF-8), and keep every digit of a large id.
func TestEncodersMatchMarshal(t *testing.T) {
	strs := []string{"tools/call", "a <b> & \"c\"", "tab\there\nnew", "héllo \u2028 ✓", "bad \xff utf8", ""}
	ids := []json.RawMessage{json.RawMessage(`9007199254740993`), json.RawMessage(`"mcpx-1"`), json.RawMessage(`-0.5e3`)}
	params := json.RawMessage(`{"name":"x","arguments":{"n":12345678901234567890}}`)
	marshal := func(m Message) []byte {
		t.Helper()
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(what string, got, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: %s is not JSON", what, got)
		}
	}
	for _, id := range ids {
		res := json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)
		check("result", AppendResult(nil, id, res), marshal(Message{JSONRPC: Version, ID: id, Result: res}))
		if n := ResultSize(id, res); n != len(AppendResult(nil, id, res)) {
			t.Errorf("ResultSize = %d, the result is %d bytes", n, len(AppendResult(nil, id, res)))
		}
		for _, s := range strs {
			e := &Error{Code: CodeInvalidParams, Message: s, Data: json.RawMessage(`{"why":1}`)}
			eb, _ := json.Marshal(e)
			check("error", AppendError(nil, id, e), marshal(Message{JSONRPC: Version, ID: id, Error: eb}))
			if s != "" {
				check("request", AppendRequest(nil, id, s, params), marshal(Message{JSONRPC: Version, ID: id, Method: s, Params: params}))
				check("notification", AppendNotification(nil, s, params), marshal(Message{JSONRPC: Version, Method: s, Params: params}))
			}
		}
	}
	// No id is a null one; no params, or null ones, are left out.
	check("error without id", AppendError(nil, nil, &Error{Code: CodeParseError, Message: "Parse error"}),
		[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`))
	check("notification without params", AppendNotification(nil, "notifications/initialized", json.RawMessage("null")),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	check("request without params", AppendRequest(nil, json.RawMessage(`1`), "ping", nil),
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	check("NewError", marshal(*NewError(nil, &Error{Code: CodeMethodNotFound, Message: "no"})),
		[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`))
}

// A decoded message keeps its id as sent, and its kind follows from its
// members.
func TestMessageKinds(t *testing.T) {
	for _, c := range []struct {
		line                   string
		request, note, respond bool
	}{
		{`{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}`, true, false, false},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, false, true, false},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, false, true, false},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, false, false, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, false, false, false},
	} {
		var m Message
		if err := json.Unmarshal([]byte(c.line), &m); err != nil {
			t.Fatal(err)
		}
		if m.IsRequest() != c.request || m.IsNotification() != c.note || m.IsResponse() != c.respond {
			t.Errorf("%s: request %v notification %v response %v, want %v %v %v", c.line,
				m.IsRequest(), m.IsNotification(), m.IsResponse(), c.request, c.note, c.respond)
		}
		env, err := ReadEnvelope([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if env.HasID() != m.HasID() || !bytes.Equal(env.ID, m.ID) {
			t.Errorf("%s: envelope id %s (%v), message id %s (%v)", c.line, env.ID, env.HasID(), m.ID, m.HasID())
		}
	}
	var m Message
	_ = json.Unmarshal([]byte(`{"id":18446744073709551617,"result":1}`), &m)
	if IDKey(m.ID) != "18446744073709551617" {
		t.Errorf("IDKey of a large id = %q", IDKey(m.ID))
	}
	if _, err := ReadEnvelope([]byte(`[1]`)); err == nil {
		t.Error("ReadEnvelope took an array")
	}
}

// IDKey matches a number to the same number stringified, and nothing else.
func TestIDKey(t *testing.T) {
	same := [][2]string{{`7`, `"7"`}, {`"a\u0062"`, `"ab"`}, {` 12 `, `12`}}
	for _, p := range same {
		if IDKey(json.RawMessage(p[0])) != IDKey(json.RawMessage(p[1])) {
			t.Errorf("IDKey(%s) = %q, IDKey(%s) = %q", p[0], IDKey(json.RawMessage(p[0])), p[1], IDKey(json.RawMessage(p[1])))
		}
	}
	if IDKey(json.RawMessage(`1`)) == IDKey(json.RawMessage(`10`)) {
		t.Error("1 and 10 share a key")
	}
}

// DecodeError takes the shapes real peers send.
func TestDecodeError(t *testing.T) {
	for raw, want := range map[string]Error{
		`{"code":-32602,"message":"bad","data":{"x":1}}`: {Code: -32602, Message: "bad", Data: json.RawMessage(`{"x":1}`)},
		`{"message":"boom","stack":"at x"}`:              {Message: "boom"},
		`{"error":"Extension not found"}`:                {Message: "Extension not found"},
		`"cursor_invalid"`:                               {Message: "cursor_invalid"},
		`{"code":-32000,"data":null}`:                    {Code: -32000, Message: "error without a message"},
		`{"code":`:                                       {Message: `malformed error: {"code":`},
	} {
		got := DecodeError(json.RawMessage(raw))
		if got.Code != want.Code || got.Message != want.Message || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("DecodeError(%s) = %+v, want %+v", raw, *got, want)
		}
	}
	m := Message{Error: json.RawMessage(`{"code":-32601,"message":"Method not found"}`)}
	if e := m.Err(); e == nil || e.Error() != "Method not found (code -32601)" {
		t.Errorf("Err() = %v", e)
	}
	if (Message{Error: json.RawMessage("null")}).Err() != nil {
		t.Error("a null error decoded to an error")
	}
}

// FuzzAppendError: for any message text, AppendError writes what
// json.Marshal writes.
func FuzzAppendError(f *testing.F) {
	for _, s := range []string{"ok", "<script>", "\u2029", "\x00\x1f", "\xff"} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, msg string, code int) {
		e := &Error{Code: code, Message: msg}
		eb, _ := json.Marshal(e)
		want, _ := json.Marshal(Message{JSONRPC: Version, ID: json.RawMessage(`1`), Error: eb})
		if got := AppendError(nil, json.RawMessage(`1`), e); !bytes.Equal(got, want) {
			t.Errorf("got %s, want %s", got, want)
		}
	})
}
