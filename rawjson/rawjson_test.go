package rawjson

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	big := strings.Repeat(`a\"b\\`, 1000)
	line := ` {"jsonrpc":"2.0", "id" : "x\"y", "r\u0065sult":{"content":[{"text":"` + big + `"}],"n":[1,{"a":"}"}]},"e":-1.5e3,"t":true,"z":null} `
	want := map[string]string{}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range m {
		want[k] = string(v)
	}
	got := map[string]string{}
	if err := Members([]byte(line), func(k string, v []byte) bool { got[k] = string(v); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d members, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %.80s, want %.80s", k, got[k], v)
		}
	}
	if v, _ := Get([]byte(line), "id"); string(v) != `"x\"y"` {
		t.Errorf("Get id = %s", v)
	}
	if s, ok := String([]byte(`"x\"y"`)); !ok || s != `x"y` {
		t.Errorf("String = %q %v", s, ok)
	}
}

func TestMembersRejects(t *testing.T) {
	for _, bad := range []string{``, `[]`, `"s"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":"x}`, `{"a":{"b":1}`, `{"a":1} x`, `{"a":1 "b":2}`, `this is not json`} {
		if err := Members([]byte(bad), func(string, []byte) bool { return true }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, good := range []string{`{}`, ` { } `, `{"a":[]}`, `{"a":""}`} {
		if err := Members([]byte(good), func(string, []byte) bool { return true }); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

func TestReplace(t *testing.T) {
	out, found, err := Replace([]byte(`{"name": "a_b" ,"arguments":{"name":"keep"}}`), "name", []byte(`"b"`))
	if err != nil || !found || string(out) != `{"name": "b" ,"arguments":{"name":"keep"}}` {
		t.Errorf("Replace = %s %v %v", out, found, err)
	}
	if _, found, _ := Replace([]byte(`{"x":1}`), "name", []byte(`"b"`)); found {
		t.Error("Replace found a member that is not there")
	}
}

func TestSet(t *testing.T) {
	for _, c := range []string{``, `{}`, ` { } `, `{"a":2}`, `{"a":2,"k":"x"}`} {
		var in []byte
		if c != "" {
			in = []byte(c)
		}
		got, err := Set(in, "k", []byte("1"))
		if err != nil {
			t.Errorf("Set(%q): %v", c, err)
			continue
		}
		var v map[string]any
		if json.Unmarshal(got, &v) != nil || v["k"] != 1.0 {
			t.Errorf("Set(%q) = %q, not an object with k 1", c, got)
		}
	}
}

// TestScanKeys: keys compare as they read, escapes included, and reading
// an envelope's members allocates nothing when they are written plainly.
func TestScanKeys(t *testing.T) {
	b := []byte(`{"jsonrpc":"2.0","\u0069d":7,"method":"tools/call"}`)
	var id, method []byte
	err := Scan(b, func(k Key, v []byte) bool {
		switch {
		case k.Is("id"):
			id = v
		case k.Is("method"):
			method = v
		}
		return true
	})
	if err != nil || string(id) != "7" || string(method) != `"tools/call"` {
		t.Fatalf("Scan: id %s method %s err %v", id, method, err)
	}
	plain := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`)
	allocs := testing.AllocsPerRun(100, func() {
		_ = Scan(plain, func(k Key, v []byte) bool { return !k.Is("params") })
		_, _ = Get(plain, "params")
	})
	if allocs != 0 {
		t.Errorf("Scan and Get allocate %.0f times per message, want 0", allocs)
	}
}

// TestKeyIs: a key reads as what it says, escapes decoded, whether it is
// shorter, as long as or longer than the name it is compared with.
func TestKeyIs(t *testing.T) {
	for _, tc := range []struct {
		q, key string
		want   bool
	}{
		{`"_meta"`, "_meta", true},
		{`"_met\u0061"`, "_meta", true},
		{`"\u005fmeta"`, "_meta", true},
		{`"_meta"`, "_met", false},
		{`"_met"`, "_meta", false},
		{`"_metb"`, "_meta", false},
		{`"a\\b"`, `a\b`, true},
		{`"a\nb"`, `a\nb`, false}, // a newline, not a backslash and an n
		{`"a\nb"`, "a\nb", true},
		{`""`, "", true},
	} {
		if got := Key(tc.q).Is(tc.key); got != tc.want {
			t.Errorf("Key(%s).Is(%q) = %v, want %v", tc.q, tc.key, got, tc.want)
		}
	}
}

func TestScanBounds(t *testing.T) {
	b := []byte(` { "a" : [1, {"b":2}] , "m":{"k":"}"} }`)
	got := map[string]string{}
	err := ScanBounds(b, func(k Key, start, end int) bool {
		got[string(k)] = string(b[start:end])
		return true
	})
	want := map[string]string{`"a"`: `[1, {"b":2}]`, `"m"`: `{"k":"}"}`}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ScanBounds: %q, %v; want %q", got, err, want)
	}
	if err := ScanBounds([]byte(`[1]`), func(Key, int, int) bool { return true }); err != ErrNotObject {
		t.Errorf("ScanBounds of an array: %v, want ErrNotObject", err)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "tools/call", "mcpx-progress-12", `say "hi"`, `a\b`, "tab\there", "\x7f", "é", "<&>", "\u2028"} {
		got := AppendString([]byte("x"), s)
		if got[0] != 'x' {
			t.Fatalf("AppendString(%q) lost the prefix: %s", s, got)
		}
		var back string
		if err := json.Unmarshal(got[1:], &back); err != nil || back != s {
			t.Errorf("AppendString(%q) = %s: decodes to %q, %v", s, got[1:], back, err)
		}
	}
}

// TestElements: the elements of an array come as their raw bytes, nested
// and spaced ones included, and anything but one array is refused.
func TestElements(t *testing.T) {
	for in, want := range map[string][]string{
		`[]`:                                     nil,
		` [ ] `:                                  nil,
		`[1]`:                                    {`1`},
		` [ {"a":[1,"]"]} , "x,y" ,null,[[]] ] `: {`{"a":[1,"]"]}`, `"x,y"`, `null`, `[[]]`},
	} {
		var got []string
		if err := Elements([]byte(in), func(v []byte) bool { got = append(got, string(v)); return true }); err != nil {
			t.Errorf("Elements(%s): %v", in, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Elements(%s) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{``, `{}`, `[1,]`, `[1 2]`, `[1`, `[1]x`, `["a]`, `[,1]`} {
		if err := Elements([]byte(in), func([]byte) bool { return true }); err != ErrNotArray {
			t.Errorf("Elements(%s) = %v, want ErrNotArray", in, err)
		}
	}
	n := 0
	Elements([]byte(`[1,2,3]`), func([]byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Elements went on after f returned false: %d calls", n)
	}
}

// TestGetEach: each key gets its own member's value, the last of a
// repeated one, nil for one the object lacks (also where vals held
// something before), and a value is not mistaken for a key.
func TestGetEach(t *testing.T) {
	b := []byte(`{"a":1,"b":{"a":2},"\u0063":"x","a":3}`)
	vals := [][]byte{[]byte("stale"), nil, nil, []byte("stale")}
	if err := GetEach(b, []string{"a", "b", "c", "d"}, vals); err != nil {
		t.Fatal(err)
	}
	want := []string{"3", `{"a":2}`, `"x"`, ""}
	for i, w := range want {
		if string(vals[i]) != w || w == "" && vals[i] != nil {
			t.Errorf("key %d: %q, want %q", i, vals[i], w)
		}
	}
	if err := GetEach([]byte(`["a"]`), []string{"a"}, vals[:1]); err == nil {
		t.Error("an array: no error")
	}
}
