package proxytool

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeArgs feeds arbitrary bytes to decodeArgs, as the arguments and
// as the whole params of a call: nothing panics, every error has a message,
// a decoded request is consistent, and Call always answers with a
// CallToolResult that carries decodeArgs' message when it failed.
//
//	go test -run='^$' -fuzz=FuzzDecodeArgs -fuzztime=20s ./proxytool/
func FuzzDecodeArgs(f *testing.F) {
	for _, g := range readGoldens(f) {
		if a := g.section("args"); a != nil {
			f.Add(a)
		}
		if p := g.section("params"); p != nil {
			f.Add(p)
		}
	}
	for _, s := range []string{"", "null", "{}", "[]", `"x"`, "1e999", `{"action":"list","type":"tool","limit":1e308}`,
		`{"action":"list","type":"tool","offset":1e300}`, `{"action":"call","type":"tool","path":"x","args":""}`,
		`{"action":"call","type":"prompt","path":"everything_complex_prompt","args":"{\"temperature\":-1.5e3}"}`,
		`{"action":"list","type":"tool","query":"\u00e9\u0130 \u212a"}`, "{\"action\":\"list\",\"type\":\"tool\",\"filter_server\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	fake := newFake(f)
	p := New(fake)
	ctx := context.Background()

	f.Fuzz(func(t *testing.T, data []byte) {
		sameMembers(t, data)
		sameAnnotated(t, data)
		fake.reset()
		req, err := decodeArgs(data)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("decodeArgs(%q): empty error message", data)
			}
		} else {
			checkRequest(t, data, req)
		}

		checkResult(t, p.Call(ctx, data))

		if !json.Valid(data) {
			return
		}
		got := p.Call(ctx, json.RawMessage(`{"name":"proxy","arguments":`+string(data)+`}`))
		checkResult(t, got)
		if err != nil {
			if want := errorResult(err.Error()); string(got) != string(want) {
				t.Fatalf("Call on %q:\n%s\nwant the decode error\n%s", data, got, want)
			}
		}
	})
}

// checkRequest checks the invariants of a request decodeArgs accepted.
func checkRequest(t *testing.T, data []byte, req request) {
	t.Helper()
	switch req.action {
	case actionList:
		if req.path != "" || !isEmptyObject(req.args) {
			t.Fatalf("decodeArgs(%q): list with path %q or args %s", data, req.path, req.args)
		}
	case actionInfo, actionCall:
		if req.path == "" {
			t.Fatalf("decodeArgs(%q): %s without path", data, req.action)
		}
		if req.limit != defaultLimit || req.offset != 0 || req.filterServer != "" || req.query != "" {
			t.Fatalf("decodeArgs(%q): list parameters kept for %s", data, req.action)
		}
	default:
		t.Fatalf("decodeArgs(%q): action %q", data, req.action)
	}
	switch req.kind {
	case KindTool, KindResource, KindPrompt:
	default:
		t.Fatalf("decodeArgs(%q): type %q", data, req.kind)
	}
	if req.limit < 1 || req.limit > maxLimit || req.offset < 0 {
		t.Fatalf("decodeArgs(%q): limit %d offset %d", data, req.limit, req.offset)
	}
	if req.args != nil {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(req.args, &m); err != nil || m == nil {
			t.Fatalf("decodeArgs(%q): args %s is not an object", data, req.args)
		}
		if req.action == actionCall && req.kind == KindPrompt {
			for k, v := range m {
				if _, ok := stringValue(v); !ok {
					t.Fatalf("decodeArgs(%q): prompt argument %s = %s is not a string", data, k, v)
				}
			}
		}
	}
}

// FuzzQuote checks the hand-written JSON string encoder against
// encoding/json: both must decode to the same string.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ slash /", "\x00\x01\x1f\x7f", "\n\r\t", "<>&", "é日本", "\u2028\u2029", "\xff\xfe bad", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendQuoted(nil, []byte(s))
		var decoded string
		if err := json.Unmarshal(got, &decoded); err != nil {
			t.Fatalf("appendQuoted(%q) = %s: invalid JSON: %v", s, got, err)
		}
		if utf8.ValidString(s) && decoded != s {
			t.Fatalf("appendQuoted(%q) decodes to %q", s, decoded)
		}
		std, _ := json.Marshal(s)
		var stdDecoded string
		_ = json.Unmarshal(std, &stdDecoded)
		if decoded != stdDecoded {
			t.Fatalf("appendQuoted(%q) decodes to %q, encoding/json's to %q", s, decoded, stdDecoded)
		}
	})
}

// sameMembers checks that members splits valid JSON as json.Unmarshal
// into a map does: the same keys, each with the same bytes, and an error
// for anything but an object.
func sameMembers(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) {
		return
	}
	var want map[string]json.RawMessage
	werr := json.Unmarshal(data, &want)
	got, gerr := members(data)
	if (werr == nil && want != nil) != (gerr == nil) {
		t.Fatalf("members(%q): err %v; json.Unmarshal: %v, map %v", data, gerr, werr, want)
	}
	if gerr == nil && !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
		t.Fatalf("members(%q) = %q, json.Unmarshal %q", data, got, want)
	}
}

func TestMembersAsUnmarshal(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1, {"c":2}] } `, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{"a\"b":"x\ny"}`,
		`{"":null}`, "{\"a\xff\":1,\"a\ufffd\":2}", `null`, `[]`, `"x"`, `1`,
	} {
		sameMembers(t, []byte(s))
	}
}
