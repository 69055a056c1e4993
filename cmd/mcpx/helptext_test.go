package main

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// placeholder is what a flag's argument name may be: pflag takes the
// first backquoted word of a usage as the name, so a backquoted command
// line there becomes one by accident ("--server-url mcpx serve --http").
var placeholder = regexp.MustCompile(`^[A-Z][A-Z0-9_]*(=[A-Z][A-Z0-9_]*)?$`)

// walkFlags calls f with every command's own flags and the root's
// persistent ones.
func walkFlags(cmd *cobra.Command, f func(*cobra.Command, *pflag.Flag)) {
	cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) { f(cmd, fl) })
	for _, sub := range cmd.Commands() {
		walkFlags(sub, f)
	}
}

// Every flag's argument name in help is a placeholder (URL, ADDR,
// KEY=VALUE), and no flag that is off unless given shows a default as if
// it were on (issue 31, item 11).
func TestHelpFlagNames(t *testing.T) {
	root := newRootCmd(&streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	walkFlags(root, func(cmd *cobra.Command, fl *pflag.Flag) {
		where := cmd.CommandPath() + " --" + fl.Name
		if name, _ := pflag.UnquoteUsage(fl); strings.Contains(fl.Usage, "`") && !placeholder.MatchString(name) {
			t.Errorf("%s: help shows its argument as %q, from the backquotes in %q", where, name, fl.Usage)
		}
		// An optional value (--http [ADDR]): the flag is off unless given,
		// so help must not print the value it takes alone as a default.
		if fl.NoOptDefVal != "" && fl.Value.Type() != "bool" && fl.DefValue != "" {
			t.Errorf("%s: help shows (default %q) for a flag that is off unless given", where, fl.DefValue)
		}
	})

	out, _, code := runCLI(t, "", "serve", "--help")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "--http") && strings.Contains(l, "serve MCP over HTTP") {
			line = l
		}
	}
	if code != 0 || line == "" || strings.Contains(line, "(default") || !strings.Contains(line, `--http ADDR[="127.0.0.1:7777"]`) {
		t.Errorf("serve --help: exit %d, --http line %q; want ADDR with the address it takes alone, and no default", code, line)
	}
	out, _, _ = runCLI(t, "", "list", "--help")
	if !strings.Contains(out, "--server-url URL ") {
		t.Errorf("list --help does not name --server-url's argument URL:\n%s", out)
	}
}

// info shows the fields of an array's object items and of an object,
// nested under the argument's name (issue 31, item 11).
func TestInfoNestedArguments(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx", "--nested-tool")}})
	out, errOut, code := runCLI(t, "", "info", "fx_create-entities", "--config", cfg)
	if code != 0 {
		t.Fatalf("info: exit %d\n%s", code, errOut)
	}
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, "\t"); len(f) >= 3 && strings.HasPrefix(f[0], "entities") {
			rows = append(rows, strings.Join(f[:3], " "))
		}
	}
	want := []string{
		"entities object[] yes",
		"entities[].entityType string yes",
		"entities[].name string yes",
		"entities[].observations string[] no",
		"entities[].source object no",
		"entities[].source.url string yes",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("info rows:\n%s\nwant:\n%s\nfull output:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"), out)
	}
}
