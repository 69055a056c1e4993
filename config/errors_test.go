package config

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "mcpx.json", Server: "remote", Field: "transport", Msg: `unknown transport "ftp" (want stdio, http or sse)`},
			`config mcpx.json: servers.remote.transport: unknown transport "ftp" (want stdio, http or sse)`},
		{Error{File: "mcpx.json", Server: "remote", Msg: "m"}, "config mcpx.json: servers.remote: m"},
		{Error{File: "mcpx.json", Field: "expose", Msg: "m"}, "config mcpx.json: expose: m"},
		{Error{File: "mcpx.json", Msg: "m"}, "config mcpx.json: m"},
		{Error{Field: "--expose", Msg: "m"}, "config: --expose: m"},
		{Error{Msg: "m"}, "config: m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestParseErrors checks that each problem names the right file, server and
// field.
func TestParseErrors(t *testing.T) {
	env := map[string]string{"SET": "v"}
	srv := func(entry string) string { return `{"servers": {"s": ` + entry + `}}` }
	for _, tc := range []struct {
		name, data    string
		server, field string
		msg           string // a part of the message
	}{
		{"unknown transport", srv(`{"url": "http://h/mcp", "transport": "ftp"}`), "s", "transport", `unknown transport "ftp"`},
		{"unknown type", srv(`{"url": "http://h/mcp", "type": "websocket"}`), "s", "type", `unknown transport "websocket"`},
		{"unknown protocol", srv(`{"command": "c", "protocol": "2026"}`), "s", "protocol", `unknown protocol "2026" (want auto, legacy or modern)`},
		{"protocol not a string", srv(`{"command": "c", "protocol": true}`), "s", "protocol", "want a string"},
		{"modern over sse", srv(`{"url": "http://h/sse", "protocol": "modern"}`), "s", "protocol", "the sse transport is of the legacy era"},
		{"transport not a string", srv(`{"url": "http://h/mcp", "transport": 1}`), "s", "transport", "want a string"},
		{"neither command nor url", srv(`{"args": ["x"]}`), "s", "", "neither command nor url"},
		{"both command and url", srv(`{"command": "c", "url": "http://h/mcp"}`), "s", "", "both command and url"},
		{"sse with command", srv(`{"command": "c", "type": "sse"}`), "s", "type", "needs url"},
		{"stdio with url", srv(`{"url": "http://h/mcp", "transport": "stdio"}`), "s", "transport", "needs command"},
		{"type contradicts transport", srv(`{"url": "http://h/mcp", "transport": "http", "type": "sse"}`), "s", "type", "contradicts"},
		{"empty command", srv(`{"command": ""}`), "s", "command", "empty"},
		{"two overrides onto one name", srv(`{"command": "c", "tools": {"override": {"a": {"name": "x"}, "b": {"name": "x"}}}}`),
			"s", "tools.override.b.name", `"x" is already the new name of "a"`},
		{"override in a profile", `{"servers": {"s": {"command": "c"}}, "profiles": {"p": {"tools": {"override": {}}}}}`,
			"", "profiles.p.tools.override", "belong under a server's tools"},
		{"profile with an unknown server", `{"servers": {"github": {"command": "c"}}, "profiles": {"p": {"servers": ["githb"]}}}`,
			"", "profiles.p.servers[0]", `unknown server "githb"; did you mean github?`},
		{"override not an object", srv(`{"command": "c", "tools": {"override": {"a": "x"}}}`), "s", "tools.override.a", "want an object"},
		{"override annotations not an object", srv(`{"command": "c", "tools": {"override": {"a": {"annotations": true}}}}`),
			"s", "tools.override.a.annotations", "want an object"},
		{"command not a string", srv(`{"command": ["npx"]}`), "s", "command", "want a string, not a list"},
		{"url not http", srv(`{"url": "ftp://h/x"}`), "s", "url", "want an http:// or https:// URL"},
		{"url without host", srv(`{"url": "http:///mcp"}`), "s", "url", "want an http"},
		{"url unparsable", srv(`{"url": "http://[::1/mcp"}`), "s", "url", "not a valid URL"},
		{"timeout not a duration", srv(`{"command": "c", "timeout": "soon"}`), "s", "timeout", "not a duration"},
		{"timeout without unit", srv(`{"command": "c", "timeout": "30"}`), "s", "timeout", "not a duration"},
		{"timeout zero", srv(`{"command": "c", "timeout": 0}`), "s", "timeout", "must be positive"},
		{"timeout negative", srv(`{"command": "c", "timeout": -5}`), "s", "timeout", "must be positive"},
		{"timeout negative duration", srv(`{"command": "c", "timeout": "-1s"}`), "s", "timeout", "must be positive"},
		{"timeout huge", srv(`{"command": "c", "timeout": 1e300}`), "s", "timeout", "out of range"},
		{"timeout bool", srv(`{"command": "c", "timeout": true}`), "s", "timeout", "not a boolean"},
		{"args not a list", srv(`{"command": "c", "args": "-y x"}`), "s", "args", "want a list of strings"},
		{"args with a number", srv(`{"command": "c", "args": ["a", 3]}`), "s", "args[1]", "want a string, not a number"},
		{"env not an object", srv(`{"command": "c", "env": ["A=1"]}`), "s", "env", "want an object of strings"},
		{"env value an object", srv(`{"command": "c", "env": {"A": {"x": 1}}}`), "s", "env.A", "want a string, not an object"},
		{"env value null", srv(`{"command": "c", "env": {"A": null}}`), "s", "env.A", "not null"},
		{"env empty name", srv(`{"command": "c", "env": {"": "x"}}`), "s", "env", "empty name"},
		{"headers not an object", srv(`{"url": "http://h/m", "headers": "Authorization: x"}`), "s", "headers", "want an object"},
		{"header value a list", srv(`{"url": "http://h/m", "headers": {"X-Key": ["a"]}}`), "s", "headers.X-Key", "want a string"},
		{"prefix control character", srv(`{"command": "c", "prefix": "a\u0007b"}`), "s", "prefix", "control character"},
		{"prefix not a string", srv(`{"command": "c", "prefix": 7}`), "s", "prefix", "want a string"},
		{"enabled not a bool", srv(`{"command": "c", "enabled": "yes"}`), "s", "enabled", "want true or false"},
		{"disabled not a bool", srv(`{"command": "c", "disabled": 1}`), "s", "disabled", "want true or false"},
		{"tools not an object", srv(`{"command": "c", "tools": ["a"]}`), "s", "tools", "want an object"},
		{"bad glob", srv(`{"command": "c", "tools": {"allow": ["ok", "a["]}}`), "s", "tools.allow[1]", "bad glob"},
		{"deny not a list", srv(`{"command": "c", "prompts": {"deny": "x"}}`), "s", "prompts.deny", "want a list"},
		{"unterminated reference", srv(`{"command": "c", "env": {"K": "${SET"}}`), "s", "env.K", "unterminated"},
		{"bad reference", srv(`{"command": "c", "args": ["${1X}"]}`), "s", "args[0]", "bad variable reference"},
		{"VS Code input", srv(`{"command": "c", "env": {"K": "${input:key}"}}`), "s", "env.K", "${input:...}"},
		{"disabled server still shape-checked", srv(`{"command": "c", "disabled": true, "timeout": "x"}`), "s", "timeout", "not a duration"},
		{"disabled server bad syntax", srv(`{"command": "c", "disabled": true, "env": {"K": "${"}}`), "s", "env.K", "unterminated"},
		{"server not an object", srv(`"npx server"`), "s", "", "want an object, not a string"},
		{"server null", srv(`null`), "s", "", "want an object, not null"},
		{"servers not an object", `{"servers": ["a"]}`, "", "servers", "want an object of servers"},
		{"mcpServers not an object", `{"mcpServers": 1}`, "", "mcpServers", "want an object of servers"},
		{"empty server name", `{"mcpServers": {"": {"command": "c"}}}`, "", "mcpServers", "empty server name"},
		{"control character in name", `{"servers": {"a\nb": {"command": "c"}}}`, "", "servers", "control character"},
		{"name in both sections", `{"servers": {"x": {"command": "c"}}, "mcpServers": {"x": {"command": "c"}}}`, "x", "", "both servers and mcpServers"},
		{"expose unknown", `{"expose": "all"}`, "", "expose", `unknown expose "all"`},
		{"expose not a string", `{"expose": true}`, "", "expose", "want a string"},
		{"separator control character", `{"separator": "\t"}`, "", "separator", "control character"},
		{"browser not an object", `{"browser": "ws://h"}`, "", "browser", "want an object"},
		{"browser url bad", `{"browser": {"url": "ftp://h"}}`, "", "browser.url", "want ws:// or wss://, not ftp://"},
		{"browser url https", `{"browser": {"url": "https://relay.example/mcp"}}`, "", "browser.url", "want ws:// or wss://, not https://"},
		{"browser token over plain ws", `{"browser": {"url": "ws://relay.example/mcp", "token": "t"}}`, "", "browser.url", "unencrypted over ws:// to relay.example"},
		{"browser listen not loopback", `{"browser": {"listen": "0.0.0.0:5555"}}`, "", "browser.listen", "not a loopback address"},
		{"browser listen lan", `{"browser": {"listen": "192.168.1.5:5555"}}`, "", "browser.listen", "door into your logged-in browser"},
		{"browser listen no port", `{"browser": {"listen": "127.0.0.1"}}`, "", "browser.listen", "want host:port"},
		{"browser extensionIds not a list", `{"browser": {"extensionIds": "abc"}}`, "", "browser.extensionIds", "want a list"},
		{"browser cdp not a bool", `{"browser": {"cdp": "yes"}}`, "", "browser.cdp", "want true or false"},
		{"browser prefix control character", `{"browser": {"prefix": "\u0000"}}`, "", "browser.prefix", "control character"},
		{"top level a list", `[1]`, "", "", "want an object at the top level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("mcpx.json", []byte(tc.data), &LoadOptions{LookupEnv: envMap(env)})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %+v, %v; want an *Error", cfg, err)
			}
			if e.File != "mcpx.json" || e.Server != tc.server || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got %#v\nwant file mcpx.json, server %q, field %q, message with %q", e, tc.server, tc.field, tc.msg)
			}
		})
	}
}

