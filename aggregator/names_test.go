package aggregator

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// clientName is the name pattern common MCP clients accept.
var clientName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// hashed matches a name made valid: the cleaned text, '_', six hex digits.
var hashed = regexp.MustCompile(`^(.*)_([0-9a-f]{6})$`)

func TestExposedNameValidUnchanged(t *testing.T) {
	long64 := strings.Repeat("x", 64-len("p_")) // "p_" + this is exactly 64
	tests := []struct {
		prefix, sep, name string
		want              string
	}{
		{"", "_", "echo", "echo"},
		{"", "_", "get-weather_2", "get-weather_2"},
		{"everything", "_", "echo", "everything_echo"},
		{"a", "-", "get-x", "a-get-x"},
		{"a", "__", "b", "a__b"},
		{"a", "", "b", "ab"},
		{"p", "_", long64, "p_" + long64},
		{"", "_", strings.Repeat("Z", 64), strings.Repeat("Z", 64)},
	}
	for _, tt := range tests {
		if got, provisional := exposedName(tt.prefix, tt.sep, tt.name); got != tt.want || provisional {
			t.Errorf("exposedName(%q, %q, %q) = %q, %v; want %q, false", tt.prefix, tt.sep, tt.name, got, provisional, tt.want)
		}
	}
}

// TestExposedNameCleaned: a name a client would reject is made valid by
// replacing each bad byte with '_', and no more while it fits: the
// catalog adds a hash only when the cleaned name is contested.
func TestExposedNameCleaned(t *testing.T) {
	tests := []struct{ prefix, sep, name, want string }{
		{"my server", "_", "echo", "my_server_echo"},
		{"a", "_", "x.y", "a_x_y"},
		{"", "_", "héllo", "h__llo"},
		{"a", ".", "b", "a_b"},
		{"p", "_", strings.Repeat("a.", 31), "p_" + strings.Repeat("a_", 31)}, // 64 long
	}
	for _, tt := range tests {
		if got, provisional := exposedName(tt.prefix, tt.sep, tt.name); got != tt.want || !provisional {
			t.Errorf("exposedName(%q, %q, %q) = %q, %v; want %q, true", tt.prefix, tt.sep, tt.name, got, provisional, tt.want)
		}
	}
}

func TestHashedName(t *testing.T) {
	tests := []struct {
		prefix, sep, name string
		// clean is the text before the hash suffix.
		clean string
	}{
		{"a", "_", "x.y", "a_x_y"},
		{"srv", "_", "path/to/tool", "srv_path_to_tool"},
		{"", "_", "two words", "two_words"},
		{"", "_", "héllo", "h__llo"}, // é is two bytes, each replaced
		{"", "_", "日本", "______"},
		{"a", ".", "b", "a_b"}, // an invalid separator is cleaned too
		{"my server", "_", "t", "my_server_t"},
		{"", "_", "tab\there", "tab_here"},
	}
	for _, tt := range tests {
		got := hashedName(tt.prefix, tt.sep, tt.name)
		if !clientName.MatchString(got) {
			t.Errorf("hashedName(%q, %q, %q) = %q: not a valid client name", tt.prefix, tt.sep, tt.name, got)
			continue
		}
		m := hashed.FindStringSubmatch(got)
		if m == nil || m[1] != tt.clean {
			t.Errorf("hashedName(%q, %q, %q) = %q, want %q + \"_\" + 6 hex digits", tt.prefix, tt.sep, tt.name, got, tt.clean)
		}
	}
}

// TestHashedNameGolden pins a few results: the hash must be the same on
// every run and every machine, since clients remember tool names.
func TestHashedNameGolden(t *testing.T) {
	tests := []struct{ prefix, sep, name, want string }{
		{"a", "_", "x.y", "a_x_y_f91b7e"},
		{"server.name", "/", "tool one", "server_name_tool_one_9d02e3"},
		{"", "_", "héllo", "h__llo_3c4859"},
	}
	for _, tt := range tests {
		if got := hashedName(tt.prefix, tt.sep, tt.name); got != tt.want {
			t.Errorf("hashedName(%q, %q, %q) = %q, want %q", tt.prefix, tt.sep, tt.name, got, tt.want)
		}
	}
}

func TestExposedNameShortened(t *testing.T) {
	tests := []struct {
		desc              string
		prefix, sep, name string
	}{
		{"valid but 65 long", "", "_", strings.Repeat("a", 65)},
		{"prefix makes it too long", "prefix", "_", strings.Repeat("b", 60)},
		{"long and invalid", "p", "_", strings.Repeat("a.b/", 40)},
		{"very long", "", "_", strings.Repeat("x", 10000)},
		{"long unicode", "", "_", strings.Repeat("é", 100)},
	}
	for _, tt := range tests {
		got, _ := exposedName(tt.prefix, tt.sep, tt.name)
		if len(got) != maxNameLen || !clientName.MatchString(got) {
			t.Errorf("%s: exposedName = %q (len %d), want a valid name of exactly 64", tt.desc, got, len(got))
		}
		if !hashed.MatchString(got) {
			t.Errorf("%s: exposedName = %q, want a hash suffix", tt.desc, got)
		}
	}
}

