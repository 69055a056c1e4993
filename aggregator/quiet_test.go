package aggregator

import (
	"testing"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/config"
)

// TestQuietClientRouting: the listener every modern client without a
// capability shares is where an upstream's question goes only while one
// of their calls to that upstream is in flight; between calls it is no
// client at all, though it stays registered, and a question goes to a
// served session as if it were not there.
func TestQuietClientRouting(t *testing.T) {
	a := New(&config.Config{Separator: "_", Expose: config.ExposeDirect}, &Options{Serving: true})
	if _, err := a.Modern(); err != nil {
		t.Fatal(err)
	}
	c := served{a}
	quiet := c.begin(&core.Peer{})
	c.end(quiet)
	if l := a.clientFor("fx", "sampling/createMessage", nil); l != nil {
		t.Fatalf("with no session and no call, a question goes to %p, want no client", l)
	}
	var asked []string
	session := &listener{owner: "session", conn: askConn{"session", true, &asked}}
	a.listeners.Store(session, struct{}{})
	defer a.listeners.Delete(session)
	for range 20 { // whatever order Range visits them in
		if l := a.clientFor("fx", "sampling/createMessage", nil); l != session {
			t.Fatalf("between quiet calls a question goes to %p, want the session %p", l, session)
		}
	}
	l := c.begin(&core.Peer{})
	if l != quiet {
		t.Fatalf("a second quiet call has listener %p, want the shared %p", l, quiet)
	}
	endCall := a.callers.begin("fx", l)
	if got := a.clientFor("fx", "sampling/createMessage", nil); got != quiet {
		t.Errorf("during a quiet call to fx a question from fx goes to %p, want the quiet listener %p (which refuses it)", got, quiet)
	}
	endCall()
	c.end(l)
	if got := a.clientFor("fx", "sampling/createMessage", nil); got != session {
		t.Errorf("after the quiet call a question goes to %p, want the session %p", got, session)
	}
}