// TestSettingSources checks that an error about expose or separator names
// where the bad value came from.
func TestSettingSources(t *testing.T) {
	bad, tab := "sideways", "\t"
	for _, tc := range []struct {
		name        string
		data        string
		env         map[string]string
		opts        LoadOptions
		file, field string
	}{
		{"file", `{"expose": "sideways"}`, nil, LoadOptions{}, "mcpx.json", "expose"},
		{"env", `{"expose": "direct"}`, map[string]string{"MCPX_EXPOSE": bad}, LoadOptions{}, "", "MCPX_EXPOSE"},
		{"flag", `{"expose": "direct"}`, map[string]string{"MCPX_EXPOSE": "both"}, LoadOptions{Expose: bad}, "", "--expose"},
		{"separator env", `{}`, map[string]string{"MCPX_SEPARATOR": tab}, LoadOptions{}, "", "MCPX_SEPARATOR"},
		{"separator flag", `{}`, nil, LoadOptions{Separator: &tab}, "", "--separator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.LookupEnv = envMap(tc.env)
			_, err := Parse("mcpx.json", []byte(tc.data), &opts)
			var e *Error
			if !errors.As(err, &e) || e.File != tc.file || e.Field != tc.field || e.Server != "" {
				t.Errorf("got %#v, want file %q field %q", err, tc.file, tc.field)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		file, data string
		want       string
	}{
		{"mcpx.json", "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\",}\n    \"b\": 1\n  }\n}",
			`config mcpx.json: line 4, column 5: invalid character '"' after object value (expecting ',' or '}')`},
		{"mcpx.json", "{\n  \"servers\": [1, 2}\n}",
			`config mcpx.json: line 2, column 19: invalid character '}' after array value (expecting ',' or ']')`},
		{"mcpx.json", "{\"servers\": {",
			"config mcpx.json: line 1, column 14: parsing value: unexpected EOF"},
		{"mcpx.json", "{} {}",
			"config mcpx.json: line 1, column 4: invalid character '{' after top-level value"},
		{"config", "{\n\n  x }",
			`config config: line 3, column 3: invalid value (want a string`},
		{"mcpx.json", "{/* unterminated",
			`config mcpx.json: line 1, column 2: parsing comment: unexpected EOF`},
		{"mcpx.toml", "[servers.a]\ncommand = \"x\"\nargs = [1,\n",
			"config mcpx.toml: line 4, column 1: "},
		{"mcpx.toml", "[servers.a]\ncommand = \"x\"\nargs = [\"a\" \"b\"]\n",
			"config mcpx.toml: line 3, column 13: array elements must be separated by commas"},
		// go-toml gives no position for a duplicate key.
		{"mcpx.toml", "[servers.a]\ncommand = \"x\"\ncommand = \"y\"\n",
			"config mcpx.toml: key command is already defined"},
		// yaml.v3 gives the line but not the column.
		{"mcpx.yaml", "servers:\n  a:\n    command: x\n    args: : 1\n",
			"config mcpx.yaml: line 4: mapping values are not allowed in this context"},
		{"mcpx.yaml", "servers:\n\ta: 1\n",
			"config mcpx.yaml: line 2: found character that cannot start any token"},
		{"mcpx.yml", "servers:\n  a: {command: x}\n  a: {command: y}\n",
			`config mcpx.yml: line 3: mapping key "a" already defined at line 2`},
	} {
		_, err := Parse(tc.file, []byte(tc.data), &LoadOptions{LookupEnv: noEnv})
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%s, %q) = %v\nwant an *Error starting %q", tc.file, tc.data, err, tc.want)
		}
	}
}

