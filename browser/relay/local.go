package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"log/slog"
)

// DefaultAddr is where the Blueprint extension looks for a relay when it
// has no token ("free mode"): ws://127.0.0.1:5555/extension.
const DefaultAddr = "127.0.0.1:5555"

// Roles of a [Local].
const (
	RoleHosting = "hosting" // this process serves the relay
	RoleJoined  = "joined"  // another process does; this one is its client
)

// LocalOptions configure [NewLocal]. Zero values mean the defaults given.
type LocalOptions struct {
	// Addr is the loopback address to host on or join (DefaultAddr).
	Addr string
	// SecretFile holds the per-user secret that MCP clients present on
	// /mcp; the host creates it (mode 0600) when missing and every joiner
	// reads it. Default: [DefaultSecretFile].
	SecretFile string
	// ExtensionIDs, StatusInterval, ReadLimit and Logger are passed to
	// the [Server] when this process hosts.
	ExtensionIDs   []string
	StatusInterval time.Duration
	ReadLimit      int64
	Logger         *slog.Logger
}

// DefaultSecretFile is mcpx/relay-secret in the user's config directory
// (~/.config on Linux): one place that every mcpx of the user finds,
// whatever environment its client started it with.
func DefaultSecretFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("relay secret: %w", err)
	}
	return filepath.Join(dir, "mcpx", "relay-secret"), nil
}

// Local is the relay as mcpx runs it on the user's machine: the first
// process to bind the address hosts it; the others join it as MCP
// clients; when the host goes, the next [Local.Prepare] of a joiner binds
// the address and hosts in its place. Safe for concurrent use.
type Local struct {
	opts LocalOptions

	mu     sync.Mutex
	role   string
	server *Server
	secret string
	closed bool
	wg     sync.WaitGroup
}

// NewLocal checks the options. Nothing listens until [Local.Prepare].
func NewLocal(opts LocalOptions) (*Local, error) {
	if opts.Addr == "" {
		opts.Addr = DefaultAddr
	}
	if err := CheckLoopback(opts.Addr); err != nil {
		return nil, err
	}
	if opts.SecretFile == "" {
		f, err := DefaultSecretFile()
		if err != nil {
			return nil, err
		}
		opts.SecretFile = f
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Local{opts: opts}, nil
}

// CheckLoopback says why addr (host:port) is not a loopback address that
// a relay may listen on, or returns nil.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %v", addr, err)
	}
	if port == "" {
		return fmt.Errorf("%q has no port", addr)
	}
	if !loopbackHost(host) {
		return fmt.Errorf("%q is not a loopback address: the relay is a door into your logged-in browser, so it listens on 127.0.0.1, ::1 or localhost only", addr)
	}
	return nil
}

// MCPURL is the relay's MCP endpoint on the address.
func (l *Local) MCPURL() string { return "ws://" + l.opts.Addr + "/mcp" }

// ExtensionURL is where extensions connect.
func (l *Local) ExtensionURL() string { return "ws://" + l.opts.Addr + "/extension" }

// Addr is the address hosted or joined.
func (l *Local) Addr() string { return l.opts.Addr }

// Role is RoleHosting, RoleJoined, or "" before the first Prepare.
func (l *Local) Role() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.role
}

// Stats reports the hosted relay's peers; ok is false when this process
// does not host.
func (l *Local) Stats() (st Stats, ok bool) {
	l.mu.Lock()
	srv := l.server
	l.mu.Unlock()
	if srv == nil {
		return Stats{}, false
	}
	return srv.Stats(), true
}

// Prepare runs before each dial of the relay: it hosts the relay when the
// address is free (the host went, or there never was one) and returns the
// header that authenticates this process on /mcp.
func (l *Local) Prepare(ctx context.Context) (http.Header, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errors.New("local relay: closed")
	}
	// Host and joiners alike: whoever comes first creates it, so that the
	// secret a joiner presents is always the one the host checks.
	secret, err := ensureSecret(ctx, l.opts.SecretFile)
	if err != nil {
		return nil, err
	}
	if l.server == nil {
		if err := l.hostLocked(secret); err != nil {
			return nil, err
		}
	}
	if l.role == RoleJoined {
		l.secret = secret
	}
	return http.Header{"Authorization": {"Bearer " + l.secret}}, nil
}

