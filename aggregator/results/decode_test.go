package results

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDecode: decode reads a JSON string as encoding/json does, refusing
// none it accepts and any it refuses that has an escape (a string with
// none is taken as the scan that found it ended it), and decodePrefix
// gives the start of that text, in whole characters, within its limit.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `"a\nb\"c\\d\/e\bf\fg\rh\ti"`, `"\u00e9\u20ac\ud83d\ude00"`, `"\ud83d"`, `"\ud83d\u0041"`,
		`"\ude00\ud83d"`, "\"caf\xc3\xa9 \xff bad\\n\"", `"\u12"`, `"\x"`, "\"ctl\x01\\n\"", `"end\"`, `"\uD83D\uDE00x"`,
	} {
		f.Add([]byte(s), uint16(3))
	}
	f.Fuzz(func(t *testing.T, raw []byte, n uint16) {
		if len(bytes.TrimSpace(raw)) != len(raw) {
			return // a scan gives a value without the space around it
		}
		var want string
		valid := json.Unmarshal(raw, &want) == nil && len(raw) > 0 && raw[0] == '"'
		got, ok := decode(raw)
		if ok != valid && (valid || bytes.IndexByte(raw[1:len(raw)-1], '\\') >= 0) {
			t.Fatalf("decode(%q): ok %v, encoding/json %v", raw, ok, valid)
		}
		if !valid {
			return
		}
		if string(got) != want && utf8.Valid(got) {
			t.Fatalf("decode(%q) = %q, encoding/json %q", raw, got, want)
		}
		p, ok := decodePrefix(raw, int(n))
		if !ok || len(p) > int(n) || string(p) != want[:len(p)] && utf8.Valid(got) {
			t.Fatalf("decodePrefix(%q, %d) = %q, %v; text %q", raw, n, p, ok, want)
		}
		if rest := want[len(p):]; len(p) < int(n) && rest != "" && utf8.Valid(got) {
			if r, size := utf8.DecodeRuneInString(rest); len(p)+size <= int(n) && r != utf8.RuneError {
				t.Fatalf("decodePrefix(%q, %d) = %q stopped before %q, which fits", raw, n, p, r)
			}
		}
	})
}
