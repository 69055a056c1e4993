package auth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx/mcpx/upstream/auth/oauth"
	"github.com/zalando/go-keyring"
)

func TestFileStoreIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	s := &FileStore{Dir: dir}
	ctx := context.Background()
	if _, err := s.Load(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load of nothing = %v, want ErrNotFound", err)
	}
	rec := &Record{Server: "s", URL: "http://h/mcp", Token: &oauth.Token{AccessToken: "at-secret", RefreshToken: "rt-secret"}}
	if err := s.Save(ctx, "k", rec); err != nil {
		t.Fatal(err)
	}
	// Saving again (a refresh) must keep the mode too.
	if err := s.Save(ctx, "k", rec); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode = %v, %v; want 0700", st.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files = %v, want one (no temporary left behind)", entries)
	}
	fi, _ := entries[0].Info()
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
	}
	if strings.Contains(entries[0].Name(), "s") && strings.Contains(entries[0].Name(), "k") {
		t.Errorf("file name %q should be a hash", entries[0].Name())
	}
	got, err := s.Load(ctx, "k")
	if err != nil || got.Token.RefreshToken != "rt-secret" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
}

// memKeyring is a keychain for the tests of the keychain path: this box
// has no desktop keychain, and the real one must not be touched by tests.
type memKeyring struct {
	mu    sync.Mutex
	items map[string]string
	limit int
}

func (k *memKeyring) Get(service, user string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.items[service+"/"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (k *memKeyring) Set(service, user, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.limit > 0 && len(secret) > k.limit {
		return keyring.ErrSetDataTooBig
	}
	k.items[service+"/"+user] = secret
	return nil
}

func (k *memKeyring) Delete(service, user string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.items[service+"/"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(k.items, service+"/"+user)
	return nil
}

// brokenKeyring is a keychain that is not there: D-Bus without a Secret
// Service answers every call with an error.
type brokenKeyring struct{ hang chan struct{} }

func (b brokenKeyring) Get(string, string) (string, error) {
	if b.hang != nil {
		<-b.hang
	}
	return "", errors.New("org.freedesktop.secrets was not provided by any .service files")
}
func (brokenKeyring) Set(string, string, string) error { return errors.New("no keychain") }
func (brokenKeyring) Delete(string, string) error      { return errors.New("no keychain") }

func TestOpenStoreFallsBackToFiles(t *testing.T) {
	dir := t.TempDir()
	hang := make(chan struct{})
	defer close(hang)
	for _, tc := range []struct {
		name string
		opts StoreOptions
		file bool
	}{
		{"keychain errors", StoreOptions{Keyring: brokenKeyring{}}, true},
		{"keychain hangs", StoreOptions{Keyring: brokenKeyring{hang: hang}, ProbeTimeout: 50 * time.Millisecond}, true},
		{"keychain works", StoreOptions{Keyring: &memKeyring{items: map[string]string{}}}, false},
		{"MCPX_KEYRING=off", StoreOptions{Keyring: &memKeyring{items: map[string]string{}}, NoKeyring: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Dir = dir
			s, err := OpenStore(&o)
			if err != nil {
				t.Fatal(err)
			}
			want := "the OS keychain"
			if tc.file {
				want = dir
			}
			if got := s.Where(); got != want {
				t.Fatalf("Where() = %q, want %q", got, want)
			}
		})
	}
}

// countingKeyring counts the calls that reach the keychain.
type countingKeyring struct {
	memKeyring
	calls atomic.Int32
}

func (k *countingKeyring) Get(service, user string) (string, error) {
	k.calls.Add(1)
	return k.memKeyring.Get(service, user)
}

// TestOpenStoreProbesOnFirstUse: opening the store asks the keychain
// nothing (every start opens it, few need a login); the first use asks
// once, and later uses go straight to the chosen store.
func TestOpenStoreProbesOnFirstUse(t *testing.T) {
	k := &countingKeyring{memKeyring: memKeyring{items: map[string]string{}}}
	s, err := OpenStore(&StoreOptions{Dir: t.TempDir(), Keyring: k})
	if err != nil {
		t.Fatal(err)
	}
	if n := k.calls.Load(); n != 0 {
		t.Fatalf("OpenStore made %d keychain calls, want 0", n)
	}
	ctx := context.Background()
	if _, err := s.Load(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load = %v, want ErrNotFound", err)
	}
	if err := s.Save(ctx, "a", &Record{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	// The probe, then the two loads.
	if n := k.calls.Load(); n != 3 {
		t.Errorf("keychain Get calls = %d, want 3 (one probe, two loads)", n)
	}
	if _, ok := k.items[keyringService+"/a"]; !ok {
		t.Error("the record did not reach the keychain that answered the probe")
	}
}

func TestKeyringStore(t *testing.T) {
	k := &memKeyring{items: map[string]string{}, limit: 300}
	files := &FileStore{Dir: t.TempDir()}
	s := &KeyringStore{Keyring: k, Fallback: files}
	ctx := context.Background()
	small := &Record{Server: "s", Token: &oauth.Token{AccessToken: "a"}}
	if err := s.Save(ctx, "k", small); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.items["mcpx/k"]; !ok {
		t.Fatal("the record is not in the keychain")
	}
	if entries, _ := os.ReadDir(files.Dir); len(entries) != 0 {
		t.Fatalf("a file was written although the keychain took the record: %v", entries)
	}
	// Too big for the keychain (Windows caps items): it goes to the file.
	big := &Record{Server: "s", Token: &oauth.Token{AccessToken: strings.Repeat("x", 400)}}
	if err := s.Save(ctx, "k", big); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "k")
	if err != nil || got.Token.AccessToken != big.Token.AccessToken {
		t.Fatalf("Load after the fallback = %v, %v", got, err)
	}
	if _, ok := k.items["mcpx/k"]; ok {
		t.Error("the stale small record is still in the keychain")
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load after Delete = %v", err)
	}
}

func TestParseChallenge(t *testing.T) {
	h := map[string][]string{"Www-Authenticate": {
		`Basic realm="x"`,
		`Bearer error="insufficient_scope", error_description="needs \"admin\", sorry", scope="read admin", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp"`,
	}}
	c := ParseChallenge(h)
	if c.Error != "insufficient_scope" || strings.Join(c.Scopes, ",") != "read,admin" || c.ResourceMetadata != "https://h/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("ParseChallenge = %+v", c)
	}
	if c := ParseChallenge(map[string][]string{"Www-Authenticate": {`Bearer realm=example, scope=files`}}); strings.Join(c.Scopes, ",") != "files" {
		t.Errorf("unquoted: %+v", c)
	}
	if c := ParseChallenge(nil); c.Error != "" || c.Scopes != nil {
		t.Errorf("none: %+v", c)
	}
}
