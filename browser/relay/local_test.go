package relay

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestNewLocalRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:5555", "192.168.0.10:5555", ":5555", "example.com:5555"} {
		_, err := NewLocal(LocalOptions{Addr: addr, SecretFile: filepath.Join(t.TempDir(), "s")})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: err %v, want a loopback error", addr, err)
		}
	}
}

// TestHostJoinTakeOver: the first Local hosts, the second joins with the
// secret the first wrote (0600); when the host closes, the joiner's next
// Prepare hosts in its place, with the same secret.
func TestHostJoinTakeOver(t *testing.T) {
	addr := freeAddr(t)
	file := filepath.Join(t.TempDir(), "mcpx", "relay-secret")
	a, err := NewLocal(LocalOptions{Addr: addr, SecretFile: file})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewLocal(LocalOptions{Addr: addr, SecretFile: file})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	ha, err := a.Prepare(testCtx(t))
	if err != nil || a.Role() != RoleHosting {
		t.Fatalf("first: role %q, err %v", a.Role(), err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file mode %04o, want 0600", fi.Mode().Perm())
	}
	hb, err := b.Prepare(testCtx(t))
	if err != nil || b.Role() != RoleJoined {
		t.Fatalf("second: role %q, err %v", b.Role(), err)
	}
	if ha.Get("Authorization") != hb.Get("Authorization") || len(ha.Get("Authorization")) < 40 {
		t.Fatalf("headers differ or are empty: %q vs %q", ha, hb)
	}
	if code, body := upgrade(t, b.MCPURL(), hb); code != 101 {
		t.Fatalf("joiner's upgrade: %d %s", code, body)
	}
	if code, _ := upgrade(t, b.MCPURL(), nil); code != http.StatusUnauthorized {
		t.Fatalf("upgrade without the secret: %d, want 401", code)
	}

	_ = a.Close()
	if _, err := b.Prepare(testCtx(t)); err != nil || b.Role() != RoleHosting {
		t.Fatalf("after the host closed: role %q, err %v", b.Role(), err)
	}
	if code, body := upgrade(t, b.MCPURL(), hb); code != 101 {
		t.Fatalf("the old secret on the new host: %d %s", code, body)
	}
}

func TestSecretFileOthersCanRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "relay-secret")
	if err := os.WriteFile(file, []byte(strings.Repeat("a", 64)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readSecret(file); err == nil || !strings.Contains(err.Error(), "want 0600") {
		t.Fatalf("err %v, want a mode complaint", err)
	}
	// The host replaces it with a private one.
	s, err := ensureSecret(testCtx(t), file)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readSecret(file); err != nil || got != s {
		t.Fatalf("after ensureSecret: %q, %v", got, err)
	}
}

func TestRunRefusesATakenAddress(t *testing.T) {
	addr := freeAddr(t)
	file := filepath.Join(t.TempDir(), "relay-secret")
	host, err := NewLocal(LocalOptions{Addr: addr, SecretFile: file})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	if _, err := host.Prepare(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	err = Run(testCtx(t), LocalOptions{Addr: addr, SecretFile: file})
	if err == nil || !strings.Contains(err.Error(), "is taken") {
		t.Fatalf("err %v, want 'is taken'", err)
	}
}

// TestSecretCreatedOnce: processes that start at once all end up with the
// one secret in the file.
func TestSecretCreatedOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcpx", "relay-secret")
	const n = 16
	got := make(chan string, n)
	for range n {
		go func() {
			s, err := ensureSecret(testCtx(t), file)
			if err != nil {
				t.Error(err)
			}
			got <- s
		}()
	}
	first := <-got
	for range n - 1 {
		if s := <-got; s != first {
			t.Fatalf("two secrets: %q and %q", first, s)
		}
	}
	if s, err := readSecret(file); err != nil || s != first {
		t.Fatalf("file holds %q (%v), want %q", s, err, first)
	}
}

func TestCorruptSecretIsReplaced(t *testing.T) {
	file := filepath.Join(t.TempDir(), "relay-secret")
	if err := os.WriteFile(file, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ensureSecret(testCtx(t), file)
	if err != nil || len(s) != 64 {
		t.Fatalf("secret %q, %v", s, err)
	}
}
