package upstream_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/hidden"
	"github.com/mcpx/mcpx/upstream"
)

// fixtureInstructions is what the fixture is told to send as its
// instructions.
const fixtureInstructions = "Use echo to say something back.\nsleep waits."

// TestInstructionsBothEras: the instructions a server sends arrive in
// both eras, from initialize and from server/discover: from the fixture
// over stdio, legacy and (--modern) modern-only, and from the Go SDK over
// HTTP, which speaks both and sends them in each.
func TestInstructionsBothEras(t *testing.T) {
	t.Parallel()
	gosdk := startGoSDKServer(t, dualEra)
	gosdkModern := remoteServer("gosdk-modern", gosdk.url+"/mcp")
	gosdkModern.Protocol = config.ProtocolModern
	for _, tc := range []struct {
		name string
		srv  config.Server
		era  upstream.Era
		want string
	}{
		{"fixture", stdioServer("fixture", "--instructions", fixtureInstructions), upstream.EraLegacy, fixtureInstructions},
		{"fixture-modern", stdioServer("fixture-modern", "--modern", "--instructions", fixtureInstructions), upstream.EraModern, fixtureInstructions},
		{"fixture-none", stdioServer("fixture-none"), upstream.EraLegacy, ""},
		{"gosdk", remoteServer("gosdk", gosdk.url+"/mcp"), upstream.EraLegacy, goSDKInstructions},
		{"gosdk-modern", gosdkModern, upstream.EraModern, goSDKInstructions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := connect(t, tc.srv, fastOptions())
			if v := c.Status().ProtocolVersion; upstream.EraOf(v) != tc.era {
				t.Errorf("protocol %q, want era %s", v, tc.era)
			}
			if got := c.Instructions(); got != tc.want {
				t.Errorf("instructions %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInstructionsRemembered: the instructions are remembered with the
// catalog, in both eras, and a start from the remembered catalog has
// them: offline, and while the server is still starting. A start that
// fails shows none, as it shows no catalog.
func TestInstructionsRemembered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"legacy", nil},
		{"modern", []string{"--modern"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cache, gate := t.TempDir(), filepath.Join(t.TempDir(), "gate")
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--instructions", fixtureInstructions, "--init-gate", gate}, tc.args...)
			srv := stdioServer("remembered-"+tc.name, args...)
			connect(t, srv, cacheOptions(cache)).Close()
			r, err := upstream.LoadRemembered(cache, srv)
			if err != nil || r == nil {
				t.Fatalf("LoadRemembered = %v, %v", r, err)
			}
			if r.Instructions != fixtureInstructions {
				t.Fatalf("remembered instructions %q, want %q", r.Instructions, fixtureInstructions)
			}

			offline := cacheOptions(cache)
			offline.Offline = true
			if got := startClient(t, srv, offline).Instructions(); got != fixtureInstructions {
				t.Errorf("offline: instructions %q, want the remembered %q", got, fixtureInstructions)
			}

			if err := os.Remove(gate); err != nil { // the handshake now hangs
				t.Fatal(err)
			}
			c := upstream.New(srv, cacheOptions(cache))
			c.Start(context.Background())
			t.Cleanup(func() { c.Close() })
			<-c.Known()
			if st := c.Status(); st.State != upstream.StateConnecting {
				t.Fatalf("state %s, want starting", st.State)
			}
			if got := c.Instructions(); got != fixtureInstructions {
				t.Errorf("while starting: instructions %q, want the remembered %q", got, fixtureInstructions)
			}
			c.Close()

			// The timeout is no part of the cache key: the same file, and
			// a handshake that runs out of it.
			short := srv
			short.Timeout = 300 * time.Millisecond
			c = startClient(t, short, cacheOptions(cache))
			if st := c.Status(); st.State != upstream.StateFailed || c.Instructions() != "" {
				t.Errorf("failed start: state %s, instructions %q; want failed and none", st.State, c.Instructions())
			}
		})
	}
}

// TestInstructionsOlderCacheFile: a cache file written before
// instructions were remembered (the same format, without the field) is
// still read: no instructions until the server connects, and then the
// file is written again with them.
func TestInstructionsOlderCacheFile(t *testing.T) {
	t.Parallel()
	cache, gate := t.TempDir(), filepath.Join(t.TempDir(), "gate")
	srv := stdioServer("older", "--instructions", fixtureInstructions, "--init-gate", gate)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	connect(t, srv, cacheOptions(cache)).Close()
	file := cacheFileOf(t, cache, srv)
	var m map[string]json.RawMessage
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "instructions")
	older, _ := json.Marshal(m)
	if err := os.WriteFile(file, older, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := upstream.LoadRemembered(cache, srv)
	if err != nil || r == nil || r.Instructions != "" || len(r.Tools) == 0 {
		t.Fatalf("LoadRemembered of a file without instructions = %+v, %v; want its catalog, no instructions", r, err)
	}

	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	c := upstream.New(srv, cacheOptions(cache))
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	<-c.Known()
	if got := c.Instructions(); got != "" || len(c.Catalog().Tools) == 0 {
		t.Errorf("from the older file: instructions %q, %d tools; want none and its catalog", got, len(c.Catalog().Tools))
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, upstream.StateConnected)
	if got := c.Instructions(); got != fixtureInstructions {
		t.Errorf("connected: instructions %q, want %q", got, fixtureInstructions)
	}
	c.Close() // the catalog is written after it is published
	if r, err := upstream.LoadRemembered(cache, srv); err != nil || r == nil || r.Instructions != fixtureInstructions {
		t.Errorf("after connecting: remembered %+v, %v; want the instructions written", r, err)
	}
}

// TestInstructionsCleaned: instructions that hide characters and run
// past 64 KiB are kept without the hidden characters and cut to 64 KiB
// on a rune boundary, on the connection and in the cache file; a file
// that holds hidden text is cleaned when read back.
func TestInstructionsCleaned(t *testing.T) {
	t.Parallel()
	const bound = 64 << 10
	// A zero-width space, a tag, a bidi override and a terminal escape;
	// then 3-byte runes well past the bound, so a byte cut would split one.
	sent := "Use\u200b echo.\U000E0041\u202e\x1b[31m" + strings.Repeat("€", bound/3+100)
	srv := stdioServer("sneaky", "--instructions", sent)
	cache := t.TempDir()
	c := connect(t, srv, cacheOptions(cache))
	check := func(where, got string) {
		t.Helper()
		if _, n := hidden.String(got); n > 0 {
			t.Errorf("%s: %d hidden characters kept", where, n)
		}
		if !strings.HasPrefix(got, "Use echo.€€") || !utf8.ValidString(got) || len(got) > bound || len(got) <= bound-3 {
			t.Errorf("%s: %d bytes starting %.16q (valid UTF-8: %v), want %d at most, cut on a rune boundary",
				where, len(got), got, utf8.ValidString(got), bound)
		}
	}
	check("connected", c.Instructions())
	c.Close()
	r, err := upstream.LoadRemembered(cache, srv)
	if err != nil || r == nil {
		t.Fatalf("LoadRemembered = %v, %v", r, err)
	}
	check("remembered", r.Instructions)

	// A file written by anything else is held to the same.
	file := cacheFileOf(t, cache, srv)
	var m map[string]any
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["instructions"] = sent
	data, _ = json.Marshal(m)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err = upstream.LoadRemembered(cache, srv)
	if err != nil || r == nil {
		t.Fatalf("LoadRemembered of the edited file = %v, %v", r, err)
	}
	check("read from an edited file", r.Instructions)
}

// cacheFileOf is the one cache file in dir, the server's.
func cacheFileOf(t testing.TB, dir string, srv config.Server) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, srv.Name+"-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %v, want one", files)
	}
	return files[0]
}
