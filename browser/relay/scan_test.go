package relay

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestRewriteSplicesTheID(t *testing.T) {
	cases := []struct {
		in, want string
		set      map[string]json.RawMessage
		drop     []string
	}{
		{`{"jsonrpc":"2.0","id":"conn-1:7","result":{"a":[1,"}",{"b":"\""}]}}`, `{"jsonrpc":"2.0","id":7,"result":{"a":[1,"}",{"b":"\""}]}}`,
			map[string]json.RawMessage{"id": json.RawMessage(`7`)}, nil},
		{` { "id" : 1 , "connectionId":"c", "method":"x" } `, `{"id":"c:1","method":"x"}`,
			map[string]json.RawMessage{"id": json.RawMessage(`"c:1"`)}, []string{"connectionId"}},
		{`{"method":"x"}`, `{"method":"x","connectionId":"c","id":"m"}`,
			map[string]json.RawMessage{"id": json.RawMessage(`"m"`), "connectionId": json.RawMessage(`"c"`)}, nil},
		{`{"\u0069d":5,"n":-1.5e3,"t":true,"z":null}`, `{"id":6,"n":-1.5e3,"t":true,"z":null}`,
			map[string]json.RawMessage{"id": json.RawMessage(`6`)}, nil},
	}
	for _, tc := range cases {
		got, err := rewrite(json.RawMessage(tc.in), tc.set, tc.drop...)
		if err != nil || string(got) != tc.want {
			t.Errorf("rewrite(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `[]`, `{"a":1`, `{"a":"x}`, `{"a" 1}`, `{"a":1,}`, `{a:1}`, `"x"`, `{"a":[1,2}`} {
		if _, err := members([]byte(bad)); err == nil {
			t.Errorf("members(%q): no error", bad)
		}
	}
}

// FuzzMembers: on any input the scanner neither panics nor disagrees
// with encoding/json about a valid object's members.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"id":1,"result":{"x":"\\\""}}`, `{"a":[{"b":[]}],"c":"}"}`, `{}`, `{"":0}`, `{"a":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := members(data)
		var want map[string]json.RawMessage
		if !json.Valid(data) || json.Unmarshal(data, &want) != nil {
			return
		}
		if err != nil {
			t.Fatalf("valid object %q: %v", data, err)
		}
		for _, m := range ms {
			w, ok := want[m.key]
			if !ok {
				t.Fatalf("%q: key %q not in encoding/json's view", data, m.key)
			}
			var a, b any
			_ = json.Unmarshal(w, &a)
			_ = json.Unmarshal(data[m.start:m.end], &b)
			if x, y := mustJSON(a), mustJSON(b); !bytes.Equal(x, y) && len(ms) == len(want) {
				t.Fatalf("%q: %q = %s, want %s", data, m.key, y, x)
			}
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
