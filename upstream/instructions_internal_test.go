package upstream

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestInstructionsOf: the instructions member of a handshake result is
// kept as a string without hidden text and cut to maxInstructions at a
// rune boundary; one that is no string is dropped (ok false) rather than
// failing the handshake.
func TestInstructionsOf(t *testing.T) {
	euro := strings.Repeat("€", maxInstructions/3+10) // 3 bytes each: 65536 is mid-rune
	for _, tc := range []struct {
		name, raw, want string
		ok              bool
	}{
		{"absent", ``, "", true},
		{"null", `null`, "", true},
		{"plain", `"Use echo.\nThen\tcall add."`, "Use echo.\nThen\tcall add.", true},
		{"hidden", `"Use\u200b echo.\u001b[31m\udb40\udc41\u202e"`, "Use echo.", true},
		{"number", `42`, "", false},
		{"object", `{"text":"x"}`, "", false},
		{"exactly the bound", `"` + strings.Repeat("a", maxInstructions) + `"`, strings.Repeat("a", maxInstructions), true},
		{"one byte over", `"` + strings.Repeat("a", maxInstructions+1) + `"`, strings.Repeat("a", maxInstructions), true},
		{"cut mid-rune", `"` + euro + `"`, euro[:maxInstructions/3*3], true},
		// Cleaned before cut: the hidden characters take none of the bound.
		{"hidden then long", `"` + strings.Repeat("\u200b", 100) + strings.Repeat("a", maxInstructions) + `"`, strings.Repeat("a", maxInstructions), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := instructionsOf(json.RawMessage(tc.raw))
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if got != tc.want {
				t.Errorf("got %d bytes %.40q…, want %d bytes %.40q…", len(got), got, len(tc.want), tc.want)
			}
			if len(got) > maxInstructions || !utf8.ValidString(got) {
				t.Errorf("got %d bytes (valid UTF-8: %v), want at most %d of valid UTF-8", len(got), utf8.ValidString(got), maxInstructions)
			}
		})
	}
}

// TestCleanInstructionsInvalidUTF8: bytes that are not UTF-8 (a cache
// file may hold anything) go, as hidden.String drops them, so the cut
// is still on a rune boundary.
func TestCleanInstructionsInvalidUTF8(t *testing.T) {
	s := "ok\xff\xfe" + strings.Repeat("é", maxInstructions)
	got := cleanInstructions(s)
	if !strings.HasPrefix(got, "okéé") || !utf8.ValidString(got) || len(got) > maxInstructions {
		t.Errorf("got %d bytes starting %.10q (valid UTF-8: %v)", len(got), got, utf8.ValidString(got))
	}
}

// TestInitializeResultInstructions: an initialize result whose
// instructions are no string still reads (mcp-go's own field would fail
// it), and its other members still arrive.
func TestInitializeResultInstructions(t *testing.T) {
	for _, instr := range []string{`42`, `{"a":1}`, `"use echo"`} {
		raw := `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"},"instructions":` + instr + `}`
		var res initializeResult
		if err := json.Unmarshal([]byte(raw), &res); err != nil {
			t.Errorf("instructions %s: %v", instr, err)
			continue
		}
		if string(res.Instructions) != instr || res.ServerInfo.Name != "s" || res.ProtocolVersion != "2025-11-25" || res.Capabilities.Tools == nil {
			t.Errorf("instructions %s: read %+v", instr, res)
		}
	}
}
