package upstream

import (
	"context"
	"sync"

	"github.com/mcpx/mcpx/config"
)

// StartAll starts a Client for each server at once and returns them in
// the order given, without waiting for any of them.
func StartAll(ctx context.Context, servers []config.Server, opts *Options) []*Client {
	clients := make([]*Client, len(servers))
	for i, s := range servers {
		clients[i] = New(s, opts)
	}
	StartEach(ctx, clients)
	return clients
}

// StartEach starts the clients, as Start does each: every one is
// starting when it returns. Their connect loops are begun by one
// goroutine of its own: begun here, a thousand of them, each starting a
// process, were run ahead of the caller, which then took 0.3 s to
// return (and serve as long to answer initialize).
func StartEach(ctx context.Context, clients []*Client) {
	runs := make([]func(), 0, len(clients))
	for _, c := range clients {
		if run := c.start(ctx); run != nil {
			runs = append(runs, run)
		}
	}
	if len(runs) == 0 {
		return
	}
	go func() {
		for _, run := range runs {
			go run()
		}
	}()
}

// WaitReady waits until every client has finished its first connect
// attempt, or ctx ends.
func WaitReady(ctx context.Context, clients []*Client) {
	for _, c := range clients {
		select {
		case <-c.Ready():
		case <-ctx.Done():
			return
		}
	}
}

// CloseAll closes the clients in parallel, so that shutdown takes as long
// as the slowest server rather than the sum of all.
func CloseAll(clients []*Client) {
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
}

// KillAll sends SIGKILL to every client's process group at once; see
// [Client.Kill].
func KillAll(clients []*Client) {
	for _, c := range clients {
		c.Kill()
	}
}

// WaitKnown waits until every client has a catalog to show (remembered,
// or from its first connect attempt), or ctx ends.
func WaitKnown(ctx context.Context, clients []*Client) {
	for _, c := range clients {
		select {
		case <-c.Known():
		case <-ctx.Done():
			return
		}
	}
}
