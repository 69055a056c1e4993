// Package testenv owns what mcpx's tests share about the world they run
// in: the peers some tests need (Node with the npm packages pinned in
// testdata/node, Chromium), and the two tools for watching concurrent
// work, a [Buffer] safe for a logger's goroutines and [Eventually], the
// one poll with a deadline.
//
// A test that needs a peer asks for it first:
//
//	dir := testenv.NeedNodePeers(t) // testdata/node, its packages installed, node on PATH
//	bin := testenv.NeedChromium(t)
//
// A missing peer skips the test with a message naming the peer and the
// command that installs it, so `go test ./...` passes on a fresh clone.
// With MCPX_REQUIRE_PEERS=1, which scripts/test and CI set, the same
// message fails the test instead, so CI never silently runs less.
package testenv
