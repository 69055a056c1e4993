package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/mcpx/mcpx/upstream/auth/oauth"
)

// ErrNotFound is returned by a [Store] that holds nothing for a key.
var ErrNotFound = errors.New("no stored login")

// Record is what mcpx keeps for one logged-in server: the tokens, and the
// client registration they were issued to, which a refresh must present
// again.
type Record struct {
	// Server and URL say whom the record is for; a record whose URL no
	// longer matches the config is not used.
	Server string       `json:"server"`
	URL    string       `json:"url"`
	Token  *oauth.Token `json:"token,omitempty"`
	// Issuer is the authorization server that issued Token and the client
	// registration below (MCP 2026-07-28: credentials are keyed by
	// issuer). Neither is ever presented to another one: when the
	// resource names a new authorization server, mcpx registers and logs
	// in again. Records saved before mcpx kept it have none, and take the
	// issuer of their next refresh or login.
	Issuer string `json:"issuer,omitempty"`
	// ClientID, ClientSecret and AuthMethod come from dynamic registration
	// or a client ID metadata document (the config's clientId is not
	// kept); RedirectURI is the one registered.
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
	RedirectURI  string `json:"redirect_uri,omitempty"`
	// ResourceMetadataURL is where discovery found the authorization
	// server, so that a refresh in a later process finds it again.
	ResourceMetadataURL string `json:"resource_metadata_url,omitempty"`
	// Scopes are the scopes asked for; the token's Scope is what was granted.
	Scopes []string `json:"scopes,omitempty"`
	// Account is who logged in, when the authorization server said
	// (an OpenID id_token's email, preferred_username or sub).
	Account string    `json:"account,omitempty"`
	Saved   time.Time `json:"saved"`
}

// Store keeps one [Record] per key. Implementations are safe for
// concurrent use; Load returns [ErrNotFound] when there is no record.
type Store interface {
	Load(ctx context.Context, key string) (*Record, error)
	Save(ctx context.Context, key string, r *Record) error
	Delete(ctx context.Context, key string) error
	// Where says where records live, for messages ("the OS keychain",
	// or a directory).
	Where() string
}

// Key is the store key of a server: its name and a hash of its URL, so
// that pointing a name at another server does not send it the old
// server's tokens.
func Key(server, url string) string {
	h := sha256.Sum256([]byte(url))
	return server + "-" + hex.EncodeToString(h[:6])
}

// FileStore keeps each record in its own JSON file, mode 0600, in a
// directory of mode 0700.
type FileStore struct {
	Dir string
}

func (s *FileStore) path(key string) string {
	// Keys are server names (any text) plus a hash: hash the whole key
	// into the file name so no name can escape the directory.
	h := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, hex.EncodeToString(h[:12])+".json")
}

// Where returns the directory.
func (s *FileStore) Where() string { return s.Dir }

// Load reads the record of key.
func (s *FileStore) Load(ctx context.Context, key string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read token file: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("token file %s is damaged: %w", s.path(key), err)
	}
	return &r, nil
}

// Save writes the record of key atomically: a reader never sees half a
// file, and the file is 0600 from its first byte.
func (s *FileStore) Save(ctx context.Context, key string, r *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("create token directory: %w", err)
	}
	// MkdirAll leaves an existing directory's mode alone.
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return fmt.Errorf("protect token directory: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write token file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	if err := os.Rename(f.Name(), s.path(key)); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	return nil
}

// Delete removes the record of key; a missing one is not an error.
func (s *FileStore) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(s.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete token file: %w", err)
	}
	return nil
}

// Keyring is the part of an OS keychain mcpx uses; [SystemKeyring] is the
// real one. Get returns keyring.ErrNotFound for a missing item.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// SystemKeyring is the OS keychain: macOS Keychain, Windows Credential
// Manager, or the Secret Service (GNOME Keyring, KWallet) over D-Bus.
type SystemKeyring struct{}

