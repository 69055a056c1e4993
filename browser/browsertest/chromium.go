package browsertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// connectTimeout bounds how long StartChromium waits for the extension.
const connectTimeout = 15 * time.Second

// Chromium is a headless Chromium running the test MV3 extension from
// testdata/extension, connected to a relay.
type Chromium struct {
	Name        string // the name its extension authenticates with (unique per launch)
	ExtensionID string // the id the relay gave its extension

	cmd       *exec.Cmd
	out       *tailBuffer
	exited    chan struct{}
	closeOnce sync.Once
}

// StartChromium copies the test extension into tb.TempDir(), points it at
// extensionURL with token, launches headless Chromium with it, and waits
// (at most 15 s) until the relay lists the extension to an MCP client
// holding the same token; the relay records that client's frames too.
// A missing Chromium skips the test naming the command that installs it,
// or fails it under MCPX_REQUIRE_PEERS=1, as in CI (see
// [testenv.NeedChromium]). Cleanup kills Chromium's process group.
func StartChromium(tb testing.TB, extensionURL, token string, args ...string) *Chromium {
	tb.Helper()
	c := LaunchChromium(tb, extensionURL, token, args...)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	start := time.Now()
	var err error
	if c.ExtensionID, err = c.waitConnected(ctx, extensionURL, token); err != nil {
		tb.Fatalf("browsertest: the test extension did not connect to %s: %v (after %v)\nChromium's output:\n%s",
			extensionURL, err, time.Since(start).Round(time.Millisecond), c.Output())
	}
	return c
}

// LaunchChromium is StartChromium without the wait: the extension dials
// extensionURL every second until something listens there, as the real
// one does, so a test can start the relay afterwards. ExtensionID stays
// empty. Extra command-line args come after mcpx's own (e.g.
// --host-resolver-rules, for pages on several host names).
func LaunchChromium(tb testing.TB, extensionURL, token string, args ...string) *Chromium {
	tb.Helper()
	bin := testenv.NeedChromium(tb)
	src, err := extensionSource()
	if err != nil {
		tb.Fatalf("browsertest: %v", err)
	}
	dir := tb.TempDir()
	ext := filepath.Join(dir, "extension")
	if err := os.CopyFS(ext, os.DirFS(src)); err != nil {
		tb.Fatalf("browsertest: copy the test extension: %v", err)
	}
	name := "Chromium test " + newUUID()[:8]
	config, _ := json.Marshal(map[string]string{
		"relayURL": extensionURL,
		"token":    token,
		"name":     name,
		"clientId": "chromium-" + newUUID(),
	})
	if err := os.WriteFile(filepath.Join(ext, "config.json"), config, 0o600); err != nil {
		tb.Fatalf("browsertest: write the extension's config: %v", err)
	}

	cmd := exec.Command(bin, append([]string{
		"--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--disable-quic", "--disable-dev-shm-usage",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		"--load-extension=" + ext, "--disable-extensions-except=" + ext},
		append(args, "about:blank")...)...)
	ownGroup(cmd)
	c := &Chromium{Name: name, cmd: cmd, out: &tailBuffer{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	cmd.WaitDelay = 2 * time.Second // children that keep the output pipe open
	if err := cmd.Start(); err != nil {
		tb.Fatalf("browsertest: start %s: %v", bin, err)
	}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	tb.Cleanup(c.Close)
	return c
}

// Close kills Chromium's process group (SIGTERM, then SIGKILL after 2 s)
// and waits for it. It is idempotent.
func (c *Chromium) Close() {
	c.closeOnce.Do(func() {
		stopGroup(c.cmd.Process, false)
		select {
		case <-c.exited:
		case <-time.After(2 * time.Second):
		}
		stopGroup(c.cmd.Process, true) // whatever of the group is left
		<-c.exited
	})
}

// Output returns the tail of Chromium's stdout and stderr.
func (c *Chromium) Output() string { return c.out.String() }

// waitConnected plays an MCP client with the extension's token until the
// relay lists an extension of this name, and returns its id.
func (c *Chromium) waitConnected(ctx context.Context, extensionURL, token string) (string, error) {
	mcpURL := connectionURL(token)
	if mcpURL == "" {
		mcpURL = strings.TrimSuffix(extensionURL, "/extension") + "/mcp"
	}
	rc, err := dialRPC(ctx, mcpURL)
	if err != nil {
		return "", err
	}
	defer rc.close()
	_, rpcErr, err := rc.call(ctx, "mcp_handshake", map[string]any{"access_token": token, "client_id": "browsertest"})
	if err != nil {
		return "", err
	}
	if rpcErr != nil {
		return "", fmt.Errorf("mcp_handshake: %s", rpcErr)
	}
	for {
		res, rpcErr, err := rc.call(ctx, "list_extensions", nil)
		if err != nil {
			return "", err
		}
		if rpcErr != nil {
			return "", fmt.Errorf("list_extensions: %s", rpcErr)
		}
		var list struct {
			Extensions []struct{ ID, Name string }
		}
		_ = json.Unmarshal(res, &list)
		for _, e := range list.Extensions {
			if e.Name == c.Name {
				return e.ID, nil
			}
		}
		select {
		case <-c.exited:
			return "", errors.New("chromium exited")
		case <-ctx.Done():
			return "", fmt.Errorf("not listed: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connectionURL reads the connection_url claim of a JWT, unverified.
func connectionURL(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	p, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var c struct {
		URL string `json:"connection_url"`
	}
	_ = json.Unmarshal(p, &c)
	return c.URL
}

// extensionSource finds testdata/extension at the module root: the first
// directory with a go.mod, walking up from the working directory.
func extensionSource() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			ext := filepath.Join(dir, "testdata", "extension")
			if _, err := os.Stat(filepath.Join(ext, "manifest.json")); err != nil {
				return "", fmt.Errorf("test extension: %w", err)
			}
			return ext, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: cannot find testdata/extension")
		}
		dir = parent
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