func TestExposedNameStable(t *testing.T) {
	inputs := [][3]string{
		{"", "_", "echo"},
		{"a", "_", "x.y"},
		{"", "_", strings.Repeat("q", 100)},
		{"π", "·", "ツール"},
	}
	for _, in := range inputs {
		first, _ := exposedName(in[0], in[1], in[2])
		for range 5 {
			if got, _ := exposedName(in[0], in[1], in[2]); got != first {
				t.Fatalf("exposedName%q = %q, then %q", in, first, got)
			}
		}
	}
}

// TestHashedNameDistinct checks that names which clean up to the same text,
// or share the first 57 characters, still get different results.
func TestHashedNameDistinct(t *testing.T) {
	groups := [][]string{
		{"a.b", "a/b", "a b", "a:b", "a_b", "a\xffb"}, // \xff: not even UTF-8
		{"x.y.z", "x/y/z", "x_y.z"},
		{strings.Repeat("n", 70) + "1", strings.Repeat("n", 70) + "2", strings.Repeat("n", 71)},
		{strings.Repeat("n", 57) + ".", strings.Repeat("n", 57) + "/"},
	}
	for _, names := range groups {
		seen := map[string]string{}
		for _, name := range names {
			got := hashedName("", "_", name)
			if other, dup := seen[got]; dup {
				t.Errorf("%q and %q both became %q", other, name, got)
			}
			seen[got] = name
		}
	}
}

func FuzzExposedName(f *testing.F) {
	f.Add("", "_", "echo")
	f.Add("everything", "_", "echo")
	f.Add("a", "_", "x.y")
	f.Add("", "_", "")
	f.Add("a", ".", "b")
	f.Add("", "_", "héllo")
	f.Add("p", "_", strings.Repeat("a", 80))
	f.Add("\x00", "\xff", "\n")
	f.Fuzz(func(t *testing.T, prefix, sep, name string) {
		got, _ := exposedName(prefix, sep, name)
		if !clientName.MatchString(got) {
			t.Fatalf("exposedName(%q, %q, %q) = %q: not a valid client name", prefix, sep, name, got)
		}
		if h := hashedName(prefix, sep, name); !clientName.MatchString(h) {
			t.Fatalf("hashedName(%q, %q, %q) = %q: not a valid client name", prefix, sep, name, h)
		}
		if again, _ := exposedName(prefix, sep, name); again != got {
			t.Fatalf("exposedName(%q, %q, %q) = %q, then %q", prefix, sep, name, got, again)
		}
		full := name
		if prefix != "" {
			full = prefix + sep + name
		}
		if clientName.MatchString(full) && got != full {
			t.Fatalf("exposedName(%q, %q, %q) = %q, want the valid %q unchanged", prefix, sep, name, got, full)
		}
	})
}

// TestBuildCleanedNames: a cleaned name is kept while nothing else has or
// cleans up to it; otherwise it takes its hashed name, whichever server
// comes first, and the valid name keeps its own.
func TestBuildCleanedNames(t *testing.T) {
	tests := []struct {
		desc    string
		members func(tb testing.TB) []*member
		want    []string // the tools' exposed names, in catalog order
	}{
		{
			desc: "alone: no hash",
			members: func(tb testing.TB) []*member {
				return []*member{mem(&fakeSource{name: "my server", tools: raws(tb, toolJSON("echo"), toolJSON("get.x"))}, "my server")}
			},
			want: []string{"my_server_echo", "my_server_get_x"},
		},
		{
			desc: "a valid name later keeps it",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "my server", tools: raws(tb, toolJSON("echo"))}, "my server"),
					mem(&fakeSource{name: "my_server", tools: raws(tb, toolJSON("echo"))}, "my_server"),
				}
			},
			want: []string{hashedName("my server", "_", "echo"), "my_server_echo"},
		},
		{
			desc: "a valid name earlier keeps it",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "my_server", tools: raws(tb, toolJSON("echo"))}, "my_server"),
					mem(&fakeSource{name: "my server", tools: raws(tb, toolJSON("echo"))}, "my server"),
				}
			},
			want: []string{"my_server_echo", hashedName("my server", "_", "echo")},
		},
		{
			desc: "two names that clean up alike both get a hash",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("do.it"), toolJSON("ok"))}, ""),
					mem(&fakeSource{name: "b", tools: raws(tb, toolJSON("do/it"))}, ""),
				}
			},
			want: []string{hashedName("", "_", "do.it"), "ok", hashedName("", "_", "do/it")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			members := tt.members(t)
			c := build(members, "_", nil, nil)
			if got := names(c.Tools); strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("tools = %q, want %q", got, tt.want)
			}
			for _, e := range c.Tools {
				if got, ok := c.Tool(e.Name); !ok || got != e {
					t.Errorf("Tool(%q) does not find its entry", e.Name)
				}
				var obj struct{ Name string }
				if json.Unmarshal(e.JSON, &obj) != nil || obj.Name != e.Name {
					t.Errorf("%q is listed as %s", e.Name, e.JSON)
				}
			}
			if len(c.Collisions) != 0 {
				t.Errorf("collisions: %v", c.Collisions)
			}
			assertAccounted(t, members, c)
		})
	}
}
