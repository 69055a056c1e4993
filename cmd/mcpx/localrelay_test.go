package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/browser/browsertest"
)

// toolCall calls a tool through `mcpx serve` and returns its first text
// and whether it is an error.
func toolCall(c *rawClient, name string, args any) (string, bool) {
	c.t.Helper()
	raw, e := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	if e != nil {
		c.t.Fatalf("%s: JSON-RPC error %s", name, e.Message)
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	_ = json.Unmarshal(raw, &r)
	if len(r.Content) == 0 {
		c.t.Fatalf("%s: no content in %s", name, raw)
	}
	return r.Content[0].Text, r.IsError
}

// untilOK calls a tool until it succeeds (at most tries times, pausing
// between tries) and returns its text and the errors met before.
func untilOK(t *testing.T, c *rawClient, tries int, name string, args any) (string, []string) {
	t.Helper()
	var errs []string
	for range tries {
		text, isErr := toolCall(c, name, args)
		if !isErr {
			return text, errs
		}
		errs = append(errs, text)
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("%s never succeeded; errors:\n%s", name, strings.Join(errs, "\n"))
	return "", nil
}

// TestLocalRelayShared is the out-of-the-box browser: "browser": {} and
// the extension, nothing else. Real Chromium's test extension dials the
// local address every second, as the real one does; the first mcpx hosts
// the relay, a second joins it, each works in its own tab; SIGKILL of the
// host makes the second take the address over, the extension redials, and
// the second's browser calls work again, in its own page, after at most
// one error.
func TestLocalRelayShared(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the relay secret goes here
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>Page %s</title><h1>Page %s</h1><button>Go %s</button>", r.URL.Path[1:], r.URL.Path[1:], r.URL.Path[1:])
	}))
	defer page.Close()
	addr := freeLoopbackAddr(t)
	chrome := browsertest.LaunchChromium(t, "ws://"+addr+"/extension", "")
	defer chrome.Close()
	cfg := writeConfig(t, map[string]any{"browser": map[string]any{"listen": addr, "extensionWait": "30s"},
		"servers": map[string]any{"fx": fx()}, "expose": "both"})

	a := startServe(t, cfg)
	a.initialize()
	// Right after start the extension has not found the new relay yet
	// (it tries every second): the first calls wait for it.
	if text, isErr := toolCall(a, "browser_list", map[string]any{}); isErr || !strings.Contains(text, chrome.Name) {
		t.Fatalf("browser_list right after start: %s", text)
	}
	if text, isErr := toolCall(a, "browser_navigate", map[string]any{"url": page.URL + "/A"}); isErr || !strings.Contains(text, "Page A") {
		t.Fatalf("A navigate as the first browser call: %s", text)
	}
	b := startServe(t, cfg)
	b.initialize()
	if text, errs := untilOK(t, b, 20, "browser_navigate", map[string]any{"url": page.URL + "/B"}); !strings.Contains(text, "Page B") {
		t.Fatalf("B navigate: %s (after %q)", text, errs)
	}
	if !strings.Contains(a.stderr.String(), "hosting on "+addr) || !strings.Contains(b.stderr.String(), "joining the one on "+addr) {
		t.Fatalf("roles: A's log:\n%s\nB's log:\n%s", a.stderr.String(), b.stderr.String())
	}
	// Each in its own tab: B's navigation did not move A's page.
	if text, _ := toolCall(a, "browser_snapshot", map[string]any{}); !strings.Contains(text, "Page A") || strings.Contains(text, "Page B") {
		t.Fatalf("A's snapshot after B navigated:\n%s", text)
	}
	if text, _ := toolCall(b, "browser_snapshot", map[string]any{}); !strings.Contains(text, "Page B") {
		t.Fatalf("B's snapshot:\n%s", text)
	}

	// A third, one-shot mcpx joins too and reports the sharing.
	out, errOut, code := runCLI(t, "", "servers", "--json", "--config", cfg)
	var st struct {
		Browser struct {
			Transport, State, Extension string
			Clients                     int
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("servers: %v, exit %d\n%s\n%s", err, code, out, errOut)
	}
	if st.Browser.Transport != "local (joined)" || st.Browser.Extension != chrome.Name || st.Browser.Clients < 3 {
		t.Fatalf("servers: browser %+v, want local (joined), %q, 3 clients", st.Browser, chrome.Name)
	}

	// The host dies without a word.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	text, errs := untilOK(t, b, 30, "browser_snapshot", map[string]any{})
	t.Logf("after the host died: %d error(s) before the browser worked again: %q", len(errs), errs)
	if len(errs) > 1 {
		t.Errorf("after the host died, %d errors before the browser worked again (want at most one):\n%s", len(errs), strings.Join(errs, "\n"))
	}
	if !strings.Contains(text, "Page B") {
		t.Errorf("B lost its page in the takeover:\n%s", text)
	}
	// B's other servers never noticed.
	if text, isErr := toolCall(b, "fx_echo", map[string]any{"message": "still here"}); isErr || !strings.Contains(text, "still here") {
		t.Errorf("B's fx_echo after the takeover: %s", text)
	}
	if !strings.Contains(b.stderr.String(), "the host went; hosting on "+addr) {
		t.Errorf("B did not say it took over; its log:\n%s", b.stderr.String())
	}
}

// freeLoopbackAddr returns a 127.0.0.1 address with a port free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestRelayCommandOnATakenAddress: mcpx relay says the address is taken
// (by a relay there is nothing to join) and exits 1; a non-loopback
// address is a usage error: exit 2.
func TestRelayCommandOnATakenAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	_, errOut, code := runCLI(t, "", "relay", "--listen", ln.Addr().String())
	if code != 1 || !strings.Contains(errOut, "is taken") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "", "relay", "--listen", "0.0.0.0:5555")
	if code != 2 || !strings.Contains(errOut, "not a loopback address") {
		t.Fatalf("non-loopback: exit %d, stderr:\n%s", code, errOut)
	}
}