// TestNoSecretsInMessages proves that no error and no warning holds an env
// value, header value or token, whether written in the file or expanded.
func TestNoSecretsInMessages(t *testing.T) {
	const literal = "lit3ral-s3cret"
	env := map[string]string{"SECRET": "exp4nded-s3cret", "HOST": "h"}
	for _, tc := range []struct{ file, data string }{
		{"a.json", `{"servers": {"s": {"url": "http://u:${SECRET}@[::1/mcp"}}}`},
		{"a.json", `{"servers": {"s": {"url": "http://u:` + literal + `@h:port/mcp"}}}`},
		{"a.json", `{"servers": {"s": {"url": "ftp://` + literal + `@h/${SECRET}"}}}`},
		{"a.json", `{"servers": {"s": {"url": "${SECRET}"}}}`},
		{"a.json", `{"servers": {"s": {"url": "http://h/m", "headers": {"Authorization": ["Bearer ` + literal + `"]}}}}`},
		{"a.json", `{"servers": {"s": {"command": "c", "env": {"A": "${SECRET}", "B": "` + literal + `", "C": "${NOPE}"}, "timeout": "x"}}}`},
		{"a.json", `{"servers": {"s": {"command": "c", "env": {"A": "${` + literal + `}"}}}}`},
		{"a.json", `{"servers": {"s": {"command": "c", "env": {"A": "${SECRET:-` + literal + `"}}}}`},
		{"a.json", `{"servers": {"s": {"command": "c", "env": {"A": "${SECRET}"}, "timeout": "${SECRET}"}}}`},
		{"a.json", `{"servers": {"s": {"command": "c", "env": {"A": {"v": "` + literal + `"}}}}}`},
		{"a.json", `{"browser": {"token": "` + literal + `${"}}`},
		{"a.json", `{"browser": {"token": "${SECRET}", "url": "ftp://` + literal + `"}}`},
		{"a.json", `{"servers": {"s": {"command": "c", "env": {"A": "` + literal + `" "B"}}}}`},
		{"a.toml", "[servers.s]\ncommand = \"c\"\nenv = { A = \"" + literal + "\" B }\n"},
		{"a.toml", "[servers.s]\ncommand = \"c\"\nenv = { A = \"" + literal + "\", A = \"x\" }\n"},
		{"a.yaml", "servers:\n  s:\n    env:\n      A: \"" + literal + "\n"},
		{"a.yaml", "servers:\n  s:\n    env: {A: " + literal + "}\n   x: 1\n"},
		{"a.json", `{"expose": "${SECRET}"}`},
	} {
		_, err := Parse(tc.file, []byte(tc.data), &LoadOptions{LookupEnv: envMap(env)})
		if err == nil {
			t.Errorf("Parse(%s, %q) succeeded; the case must produce an error", tc.file, tc.data)
			continue
		}
		msg := err.Error()
		for _, secret := range []string{literal, env["SECRET"], "s3cret"} {
			if strings.Contains(msg, secret) {
				t.Errorf("Parse(%s, %q) error leaks a secret: %s", tc.file, tc.data, msg)
			}
		}
	}

	// Warnings: unknown keys whose values are secrets.
	cfg := mustParse(t, "w.json", `{"servers": {"s": {"command": "c", "apiKey": "`+literal+`", "env": {"A": "${SECRET}"}}},
		"browser": {"secret": "${SECRET}", "token": "`+literal+`"}}`, env)
	for _, w := range cfg.Warnings {
		if strings.Contains(w, "s3cret") {
			t.Errorf("warning leaks a secret: %s", w)
		}
	}
	if len(cfg.Warnings) != 2 {
		t.Errorf("warnings %q, want two", cfg.Warnings)
	}
}

func TestServerNamedBrowserClashes(t *testing.T) {
	_, err := Parse("c.json", []byte(`{"browser":{"token":"t"},"servers":{"browser":{"command":"x"}}}`), nil)
	var e *Error
	if !errors.As(err, &e) || e.Server != "browser" || !strings.Contains(e.Msg, "browser section") {
		t.Fatalf("got %v", err)
	}
	if _, err := Parse("c.json", []byte(`{"servers":{"browser":{"command":"x"}}}`), nil); err != nil {
		t.Errorf("without a browser section the name is free: %v", err)
	}
}