func (SystemKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (SystemKeyring) Set(service, user, secret string) error {
	return keyring.Set(service, user, secret)
}
func (SystemKeyring) Delete(service, user string) error { return keyring.Delete(service, user) }

// keyringService names mcpx's items in the keychain.
const keyringService = "mcpx"

// KeyringStore keeps records in an OS keychain. A record too big for the
// keychain (Windows caps an item at 2.5 KB) goes to Fallback instead.
type KeyringStore struct {
	Keyring  Keyring
	Fallback *FileStore
}

// Where names the keychain.
func (s *KeyringStore) Where() string { return "the OS keychain" }

// Load reads the record of key from the keychain, or from the fallback
// file when the keychain has none.
func (s *KeyringStore) Load(ctx context.Context, key string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := s.Keyring.Get(keyringService, key)
	if errors.Is(err, keyring.ErrNotFound) {
		if s.Fallback != nil {
			return s.Fallback.Load(ctx, key)
		}
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read keychain: %w", err)
	}
	var r Record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return nil, fmt.Errorf("keychain item %s/%s is damaged: %w", keyringService, key, err)
	}
	return &r, nil
}

// Save writes the record of key to the keychain.
func (s *KeyringStore) Save(ctx context.Context, key string, r *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = s.Keyring.Set(keyringService, key, string(b))
	if errors.Is(err, keyring.ErrSetDataTooBig) && s.Fallback != nil {
		_ = s.Keyring.Delete(keyringService, key)
		return s.Fallback.Save(ctx, key, r)
	}
	if err != nil {
		return fmt.Errorf("write keychain: %w", err)
	}
	if s.Fallback != nil {
		// A record that once was too big may linger in the file.
		_ = s.Fallback.Delete(ctx, key)
	}
	return nil
}

// Delete removes the record of key from the keychain and the fallback.
func (s *KeyringStore) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.Keyring.Delete(keyringService, key); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("delete from keychain: %w", err)
	}
	if s.Fallback != nil {
		return s.Fallback.Delete(ctx, key)
	}
	return nil
}

// StoreOptions choose where tokens are kept. A nil *StoreOptions means the
// defaults of each field.
type StoreOptions struct {
	// Dir is the directory of the token files; "" means "mcpx/tokens" under
	// the user's config directory (os.UserConfigDir).
	Dir string
	// Keyring is the keychain to try first; nil means [SystemKeyring].
	Keyring Keyring
	// NoKeyring skips the keychain: tokens go to files (MCPX_KEYRING=off).
	NoKeyring bool
	// ProbeTimeout bounds the check that the keychain answers (a Secret
	// Service that is not running can make D-Bus wait); default 3s.
	ProbeTimeout time.Duration
}

// OpenStore returns the OS keychain when it answers, else a [FileStore].
// The decision is made once, on the store's first use, by asking the
// keychain for an item that does not exist: "not found" means it works;
// any other error, or no answer in time, means there is none (a Linux box
// without a desktop session). Deferring it keeps the probe, a D-Bus round
// trip or up to ProbeTimeout when the Secret Service hangs, out of every
// start that never reads a login: most have no remote server at all.
func OpenStore(opts *StoreOptions) (Store, error) {
	var o StoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("find the config directory for tokens: %w", err)
		}
		o.Dir = filepath.Join(base, "mcpx", "tokens")
	}
	if o.Keyring == nil {
		o.Keyring = SystemKeyring{}
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 3 * time.Second
	}
	files := &FileStore{Dir: o.Dir}
	if o.NoKeyring {
		return files, nil
	}
	return &probedStore{keyring: o.Keyring, files: files, timeout: o.ProbeTimeout}, nil
}

// probedStore is the keychain or the files, whichever the first use finds
// working.
type probedStore struct {
	keyring Keyring
	files   *FileStore
	timeout time.Duration

	once  sync.Once
	store Store
}

func (p *probedStore) chosen() Store {
	p.once.Do(func() {
		p.store = p.files
		if keyringWorks(p.keyring, p.timeout) {
			p.store = &KeyringStore{Keyring: p.keyring, Fallback: p.files}
		}
	})
	return p.store
}

func (p *probedStore) Load(ctx context.Context, key string) (*Record, error) {
	return p.chosen().Load(ctx, key)
}

func (p *probedStore) Save(ctx context.Context, key string, r *Record) error {
	return p.chosen().Save(ctx, key, r)
}

func (p *probedStore) Delete(ctx context.Context, key string) error {
	return p.chosen().Delete(ctx, key)
}

func (p *probedStore) Where() string { return p.chosen().Where() }

func keyringWorks(k Keyring, timeout time.Duration) bool {
	done := make(chan error, 1)
	go func() {
		_, err := k.Get(keyringService, "mcpx-probe")
		done <- err
	}()
	select {
	case err := <-done:
		return errors.Is(err, keyring.ErrNotFound)
	case <-time.After(timeout):
		return false
	}
}
