//go:build unix

// Package npm_test checks mcpx's npm packaging end to end, the way an MCP
// client uses it: scripts/release builds and packs the linux-x64 platform
// package and the main package, npm installs both tarballs offline into an
// empty directory, and the installed launcher runs `mcpx serve --stdio`
// against the Go fixture server.
//
//	go test -count=1 ./npm/
//
// It runs on linux/amd64 only (the one platform package it builds) and
// needs node, npm and bash: a missing one fails the test.
package npm_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

const (
	// testVersion is what the test stamps; npm gets it without the "v".
	testVersion    = "v0.0.1-npmtest"
	testNpmVersion = "0.0.1-npmtest"
	mainPkg        = "@mcpx/mcpx"
	platformPkg    = "@mcpx/mcpx-linux-x64"
)

// install is what the packaging produced and npm installed.
type install struct {
	root     string   // the repository
	dist     string   // scripts/release --out
	app      string   // the directory npm installed into
	env      []string // environment for node, npm and mcpx: offline, no user config
	launcher string   // app/node_modules/.bin/mcpx
	binary   string   // the mcpx binary inside the platform package
	fixture  string   // the Go fixture server
	commit   string   // git rev-parse --short HEAD, "" outside a checkout
}

func TestNpmPackage(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the packaging test builds the linux-x64 package only; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	in := buildAndInstall(t)

	t.Run("checksums", func(t *testing.T) { testChecksums(t, in) })
	t.Run("serve over stdio", func(t *testing.T) { testServe(t, in) })
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run("forwards "+sigName(sig), func(t *testing.T) { testForwardSignal(t, in, sig) })
	}
	t.Run("dies of mcpx's signal", func(t *testing.T) { testChildKilled(t, in) })
	t.Run("exit status", func(t *testing.T) { testExitStatus(t, in) })
	t.Run("npx", func(t *testing.T) { testNpx(t, in) })
	t.Run("missing platform package", func(t *testing.T) { testMissingPlatform(t, in) })
	t.Run("README install line", func(t *testing.T) { testReadmeInstall(t, in) })
}

