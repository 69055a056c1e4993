package aggregator

import (
	"context"
	"slices"
	"testing"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// TestToolServers: the servers a call starts and waits for, by prefix while nothing
// is connected: the longest matching prefix wins, servers without a
// prefix are the fallback, disabled servers never count, and a name
// that tells nothing (no prefix matches, or mcpx's own proxy tool) means
// every server.
func TestToolServers(t *testing.T) {
	server := func(name, prefix string, enabled bool) config.Server {
		return config.Server{Name: name, Prefix: prefix, Enabled: enabled, Transport: config.TransportStdio, Command: "never-started"}
	}
	agg := func(servers ...config.Server) *Aggregator {
		a := New(&config.Config{Separator: "_", Servers: servers}, nil)
		for _, s := range servers {
			c := upstream.New(s, nil) // never started: starting, nothing listed
			a.upstreams = append(a.upstreams, c)
			a.members = append(a.members, &member{src: c, prefix: s.Prefix})
		}
		return a
	}
	withBare := agg(server("memory", "memory", true), server("mem", "mem", true), server("mem_x", "mem_x", true),
		server("bare", "", true), server("bare2", "", true), server("off", "off", false))
	prefixed := agg(server("memory", "memory", true), server("off", "off", false))
	spaced := agg(server("my server", "my server", true), server("other", "other", true))
	for _, tc := range []struct {
		a    *Aggregator
		name string
		want []string
	}{
		{withBare, "memory_read_graph", []string{"memory"}},
		{withBare, "mem_create", []string{"mem"}},
		{withBare, "mem_x_create", []string{"mem_x"}},
		{withBare, "echo", []string{"bare", "bare2"}},
		{withBare, "off_echo", []string{"bare", "bare2"}},
		{withBare, "proxy", nil},
		{prefixed, "memory_read_graph", []string{"memory"}},
		{prefixed, "echo", nil},
		{prefixed, "off_echo", nil},
		{spaced, "my_server_echo", []string{"my server"}}, // the prefix as names carry it, cleaned
	} {
		if got, found := tc.a.Owners(tc.name, proxytool.KindTool); !slices.Equal(got, tc.want) || found {
			t.Errorf("Owners(%q, tool) = %q, %v; want %q, false", tc.name, got, found, tc.want)
		}
	}
}

// TestPendingOwnerCleanedPrefix: a call of my_server_echo waits for the
// server "my server" to connect, whose names carry its prefix cleaned.
func TestPendingOwnerCleanedPrefix(t *testing.T) {
	s := config.Server{Name: "my server", Prefix: "my server", Enabled: true, Transport: config.TransportStdio, Command: "never-started"}
	a := New(&config.Config{Separator: "_", Servers: []config.Server{s}}, nil)
	c := upstream.New(s, nil) // never started: starting
	a.upstreams = append(a.upstreams, c)
	a.members = append(a.members, &member{src: c, prefix: s.Prefix})
	if got, _ := a.pendingOwner("my_server_echo"); got != c {
		t.Errorf("pendingOwner(my_server_echo) = %v, want the server \"my server\"", got)
	}
}

// TestWaitStarted: once every upstream has made its first attempt (one
// disabled, one whose config has a problem: both over at once), the
// catalog holds what the sources list and its search index is made.
func TestWaitStarted(t *testing.T) {
	servers := []config.Server{
		{Name: "off", Enabled: false, Transport: config.TransportStdio, Command: "never-started"},
		{Name: "broken", Enabled: true, Transport: config.TransportStdio, Command: "never-started", Problem: "no such variable"},
	}
	a := New(&config.Config{Separator: "_", Servers: servers}, nil)
	a.Start(context.Background())
	defer a.Close()
	src := &fakeSource{name: "fake", tools: raws(t, `{"name":"echo","description":"Echo the text.","inputSchema":{"type":"object"}}`)}
	a.srvMu.Lock()
	a.members = append(a.members, mem(src, "fake"))
	a.srvMu.Unlock()
	if err := a.WaitStarted(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := a.Catalog()
	if _, ok := c.Tool("fake_echo"); !ok {
		t.Fatal("the catalog after WaitStarted lacks a source's tool")
	}
	// Through the index's Once: the warm-up after start may be making
	// it still, and reading ix beside it is a race.
	if c.search.kinds[kindIndex(proxytool.KindTool)].index(c.search) == nil {
		t.Error("the search index was not made")
	}
}
