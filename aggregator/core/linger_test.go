package core

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// sleepyLegacy is fakeLegacy whose tools take the time delay names,
// or until the call is cancelled.
type sleepyLegacy struct {
	*fakeLegacy
	delay map[string]time.Duration
}

func (f sleepyLegacy) Call(ctx context.Context, c Caller, method string, params json.RawMessage) (json.RawMessage, error) {
	var p struct{ Name string }
	_ = json.Unmarshal(params, &p)
	select {
	case <-time.After(f.delay[p.Name]):
	case <-ctx.Done():
		return nil, &Error{Code: CodeInternalError, Message: "cancelled"}
	}
	return f.fakeLegacy.Call(ctx, c, method, params)
}

// TestLingerAnswersWithinItsTime: a client that ends its input with
// calls in flight (printf ... | mcpx serve --stdio) gets every answer
// that comes within Drain and Linger, the session ends as soon as the
// last is written, and a call still running then is cancelled
// unanswered. In a synctest bubble the session's clock is exact.
func TestLingerAnswersWithinItsTime(t *testing.T) {
	const drain, linger = 2 * time.Second, 5 * time.Second
	cases := []struct {
		name     string
		delay    map[string]time.Duration
		answered []string
		ends     time.Duration
	}{
		{"one quick", map[string]time.Duration{"a": time.Second}, []string{"a"}, time.Second},
		{"within the linger", map[string]time.Duration{"a": time.Second, "b": 6 * time.Second}, []string{"a", "b"}, 6 * time.Second},
		{"past it", map[string]time.Duration{"a": time.Second, "b": time.Hour}, []string{"a"}, drain + linger},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conn := newMemConn(t)
				cat := sleepyLegacy{&fakeLegacy{}, c.delay}
				start := time.Now()
				served := make(chan error, 1)
				go func() {
					served <- ServeLegacy(context.Background(), cat, conn, SessionOptions{ID: "t", Drain: drain, Linger: linger})
				}()
				conn.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				conn.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				for _, name := range slices.Sorted(maps.Keys(c.delay)) {
					conn.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":%q}}`, name, name))
				}
				conn.end()
				if err := <-served; err != nil {
					t.Fatal(err)
				}
				if ends := time.Since(start); ends != c.ends {
					t.Errorf("the session ended after %v, want %v", ends, c.ends)
				}
				var answered []string
				for len(conn.out) > 0 {
					m := <-conn.out
					if id := string(m.Answers); id != "" && id != "0" {
						answered = append(answered, id)
					}
				}
				want := make([]string, len(c.answered))
				for i, a := range c.answered {
					want[i] = fmt.Sprintf("%q", a)
				}
				if !slices.Equal(answered, want) {
					t.Errorf("answered %v, want %v", answered, want)
				}
			})
		})
	}
}

// TestSlowClientLosesNotesNotAnswers: while a client does not read, its
// session neither blocks a source that notifies it (the notifications a
// full queue cannot take are dropped) nor drops an answer, which waits
// for room and arrives once the client reads again.
func TestSlowClientLosesNotesNotAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := newMemConn(t)
		cat := &fakeLegacy{}
		served := make(chan error, 1)
		go func() {
			served <- ServeLegacy(context.Background(), cat, conn, SessionOptions{ID: "t", Drain: time.Second})
		}()
		conn.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		conn.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if m := <-conn.out; string(m.Answers) != "0" {
			t.Fatalf("got %s, want initialize's answer", m.Msg)
		}
		synctest.Wait()
		// The client reads nothing now: the notes fill its Conn's buffer
		// and the session's queue, and the rest go.
		const notes = 4 * QueueLen
		for i := range notes {
			cat.joined.Notify("notifications/message", json.RawMessage(fmt.Sprintf(`{"level":"info","data":%d}`, i)))
		}
		conn.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		synctest.Wait() // the answer waits for room
		kept, answered := 0, false
		for !answered {
			m := <-conn.out
			switch {
			case string(m.Answers) == "1":
				answered = true
			case m.Answers == nil:
				kept++
			}
		}
		t.Logf("%d of %d notes kept", kept, notes)
		if kept == 0 || kept >= notes {
			t.Errorf("%d of %d notes reached a client that did not read, want some dropped and some kept", kept, notes)
		}
		conn.end()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
	})
}
