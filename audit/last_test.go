package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if got, err := Last(path, 3, nil); err != nil || len(got) != 0 {
		t.Fatalf("no file: %v, %v", got, err)
	}
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `{"server":"s%d","method":"tools/call","tool":"t%d","outcome":"ok"}`+"\n", i%2, i)
	}
	b.WriteString(`{"server":"s0","tool":"cut`) // a line being written
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Last(path, 3, func(l Line) bool { return l.Server == "s0" })
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, l := range got {
		tools = append(tools, l.Tool)
	}
	if strings.Join(tools, " ") != "t4 t6 t8" {
		t.Errorf("last 3 of s0: %v, want t4 t6 t8, oldest first", tools)
	}
}
