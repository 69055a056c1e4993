package core

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/nbpipe"
)

// pipeOutbox is a running outbox over a pipe, with messages of at most
// max bytes (0: no limit), and the pipe's end the client reads.
func pipeOutbox(t *testing.T, max int64) (*outbox, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	nw, ok := nbpipe.NewWriter(w)
	if !ok {
		t.Fatal("os.Pipe's end cannot be written without waiting")
	}
	o := newOutbox(ctx, nw, slog.New(slog.DiscardHandler), max)
	if o.try == nil {
		t.Fatal("an outbox over os.Pipe does not write without waiting")
	}
	go o.run(cancel)
	t.Cleanup(func() { cancel(nil); r.Close(); w.Close() })
	return o, r
}

// TestOutboxFlushNeverWaits: answers held and flushed from an upstream's reader to a
// client that does not read go out later, whole and in order, and post
// and Flush return at once, whether the pipe took the answer in part (the
// rest carried ahead of the queue) or not at all.
func TestOutboxFlushNeverWaits(t *testing.T) {
	o, r := pipeOutbox(t, 0)

	big := `{"content":[{"type":"text","text":"` + strings.Repeat("a", 1<<20) + `"}]}`
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		o.hold(json.RawMessage("1"), json.RawMessage(big)) // more than the pipe holds
		o.Flush()
		o.hold(json.RawMessage("2"), json.RawMessage(`{}`)) // queued behind its rest
		o.Flush()
		o.raw([]byte(`{"jsonrpc":"2.0","method":"x"}`)) // and anything after
		o.hold(json.RawMessage(`"3"`), json.RawMessage(`{}`))
		o.hold(json.RawMessage(`"4"`), json.RawMessage(`{}`)) // two held leave together
		o.Flush()
	}()
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("hold or Flush waited for a client that does not read")
	}

	fr := frame.NewReader(r, 0)
	want := []string{`"id":1,`, `"id":2,`, `"method":"x"`, `"id":"3",`, `"id":"4",`}
	for i, w := range want {
		line, err := fr.Next()
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if !json.Valid(line) || !bytes.Contains(line, []byte(w)) {
			t.Fatalf("line %d = %.80s (%d bytes), want a whole message with %s", i, line, len(line), w)
		}
		if i == 0 && !bytes.Contains(line, []byte(big)) {
			t.Fatal("the large answer lost bytes")
		}
	}
}

// TestOutboxHeldAnswers: answers held together leave as one line each,
// in order, a pretty-printed result compacted and one over
// maxMessageBytes answered with an error instead; the buffer kept after a
// write done at once carries only the next answers.
func TestOutboxHeldAnswers(t *testing.T) {
	o, r := pipeOutbox(t, 200)
	fr := frame.NewReader(r, 0)
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			line, err := fr.Next()
			if err != nil {
				t.Fatal(err)
			}
			for _, part := range strings.Split(w, " && ") {
				if !bytes.Contains(line, []byte(part)) {
					t.Fatalf("got %s, want a line with %s", line, w)
				}
			}
		}
	}

	o.hold(json.RawMessage("1"), json.RawMessage(`{"a":1}`))
	o.hold(json.RawMessage("2"), json.RawMessage("{\n  \"b\": 2\n}"))
	o.Flush()
	expect(`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"b":2}}`)
	o.hmu.Lock()
	kept := o.held != nil && len(o.held) == 0
	o.hmu.Unlock()
	if !kept {
		t.Error("the outbox did not keep an empty buffer after a write done at once")
	}
	o.Flush() // nothing held: nothing written, the buffer still kept
	o.hold(json.RawMessage(`"x"`), json.RawMessage(`{}`))
	o.Flush()
	expect(`{"jsonrpc":"2.0","id":"x","result":{}}`)

	o.hold(json.RawMessage("3"), json.RawMessage(`{"text":"`+strings.Repeat("a", 300)+`"}`))
	o.Flush()
	expect(`"id":3, && "message":"the answer is too large to send`)
	o.hold(json.RawMessage("4"), json.RawMessage(`{}`))
	o.Flush()
	expect(`{"jsonrpc":"2.0","id":4,"result":{}}`)
}

// TestOutboxBigAnswers: a big answer, held among small ones or sent by
// result, leaves whole and in order, over maxMessageBytes becomes an
// error, and is written from where its result is: the outbox allocates
// a small part of it, not a copy.
func TestOutboxBigAnswers(t *testing.T) {
	const limit = 8 << 20
	o, r := pipeOutbox(t, limit)
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("b", 4<<20) + `"}]}`
	answer := func(id, result string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + "}\n" }
	want := answer("1", `{"a":1}`) + answer("2", big) + answer("3", `{"a":3}`) + answer(`"4"`, big)
	// The client reads into a buffer made beforehand, so that what is
	// allocated meanwhile is the outbox's.
	got := make([]byte, len(want))
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(r, got)
		read <- err
	}()
	result := json.RawMessage(big)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	o.hold(json.RawMessage("1"), json.RawMessage(`{"a":1}`))
	o.hold(json.RawMessage("2"), result)
	o.hold(json.RawMessage("3"), json.RawMessage(`{"a":3}`))
	o.Flush()
	o.result(json.RawMessage(`"4"`), result)
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if string(got) != want {
		t.Fatalf("the client read %.200s…, want %.200s…", got, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(big))/8 {
		t.Errorf("two big answers of %d bytes allocated %d bytes in the outbox, want no copy of them", len(big), alloc)
	}

	o.hold(json.RawMessage("5"), json.RawMessage(`{"text":"`+strings.Repeat("c", limit)+`"}`))
	o.Flush()
	line, err := frame.NewReader(r, 0).Next()
	if err != nil || !bytes.Contains(line, []byte(`"id":5,`)) || !bytes.Contains(line, []byte("the answer is too large to send")) {
		t.Errorf("an answer over maxMessageBytes: %.200s (%v)", line, err)
	}
}
