package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestRenderTableFitsTheWidth(t *testing.T) {
	rows := func() [][]string {
		return [][]string{
			{"everything_echo", "everything", "Echoes back the input string"},
			{"everything_get-env", "everything", "Returns all environment variables, helpful for debugging MCP server configuration"},
			{"x", "s", "two\nlines\tand a tab"},
		}
	}
	for _, width := range []int{200, 80, 60, 40, 20} {
		var b bytes.Buffer
		if err := renderTable(&b, width, []string{"NAME", "SERVER", "DESCRIPTION"}, rows(), false); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 4 {
			t.Fatalf("width %d: %d lines, want a header and 3 rows:\n%s", width, len(lines), b.String())
		}
		for _, l := range lines {
			plain := ansi.Strip(l)
			// 3 columns cut to at least minColumn each need 28 cells.
			if w := ansi.StringWidth(plain); w > max(width, 3*minColumn+2*columnGap) {
				t.Errorf("width %d: line is %d wide: %q", width, w, plain)
			}
			if strings.HasSuffix(plain, " ") {
				t.Errorf("width %d: trailing space: %q", width, plain)
			}
		}
		cut := strings.Contains(b.String(), "…")
		if full := width >= 200; full == cut {
			t.Errorf("width %d: cut %v; want a visible … exactly when a cell does not fit:\n%s", width, cut, b.String())
		}
		if width >= 60 && !strings.Contains(b.String(), "everything_get-env  ") {
			t.Errorf("width %d: the name column was cut before the description:\n%s", width, b.String())
		}
	}

	// A pipe: no header, tab-separated, every cell whole on one line.
	var b bytes.Buffer
	if err := renderTable(&b, 0, []string{"NAME", "SERVER", "DESCRIPTION"}, rows(), false); err != nil {
		t.Fatal(err)
	}
	want := "everything_echo\teverything\tEchoes back the input string\n" +
		"everything_get-env\teverything\tReturns all environment variables, helpful for debugging MCP server configuration\n" +
		"x\ts\ttwo\\nlines\\tand a tab\n"
	if b.String() != want {
		t.Errorf("pipe:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestFirstLineMarksMore(t *testing.T) {
	for in, want := range map[string]string{
		"one line":             "one line",
		"  first\n\nsecond  ":  "first …",
		"\n\n  only later  \n": "only later",
	} {
		if got := firstLine(in); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderTableWrapsTheLastColumn(t *testing.T) {
	desc := "Returns all environment variables, helpful for debugging MCP server configuration"
	var b bytes.Buffer
	rows := [][]string{{"env", "string", "no", desc}, {"a", "number", "yes", "First number"}}
	if err := renderTable(&b, 40, []string{"ARGUMENT", "TYPE", "REQUIRED", "DESCRIPTION"}, rows, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(ansi.Strip(b.String()), "\n"), "\n")
	start := strings.Index(lines[0], "DESCRIPTION")
	var text []string
	for _, l := range lines {
		if ansi.StringWidth(l) > 40 || strings.HasSuffix(l, " ") || strings.Contains(l, "…") {
			t.Errorf("line %q: want at most 40 wide, no trailing space, nothing cut", l)
		}
		if len(l) > start {
			text = append(text, l[start:])
		}
	}
	// Every line of the last column starts under its header, and together
	// they hold both descriptions whole (a word wider than the column,
	// "configuration", is broken inside).
	nospace := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	if got, want := nospace(strings.Join(text, "")), nospace("DESCRIPTION"+desc+"First number"); got != want {
		t.Errorf("last column reads %q, want %q:\n%s", got, want, b.String())
	}
}