// hostLocked binds the address and serves the relay on it, or notes that
// another process holds it.
func (l *Local) hostLocked(secret string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", l.opts.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			if l.role != RoleJoined {
				l.opts.Logger.Info("browser relay: joining the one on " + l.opts.Addr)
			}
			l.role = RoleJoined
			return nil
		}
		return fmt.Errorf("browser relay: listen on %s: %w", l.opts.Addr, err)
	}
	l.server = New(&Options{Secret: secret, ExtensionIDs: l.opts.ExtensionIDs,
		StatusInterval: l.opts.StatusInterval, ReadLimit: l.opts.ReadLimit, Logger: l.opts.Logger})
	l.secret = secret
	if l.role == RoleJoined {
		l.opts.Logger.Info("browser relay: the host went; hosting on " + l.opts.Addr + " now")
	} else {
		l.opts.Logger.Info("browser relay: hosting on " + l.opts.Addr)
	}
	l.role = RoleHosting
	srv := l.server
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if err := srv.Serve(ln); err != nil {
			l.opts.Logger.Error("browser relay stopped", "err", err)
		}
	}()
	return nil
}

// Close stops hosting, if this process hosts. Joined peers find the
// address free and one of them takes over. Idempotent.
func (l *Local) Close() error {
	l.mu.Lock()
	srv := l.server
	l.closed, l.server = true, nil
	l.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	l.wg.Wait()
	return nil
}

// ensureSecret returns the secret in file, creating it (0600, in a 0700
// directory) when it is missing or others could read it. It is created
// with O_EXCL, so of several processes starting at once exactly one
// writes it and all of them read the same secret.
func ensureSecret(ctx context.Context, file string) (string, error) {
	for try := 0; ; try++ {
		s, err := readSecret(file)
		if err == nil {
			return s, nil
		}
		// A file others could read, or one that stays unreadable for
		// longer than any writer takes, is replaced by a new one.
		if errors.Is(err, errExposed) || try == 50 {
			_ = os.Remove(file)
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return "", fmt.Errorf("relay secret: %w", err)
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			secret := hex.EncodeToString(b)
			_, err = f.WriteString(secret + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return "", fmt.Errorf("relay secret %s: %w", file, err)
			}
			return secret, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("relay secret %s: %w", file, err)
		}
		// Another process is writing it this very moment.
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("relay secret %s: %w", file, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// errExposed is wrapped by readSecret's error for a file others may read.
var errExposed = errors.New("others could read it")

// readSecret reads the secret and refuses a file that others may read:
// anyone who can read it can drive the browser.
func readSecret(file string) (string, error) {
	fi, err := os.Stat(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no relay secret at %s (is the process on that address an mcpx relay?)", file)
		}
		return "", fmt.Errorf("relay secret: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("relay secret %s has mode %04o: %w; want 0600", file, perm, errExposed)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("relay secret: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 32 {
		return "", fmt.Errorf("relay secret %s is too short", file)
	}
	return s, nil
}

// Run hosts the relay on opts.Addr in the foreground until ctx ends, for
// people who keep one running (mcpx relay). An address someone else holds
// is an error: there is nothing to join to.
func Run(ctx context.Context, opts LocalOptions) error {
	l, err := NewLocal(opts)
	if err != nil {
		return err
	}
	secret, err := ensureSecret(ctx, l.opts.SecretFile)
	if err != nil {
		return err
	}
	l.mu.Lock()
	err = l.hostLocked(secret)
	role := l.role
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if role != RoleHosting {
		return fmt.Errorf("%s is taken: a relay (an mcpx serve with \"browser\": {}, or another mcpx relay) already listens there", l.opts.Addr)
	}
	<-ctx.Done()
	return l.Close()
}
