package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// validCases are inputs Valid must judge as encoding/json does; the fuzz
// test starts from them.
var validCases = []string{
	`{}`, `[]`, ` {"a":1} `, "\t[1,2]\n", `"x"`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `true`, `false`, `null`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"m":"\u00e9\n\"x\""}}}`,
	`{"a":[{"b":[]},{}],"c":{"d":null}}`, "\"\xff\xfe\"", `"\/\b\f\n\r\t\\"`,
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a":1 "b":2}`,
	`{1:2}`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`, `0x10`, `tru`, `nul`, `truex`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\tb\"", "\"a\nb\"", `"abc`, `{"a":1}}`, `[1]]`, `{} {}`, `1 2`, `[1 2]`, `NaN`, `Infinity`, "\x00",
	"{\"a\":1}\x00", `[-]`, `[01]`, `{"a":-01}`, `{"a":1.2.3}`,
}

func TestValid(t *testing.T) {
	for _, in := range validCases {
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", in, got, want)
		}
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, n := range []int{maxDepth, maxDepth + 1} {
		if got, want := Valid([]byte(deep(n))), json.Valid([]byte(deep(n))); got != want {
			t.Errorf("Valid of %d nested arrays = %v, encoding/json says %v", n, got, want)
		}
	}
}

// FuzzValid holds Valid to encoding/json's Valid on every input.
func FuzzValid(f *testing.F) {
	for _, in := range validCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

// BenchmarkValid checks a client's tools/call line, as the read loop does
// for every line, and the same line with encoding/json's Valid in the
// same run: ns/valid and ns/encoding-json per line, and their ratio.
func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"fx_echo","arguments":{"message":"hello, world","count":3,"ratio":0.25,"flags":[true,false,null]},"_meta":{"progressToken":"tok-1"}}}`)
	const per = 100
	var own, std time.Duration
	for b.Loop() {
		start := time.Now()
		for range per {
			Valid(line)
		}
		own += time.Since(start)
		start = time.Now()
		for range per {
			json.Valid(line)
		}
		std += time.Since(start)
	}
	n := float64(b.N * per)
	b.ReportMetric(float64(own.Nanoseconds())/n, "ns/valid")
	b.ReportMetric(float64(std.Nanoseconds())/n, "ns/encoding-json")
	b.ReportMetric(float64(own)/float64(std), "valid/encoding-json")
}
