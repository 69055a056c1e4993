package config

import (
	"reflect"
	"testing"
)

func TestFilterAllows(t *testing.T) {
	for _, tc := range []struct {
		f    Filter
		name string
		want bool
	}{
		{Filter{}, "anything", true},
		{Filter{Allow: []string{"echo", "get-*"}}, "echo", true},
		{Filter{Allow: []string{"echo", "get-*"}}, "get-sum", true},
		{Filter{Allow: []string{"echo", "get-*"}}, "put-sum", false},
		{Filter{Allow: []string{"echo"}}, "echoes", false},
		{Filter{Deny: []string{"rm*"}}, "rmdir", false},
		{Filter{Deny: []string{"rm*"}}, "ls", true},
		{Filter{Allow: []string{"*"}, Deny: []string{"secret"}}, "secret", false},
		{Filter{Allow: []string{"secret"}, Deny: []string{"secret"}}, "secret", false},
		{Filter{Allow: []string{"file?"}}, "file1", true},
		{Filter{Allow: []string{"[ab]*"}}, "beta", true},
		{Filter{Allow: []string{"[ab]*"}}, "gamma", false},
		{Filter{Allow: []string{"["}}, "[", false}, // a bad pattern matches nothing
	} {
		if got := tc.f.Allows(tc.name); got != tc.want {
			t.Errorf("%+v.Allows(%q) = %v, want %v", tc.f, tc.name, got, tc.want)
		}
		if why := tc.f.Excludes(tc.name); (why == "") != tc.want {
			t.Errorf("%+v.Excludes(%q) = %q, but Allows says %v", tc.f, tc.name, why, tc.want)
		}
	}
}

func TestFilterExcludes(t *testing.T) {
	for _, tc := range []struct {
		f    Filter
		name string
		want string
	}{
		{Filter{Deny: []string{"rm*"}}, "rmdir", "deny"},
		{Filter{Allow: []string{"echo"}}, "rmdir", "allow"},
		{Filter{Allow: []string{"secret"}, Deny: []string{"secret"}}, "secret", "deny"},
		{Filter{Allow: []string{"echo"}, Deny: []string{"rm*"}}, "echo", ""},
	} {
		if got := tc.f.Excludes(tc.name); got != tc.want {
			t.Errorf("%+v.Excludes(%q) = %q, want %q", tc.f, tc.name, got, tc.want)
		}
	}
}

func TestSecrets(t *testing.T) {
	cfg := mustParse(t, "s.json", `{
		"servers": {
			"a": {"command": "c", "args": ["--db=${DB:-postgres://u:pw@h/db}", "--user=${USER_NAME}"],
			      "env": {"K": "key-1", "DUP": "tok-2", "EMPTY": ""}},
			"b": {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer tok-2", "X-Dup": "key-1"}},
			"off": {"command": "c", "disabled": true, "env": {"OFF": "${UNSET}", "OFF2": "off-3"}}
		},
		"browser": {"token": "tok-2"}
	}`, map[string]string{"USER_NAME": "bob", "HOST": "example.com"})
	want := []string{"Bearer tok-2", "bob", "example.com", "key-1", "off-3", "postgres://u:pw@h/db", "tok-2"}
	if got := cfg.Secrets(); !reflect.DeepEqual(got, want) {
		t.Errorf("Secrets() = %q\nwant %q", got, want)
	}
	// Credentials in URLs: user info and query values, raw and decoded.
	urls := mustParse(t, "u.json", `{
		"servers": {
			"q": {"url": "https://mcp.example/mcp?api_key=qk%2Fsecret&mode=x"},
			"u": {"url": "https://alice:p%40ss-word@mcp.example/mcp"}
		},
		"browser": {"url": "wss://relay.example/mcp?token=relay-tok"}
	}`, nil)
	want = []string{"alice", "p%40ss-word", "p@ss-word", "qk%2Fsecret", "qk/secret", "relay-tok", "x"}
	if got := urls.Secrets(); !reflect.DeepEqual(got, want) {
		t.Errorf("URL Secrets() = %q\nwant %q", got, want)
	}
	if got := (&Config{}).Secrets(); len(got) != 0 {
		t.Errorf("empty config Secrets() = %q", got)
	}
	hand := &Config{Browser: &Browser{Token: "t"}, Servers: []Server{{Env: map[string]string{"A": "e"}}}}
	if got := hand.Secrets(); !reflect.DeepEqual(got, []string{"e", "t"}) {
		t.Errorf("hand-built config Secrets() = %q", got)
	}
}
