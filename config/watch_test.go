package config_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
)

type reload struct {
	cfg *config.Config
	ch  config.Changes
	err error
}

func watch(t *testing.T, cfg *config.Config, lo *config.LoadOptions) (*config.Watcher, chan reload) {
	t.Helper()
	got := make(chan reload, 16)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := config.Watch(ctx, cfg, &config.WatchOptions{Load: lo,
		OnReload: func(next *config.Config, ch config.Changes) { got <- reload{cfg: next, ch: ch} },
		OnError:  func(err error) { got <- reload{err: err} },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-w.Done() })
	return w, got
}

func next(t *testing.T, got chan reload) reload {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reload within 10s")
		return reload{}
	}
}

func TestWatchRenameSave(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcpx.json")
	write := func(content string) {
		tmp := filepath.Join(dir, "mcpx.json~")
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"servers": {"a": {"command": "a"}, "b": {"command": "b"}, "c": {"command": "c"}}}`)
	lo := &config.LoadOptions{File: p, LookupEnv: env()}
	cfg, err := config.Load(lo)
	if err != nil {
		t.Fatal(err)
	}
	_, got := watch(t, cfg, lo)

	write(`{"servers": {"a": {"command": "a"}, "b": {"command": "b", "args": ["x"]}, "d": {"command": "d"}}}`)
	r := next(t, got)
	if r.err != nil || !slices.Equal(r.ch.Added, []string{"d"}) || !slices.Equal(r.ch.Removed, []string{"c"}) ||
		!slices.Equal(r.ch.Changed, []string{"b"}) {
		t.Fatalf("reload = %+v, %v", r.ch, r.err)
	}
	write(`{"servers": {"a": `)
	if r := next(t, got); r.err == nil {
		t.Fatalf("an invalid file reloaded: %+v", r.ch)
	}
	// Changes are still against the last good config.
	write(`{"servers": {"a": {"command": "a"}, "b": {"command": "b", "args": ["x"]}}}`)
	if r := next(t, got); r.err != nil || !slices.Equal(r.ch.Removed, []string{"d"}) || len(r.ch.Added)+len(r.ch.Changed) > 0 {
		t.Fatalf("after the invalid file: %+v, %v", r.ch, r.err)
	}
}

// With no file, Reload looks for one, and then watches it.
func TestWatchNoFileYet(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	lo := &config.LoadOptions{ConfigHome: home, WorkDir: work, LookupEnv: env()}
	cfg, err := config.Load(lo)
	if err != nil || cfg.File != "" {
		t.Fatalf("Load = %v, %v", cfg, err)
	}
	w, got := watch(t, cfg, lo)
	file := filepath.Join(home, "mcpx", "config.json")
	if err := config.AddServer(file, "a", config.Entry{Command: "a"}, false); err != nil {
		t.Fatal(err)
	}
	w.Reload()
	if r := next(t, got); r.err != nil || r.cfg.File != file || !slices.Equal(r.ch.Added, []string{"a"}) {
		t.Fatalf("reload = %+v, %v", r, r.err)
	}
	if err := config.AddServer(file, "b", config.Entry{Command: "b"}, false); err != nil {
		t.Fatal(err)
	}
	if r := next(t, got); r.err != nil || !slices.Equal(r.ch.Added, []string{"b"}) {
		t.Fatalf("the found file is not watched: %+v, %v", r.ch, r.err)
	}
}

// TestWatchUnwatchable: a config whose directory cannot be watched is
// still served: Watch returns, and OnError says why edits will not be
// seen.
func TestWatchUnwatchable(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone", "mcpx.json")
	cfg := &config.Config{File: gone}
	_, got := watch(t, cfg, &config.LoadOptions{File: gone, LookupEnv: env()})
	r := next(t, got)
	if !errors.Is(r.err, config.ErrUnwatched) || !strings.Contains(r.err.Error(), "gone") {
		t.Errorf("OnError got %v, want ErrUnwatched naming the directory", r.err)
	}
}