// buildAndInstall runs the real release script for linux/amd64, builds the
// fixture and installs the two tarballs into an empty directory without
// touching the network.
func buildAndInstall(t *testing.T) *install {
	t.Helper()
	testenv.NeedNpm(t)
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for the npm packaging test: %v", tool, err)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	in := &install{root: root, dist: filepath.Join(tmp, "dist"), app: filepath.Join(tmp, "app"), env: npmEnv(t, tmp)}
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		in.commit = strings.TrimSpace(string(out))
	}

	start := time.Now()
	release := exec.Command("bash", filepath.Join(root, "scripts", "release"),
		"--version", testVersion, "--targets", "linux/amd64", "--out", in.dist)
	release.Dir = root
	release.Env = append(in.env, "SOURCE_DATE_EPOCH=0")
	if out, err := release.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, out)
	}
	t.Logf("scripts/release for linux/amd64 took %s", time.Since(start).Round(time.Millisecond))

	in.fixture = filepath.Join(tmp, "fixture")
	build := exec.Command("go", "build", "-o", in.fixture, "./testdata/fixture")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/fixture: %v\n%s", err, out)
	}

	platformTgz := filepath.Join(in.dist, "mcpx-mcpx-linux-x64-"+testNpmVersion+".tgz")
	mainTgz := filepath.Join(in.dist, "mcpx-mcpx-"+testNpmVersion+".tgz")
	if err := os.MkdirAll(in.app, 0o755); err != nil {
		t.Fatal(err)
	}
	// A package.json makes app the project root, so that npm does not
	// look for one further up.
	if err := os.WriteFile(filepath.Join(in.app, "package.json"), []byte(`{"name":"app","private":true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Both tarballs in one install: the platform tarball satisfies the main
	// package's optional dependency on it; the other five platforms are
	// optional and, offline, skipped.
	start = time.Now()
	npmInstall := exec.Command("npm", "install", "--no-audit", "--no-fund", "--offline", platformTgz, mainTgz)
	npmInstall.Dir = in.app
	npmInstall.Env = in.env
	if out, err := npmInstall.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	t.Logf("npm install --offline took %s", time.Since(start).Round(time.Millisecond))

	in.launcher = filepath.Join(in.app, "node_modules", ".bin", "mcpx")
	in.binary = filepath.Join(in.app, "node_modules", "@mcpx", "mcpx-linux-x64", "bin", "mcpx")
	for _, p := range []string{in.launcher, in.binary} {
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("after npm install, %s is not an executable file (%v)", p, err)
		}
	}
	var manifest struct{ Version string }
	readJSON(t, filepath.Join(in.app, "node_modules", "@mcpx", "mcpx", "package.json"), &manifest)
	if manifest.Version != testNpmVersion {
		t.Errorf("installed %s is version %q, want %q", mainPkg, manifest.Version, testNpmVersion)
	}
	// Both packages say and carry the license of the repository.
	license, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	if err != nil {
		t.Fatalf("the repository's LICENSE: %v", err)
	}
	for _, pkg := range []string{"mcpx", "mcpx-linux-x64"} {
		dir := filepath.Join(in.app, "node_modules", "@mcpx", pkg)
		var m struct{ License string }
		readJSON(t, filepath.Join(dir, "package.json"), &m)
		if m.License != "Apache-2.0" {
			t.Errorf("@mcpx/%s: license %q, want Apache-2.0", pkg, m.License)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "LICENSE")); err != nil || !bytes.Equal(got, license) {
			t.Errorf("@mcpx/%s does not carry the repository's LICENSE (%v)", pkg, err)
		}
	}
	return in
}

// npmEnv is the environment without the caller's npm and mcpx settings,
// with an empty user config, a private cache, and npm offline.
func npmEnv(t *testing.T, tmp string) []string {
	t.Helper()
	userconfig := filepath.Join(tmp, "npmrc")
	if err := os.WriteFile(userconfig, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToLower(k), "npm_config_") || strings.HasPrefix(k, "MCPX_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"npm_config_userconfig="+userconfig,
		"npm_config_cache="+filepath.Join(tmp, "npm-cache"),
		"npm_config_offline=true",
		// Never the real registry, even if something ignored --offline.
		"npm_config_registry=http://127.0.0.1:9/",
		"npm_config_update_notifier=false",
		"npm_config_audit=false",
		"npm_config_fund=false",
		// mcpx's remembered catalogs and relay secret stay in the test.
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		// The audit trail and pins too; the subtests' fixture servers
		// share a name but not their tools, which pinning would withhold.
		"XDG_STATE_HOME="+filepath.Join(tmp, "state"),
		"MCPX_TRUST=off",
	)
}

func testChecksums(t *testing.T, in *install) {
	sums, err := os.ReadFile(filepath.Join(in.dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not in sha256sum format", line)
		}
		b, err := os.ReadFile(filepath.Join(in.dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s does not match", name)
		}
		got[name] = true
	}
	for _, want := range []string{"mcpx-linux-amd64", "mcpx-mcpx-" + testNpmVersion + ".tgz", "mcpx-mcpx-linux-x64-" + testNpmVersion + ".tgz"} {
		if !got[want] {
			t.Errorf("SHA256SUMS lacks %s:\n%s", want, sums)
		}
	}
}

// testServe is an MCP client's session through the launcher: initialize,
// tools/list and a 5 MiB tool result, then stdin closes and everything
// must be gone.
func testServe(t *testing.T, in *install) {
	pids := t.TempDir()
	s := startServe(t, in, in.launcher, pids)
	s.handshake(t)
	mcpxPid := s.mcpxPid(t, in)

	list := s.call(t, 2, "tools/list", `{}`)
	var tools struct {
		Result struct{ Tools []struct{ Name string } }
	}
	if err := json.Unmarshal(list, &tools); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Result.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"fx_echo", "fx_big"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %s", want, truncate(list))
		}
	}

	fixture := fixturePids(t, pids)
	big := s.call(t, 3, "tools/call", `{"name":"fx_big","arguments":{}}`)
	checkBig(t, big)
	// The launcher adds nothing and loses nothing: the same request to the
	// same binary run directly gets the same bytes.
	direct := startServe(t, in, in.binary, t.TempDir())
	direct.handshake(t)
	if want := direct.call(t, 3, "tools/call", `{"name":"fx_big","arguments":{}}`); !bytes.Equal(big, want) {
		t.Errorf("fx_big through the launcher (%d bytes) differs from mcpx run directly (%d bytes)", len(big), len(want))
	}

	start := time.Now()
	s.stdin.Close()
	code := s.wait(t, 10*time.Second)
	t.Logf("launcher exited %s after stdin closed, status %v", time.Since(start).Round(time.Millisecond), code)
	if code.ExitCode() != 0 {
		t.Errorf("launcher exit status after stdin EOF: %v, want 0; stderr:\n%s", code, s.stderrText())
	}
	waitGone(t, append(fixture, mcpxPid), 5*time.Second)
}

// checkBig checks the raw fx_big response line: one text item of exactly
// 5 MiB, byte i being "0123456789abcdef"[i%16].
func checkBig(t *testing.T, line []byte) {
	t.Helper()
	var res struct {
		Result struct {
			Content []struct{ Type, Text string }
		}
	}
	if err := json.Unmarshal(line, &res); err != nil {
		t.Fatalf("fx_big: %v: %s", err, truncate(line))
	}
	if len(res.Result.Content) != 1 || len(res.Result.Content[0].Text) != 5<<20 {
		t.Fatalf("fx_big: want one text item of 5 MiB: %s", truncate(line))
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), (5<<20)/16)
	if text := res.Result.Content[0].Text; text != string(want) {
		for i := range text {
			if text[i] != want[i] {
				t.Fatalf("fx_big result corrupted at byte %d", i)
			}
		}
	}
	if !bytes.Contains(line, want) {
		t.Errorf("the raw fx_big line does not hold the 5 MiB verbatim")
	}
}

// testForwardSignal sends sig to the launcher only (not to its process
// group, as a terminal would): mcpx must get it and everything must end.
func testForwardSignal(t *testing.T, in *install, sig syscall.Signal) {
	pids := t.TempDir()
	s := startServe(t, in, in.launcher, pids)
	s.handshake(t)
	mcpxPid := s.mcpxPid(t, in)
	fixture := fixturePids(t, pids)
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig == syscall.SIGHUP {
		// mcpx reloads its config on SIGHUP and goes on serving: that it
		// says so proves the launcher passed the signal on.
		testenv.Eventually(t, 10*time.Second, func() bool { return strings.Contains(s.stderrText(), "SIGHUP: reloading the config") },
			"mcpx never heard the SIGHUP sent to the launcher")
		s.stdin.Close()
	}
	status := s.wait(t, 10*time.Second)
	t.Logf("launcher after %s: %v", sigName(sig), status)
	waitGone(t, append(fixture, mcpxPid), 5*time.Second)
}

// testChildKilled kills mcpx: the launcher must die of the same signal, so
// that the client sees what happened.
func testChildKilled(t *testing.T, in *install) {
	pids := t.TempDir()
	s := startServe(t, in, in.launcher, pids)
	s.handshake(t)
	mcpxPid := s.mcpxPid(t, in)
	fixture := fixturePids(t, pids)
	if err := syscall.Kill(mcpxPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	status := s.wait(t, 10*time.Second)
	ws, _ := status.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("launcher status after mcpx was killed: %v, want signal: killed", status)
	}
	// The fixture loses its stdin with mcpx and exits on its own.
	waitGone(t, fixture, 5*time.Second)
}

func testExitStatus(t *testing.T, in *install) {
	cmd := exec.Command(in.launcher, "no-such-command")
	cmd.Env = in.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("mcpx no-such-command through the launcher: %v, want exit status 2 (a usage error)", err)
	}
	if !strings.Contains(stderr.String(), `unknown command "no-such-command"`) {
		t.Errorf("stderr = %q, want mcpx's own error", stderr.String())
	}

	cmd = exec.Command(in.launcher, "version")
	cmd.Env = append(in.env, "MCPX_BINARY="+filepath.Join(t.TempDir(), "absent"))
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "absent") {
		t.Errorf("launcher with MCPX_BINARY naming a missing file: %v, %q; want exit status 1 and the path", err, out)
	}
}

// testNpx runs the installed package as a client config does, offline.
func testNpx(t *testing.T, in *install) {
	// The stamp: the version, then the commit and the date (SOURCE_DATE_EPOCH=0).
	stamp := testVersion
	if in.commit != "" {
		stamp += " (" + in.commit + ", 1970-01-01T00:00:00Z)"
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-install", "mcpx", "--version"}, "mcpx " + stamp + "\n"},
		{[]string{"-y", mainPkg, "--version"}, "mcpx " + stamp + "\n"},
		{[]string{"--no-install", "mcpx", "version"}, "mcpx " + stamp + "\n"},
	} {
		args, want := tc.args, tc.want
		cmd := exec.Command("npx", args...)
		cmd.Dir = in.app
		cmd.Env = in.env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("npx %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			continue
		}
		if string(out) != want {
			t.Errorf("npx %s printed %q, want %q", strings.Join(args, " "), out, want)
		}
	}
}

// testReadmeInstall runs the README's own `npm install -g` line, as a
// user pastes it after scripts/release, from the directory that holds
// dist/, with a temporary global prefix, and then the mcpx it installed.
func testReadmeInstall(t *testing.T, in *install) {
	line := readmeInstallLine(t, filepath.Join(in.root, "README.md"))
	if filepath.Base(in.dist) != "dist" {
		t.Fatalf("the release went to %s, not a dist/ the README's line can name", in.dist)
	}
	prefix := t.TempDir()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = filepath.Dir(in.dist)
	cmd.Env = append(in.env, "npm_config_prefix="+prefix)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's install line %q: %v\n%s", line, err, out)
	}
	version := exec.Command(filepath.Join(prefix, "bin", "mcpx"), "--version")
	version.Env = in.env
	out, err := version.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpx --version after the README's install line: %v\n%s", err, out)
	}
	if want := "mcpx " + testVersion; !strings.HasPrefix(string(out), want) {
		t.Errorf("mcpx --version after the README's install line printed %q, want %q...", out, want)
	}
}

// readmeInstallLine returns the one `npm install -g` line of the README
// that installs tarballs, without its trailing comment.
func readmeInstallLine(t *testing.T, readme string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "npm install -g ") && strings.Contains(l, ".tgz") {
			cmd, _, _ := strings.Cut(l, " #")
			found = append(found, strings.TrimSpace(cmd))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: want one `npm install -g ...tgz` line, found %d: %q", readme, len(found), found)
	}
	return found[0]
}

// testMissingPlatform runs a copy of the main package that has no platform
// package beside it, as after npm install --omit=optional.
func testMissingPlatform(t *testing.T, in *install) {
	lonely := filepath.Join(t.TempDir(), "node_modules", "@mcpx", "mcpx")
	src := filepath.Join(in.app, "node_modules", "@mcpx", "mcpx")
	for _, f := range []string{"package.json", filepath.Join("bin", "mcpx.js")} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(lonely, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lonely, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("node", filepath.Join(lonely, "bin", "mcpx.js"), "--version")
	cmd.Env = in.env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("launcher without its platform package: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"linux-x64", platformPkg + " is not installed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("launcher error %q does not mention %q", out, want)
		}
	}
}

// session is `mcpx serve --stdio` (through the launcher or not) driven
// with raw JSON-RPC lines.
type session struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *os.File // a file, not a pipe: Wait returns when the process exits, whatever its children hold
	lines  chan []byte
	stop   chan struct{} // closed by the cleanup: stop handing out lines
	done   chan struct{} // closed when stdout ends

	waitOnce sync.Once
	exited   chan struct{}
	status   *os.ProcessState
}

// startServe starts argv0 serve --stdio with one fixture upstream, exposed
// directly, that records its pid in pidDir. Results pass whole
// (maxResultBytes off): the test checks a 5 MiB one arrives intact.
func startServe(t *testing.T, in *install, argv0, pidDir string) *session {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "mcpx.json")
	b, _ := json.Marshal(map[string]any{
		"expose":         "direct",
		"maxResultBytes": "off",
		"servers": map[string]any{
			"fx": map[string]any{"command": in.fixture, "args": []string{"--pid-dir", pidDir}, "timeout": "10s"},
		},
	})
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv0, "serve", "--stdio", "--config", cfg)
	cmd.Env = in.env
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stderr.Close() })
	s := &session{cmd: cmd, stderr: stderr, lines: make(chan []byte, 16), stop: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	// A pipe of our own rather than cmd.StdinPipe, which Wait closes: stdin
	// stays open until the test closes it, so that mcpx never ends for want
	// of stdin when a test expects it to end for another reason.
	stdin, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, s.stdin = stdin, w
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	stdin.Close()
	if err != nil {
		w.Close()
		t.Fatal(err)
	}
	go func() {
		defer close(s.done)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case s.lines <- line:
				case <-s.stop:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		defer func() { <-s.done }()
		defer close(s.stop)
		s.stdin.Close()
		select {
		case <-s.waitDone():
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-s.waitDone()
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(argv0), s.stderrText())
		}
	})
	return s
}

// waitDone starts cmd.Wait once and returns a channel closed when it ends.
func (s *session) waitDone() <-chan struct{} {
	s.waitOnce.Do(func() {
		go func() {
			s.cmd.Wait()
			s.status = s.cmd.ProcessState
			close(s.exited)
		}()
	})
	return s.exited
}

// wait waits up to d for the process to exit and returns its status.
func (s *session) wait(t *testing.T, d time.Duration) *os.ProcessState {
	t.Helper()
	select {
	case <-s.waitDone():
		return s.status
	case <-time.After(d):
		t.Fatalf("%s still running %s later; stderr:\n%s", s.cmd.Path, d, s.stderrText())
		return nil
	}
}

func (s *session) stderrText() string {
	b, _ := os.ReadFile(s.stderr.Name())
	return string(b)
}

func (s *session) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, msg+"\n"); err != nil {
		t.Fatalf("write to mcpx: %v", err)
	}
}

// call sends a request and returns the raw line of its response, skipping
// notifications and requests from mcpx.
func (s *session) call(t *testing.T, id int, method, params string) []byte {
	t.Helper()
	s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	deadline := time.After(30 * time.Second)
	for {
		select {
		case line := <-s.lines:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Error  *struct{ Message string }
			}
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("stdout line is not JSON: %s", truncate(line))
			}
			if m.Method != "" || string(m.ID) != strconv.Itoa(id) {
				continue
			}
			if m.Error != nil {
				t.Fatalf("%s: error %s", method, m.Error.Message)
			}
			return line
		case <-s.done:
			t.Fatalf("stdout closed waiting for %s; stderr:\n%s", method, s.stderrText())
		case <-deadline:
			t.Fatalf("no answer to %s within 30s; stderr:\n%s", method, s.stderrText())
		}
	}
}

// handshake is initialize and notifications/initialized.
func (s *session) handshake(t *testing.T) {
	t.Helper()
	res := s.call(t, 1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"npm-test","version":"1"}}`)
	var init struct {
		Result struct{ ServerInfo struct{ Name string } }
	}
	if err := json.Unmarshal(res, &init); err != nil || init.Result.ServerInfo.Name != "mcpx" {
		t.Fatalf("initialize: %v: %s", err, truncate(res))
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// mcpxPid finds the launcher's child and checks that it runs the binary
// from the installed platform package.
func (s *session) mcpxPid(t *testing.T, in *install) int {
	t.Helper()
	kids := childrenOf(s.cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("the launcher has children %v, want exactly one (mcpx)", kids)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", kids[0]))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(in.binary)
	if err != nil {
		t.Fatal(err)
	}
	if exe != want {
		t.Fatalf("the launcher's child runs %s, want %s", exe, want)
	}
	// No copying in JavaScript: mcpx holds the very pipes the launcher got.
	for fd := 0; fd <= 2; fd++ {
		l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", s.cmd.Process.Pid, fd))
		m, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", kids[0], fd))
		if l == "" || l != m {
			t.Errorf("fd %d: the launcher has %q, mcpx has %q; want the same inherited file", fd, l, m)
		}
	}
	return kids[0]
}

// fixturePids returns the pids the fixture recorded in dir, waiting up to
// 10s for the first.
func fixturePids(t *testing.T, dir string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var pids []int
		for _, e := range entries {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, pid)
			}
		}
		if len(pids) > 0 {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture wrote no pid file into %s within 10s", dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procStat returns the state and parent pid from /proc/<pid>/stat.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// The command name in parentheses may hold spaces; the state and the
	// parent pid follow its closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0][0], ppid, err == nil
}

// childrenOf scans /proc for the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(p); ok && ppid == pid {
			kids = append(kids, p)
		}
	}
	return kids
}

// waitGone waits until none of pids runs. A zombie counts as gone: it only
// waits to be reaped.
func waitGone(t *testing.T, pids []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var alive []int
		for _, pid := range pids {
			if state, _, ok := procStat(pid); ok && state != 'Z' {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range alive {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes still running %s after the launcher exited: %v", d, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func sigName(sig syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[sig]
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
