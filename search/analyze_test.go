package search

import (
	"slices"
	"testing"
)

func terms(s string) []string {
	var out []string
	words(s, nil, func(t string) { out = append(out, t) })
	return out
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"read_text_file", []string{"read", "text", "file"}},
		{"get-weather.forecast", []string{"get", "weather", "forecast"}},
		{"getWeatherForecast", []string{"get", "weather", "forecast"}},
		{"HTTPServer", []string{"http", "server"}},
		{"list-directories", []string{"list", "directori"}},
		// Letters and digits apart, and the whole too; one digit alone
		// is no term.
		{"base64", []string{"base", "64", "base64"}},
		{"mp3", []string{"mp", "mp3"}},
		// Stop words, single letters, punctuation.
		{"What's a good way to find it?", []string{"good", "find"}},
		{"bing_search?", []string{"bing", "search"}},
		{"?!.,;", nil},
		// Case and accents.
		{"CAFÉ Café café", []string{"cafe", "cafe", "cafe"}},
		// Chinese, written without spaces: pairs of characters.
		{"搜索结果", []string{"搜索", "索结", "结果"}},
		{"搜", []string{"搜"}},
		{"MCP的中文搜索", []string{"mcp", "的中", "中文", "文搜", "搜索"}},
		// After "sub", the rest is searched too.
		{"subfolders", []string{"subfold", "folder"}},
	} {
		if got := terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHints(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"open notes.txt", []string{"file", "path"}},
		{"cat /etc/hosts", []string{"file", "path"}},
		{"what's in ~/src/?", []string{"directory", "path", "content", "read", "list"}},
		{"see https://example.com/a", []string{"url", "web", "page"}},
		{"mail bob@example.com", []string{"email"}},
		{"visit example.com", []string{"url", "web", "page"}},
		{"add 3.5 and 1,024", nil},
		{"where is my resume", []string{"find", "search", "locate"}},
		{"how big is it", []string{"size"}},
		{"trains to Shanghai tomorrow", []string{"current", "date", "time"}},
		{"", nil},
	} {
		if got := hints(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("hints(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDeprecated(t *testing.T) {
	for _, tt := range []struct {
		title, desc string
		want        bool
	}{
		{"", "Read a file. DEPRECATED: Use read_text_file instead.", true},
		{"", "Deprecated: use v2.", true},
		{"(deprecated) Old search", "", true},
		{"", "This tool is deprecated.", true},
		{"", "Replaces the deprecated search tool.", false},
		{"", "Reads a file.", false},
	} {
		if got := deprecated(tt.title, tt.desc); got != tt.want {
			t.Errorf("deprecated(%q, %q) = %v, want %v", tt.title, tt.desc, got, tt.want)
		}
	}
}

func TestSynonymsAreStems(t *testing.T) {
	// The table is made of words as the analyser makes them, so that a
	// query's stem finds them.
	if got := synonyms("remov"); !slices.Contains(got, "delet") {
		t.Errorf("synonyms(remov) = %q, want delet among them", got)
	}
	if got := synonyms("mkdir"); !slices.Contains(got, "creat") || !slices.Contains(got, "directori") {
		t.Errorf("synonyms(mkdir) = %q, want creat and directori", got)
	}
	// Implied words do not make their targets synonyms of each other.
	if slices.Contains(synonyms("creat"), "directori") {
		t.Error("create stands for directory")
	}
}
