package stdio

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/callopt"
	"github.com/mcpx/mcpx/jsonrpc"
)

// TestBatchHoldsUntilFlush: requests sent under a Batch reach the server
// only at Flush, together and in order, and each still gets its own
// answer. The pipe keeps its buffer for the next batch, which carries
// only its own lines.
func TestBatchHoldsUntilFlush(t *testing.T) {
	tr, serverIn, serverOut := pipePair(t)
	r := bufio.NewReader(serverIn)
	for round := range 2 {
		var b callopt.Batch
		answers := make(chan string, 3)
		for i := range 3 {
			key := fmt.Sprintf(`"r%d-%d"`, round, i)
			line := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", key))
			tr.Begin(context.Background(), &b, key, line, func(resp *jsonrpc.Message, err error) {
				if err != nil {
					answers <- "error: " + err.Error()
					return
				}
				answers <- string(resp.Result)
			})
		}
		if n := buffered(t, serverIn); n != 0 {
			t.Fatalf("round %d: the server could read %d bytes before Flush", round, n)
		}
		b.Flush()
		for i := range 3 {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d-%d","method":"ping"}`+"\n", round, i)
			if line != want {
				t.Fatalf("round %d: line %d = %q, want %q", round, i, line, want)
			}
			fmt.Fprintf(serverOut, `{"jsonrpc":"2.0","id":"r%d-%d","result":{"n":%d}}`+"\n", round, i, i)
		}
		for i := range 3 {
			if got, want := <-answers, fmt.Sprintf(`{"n":%d}`, i); got != want {
				t.Errorf("round %d: answer %d = %s, want %s", round, i, got, want)
			}
		}
		if b.Len() != 0 {
			t.Errorf("the batch still lists %d pipes after Flush", b.Len())
		}
		tr.held.mu.Lock()
		kept := tr.held.lines != nil && len(tr.held.lines) == 0 && len(tr.held.failed) == 0
		tr.held.mu.Unlock()
		if !kept {
			t.Errorf("round %d: the pipe did not keep an empty buffer after a write done at once", round)
		}
	}
	if n := buffered(t, serverIn); n != 0 {
		t.Errorf("the server got %d bytes more than the two batches", n)
	}
}

// flushCounter is a Flusher that reports each Flush.
type flushCounter chan struct{}

func (f flushCounter) Flush() { f <- struct{}{} }

// TestFlushAfterDroppedLine: answers held for one write are flushed once
// the reader has delivered what it read, even when the last line read was
// over the size limit and dropped.
func TestFlushAfterDroppedLine(t *testing.T) {
	// A limit well under the reader's buffer, so that the over-long line
	// is read whole together with the answer before it.
	tr, serverIn, serverOut := pipePairLimit(t, 1024)
	flushed := make(flushCounter, 1)
	tr.Begin(context.Background(), nil, `"r1"`, []byte(`{"jsonrpc":"2.0","id":"r1","method":"ping"}`+"\n"),
		func(resp *jsonrpc.Message, err error) {
			if err == nil {
				tr.FlushAfterRead(flushed) // as conn.start does on the reader
			}
		})
	if _, err := bufio.NewReader(serverIn).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// The answer and, in the same write, a notification over the limit,
	// then nothing.
	huge := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 2048) + `"}}`
	go fmt.Fprintf(serverOut, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":{}}\n%s\n", huge)
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("the held answer was not flushed after the reader dropped an over-long line")
	}
}

// TestReaderHoldsWhatItLetsOut: requests sent while the reader delivers
// what it read (the calls its answers let out of the maxConcurrent line)
// reach the server only once everything read is delivered, in one write.
func TestReaderHoldsWhatItLetsOut(t *testing.T) {
	tr, serverIn, serverOut := pipePair(t)
	ctx := context.Background()
	ignore := func(*jsonrpc.Message, error) {}
	follow := func(i int) {
		key := fmt.Sprintf(`"f%d"`, i)
		tr.Begin(ctx, nil, key, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", key)), ignore)
	}
	early := make(chan string, 1)
	tr.Begin(ctx, nil, `"r0"`, []byte(`{"jsonrpc":"2.0","id":"r0","method":"ping"}`+"\n"), func(*jsonrpc.Message, error) { follow(0) })
	tr.Begin(ctx, nil, `"r1"`, []byte(`{"jsonrpc":"2.0","id":"r1","method":"ping"}`+"\n"), func(*jsonrpc.Message, error) {
		// f0 was sent by now, on this same reader: it must not be out yet.
		if n := buffered(t, serverIn); n != 0 {
			early <- fmt.Sprintf("the server could read %d bytes while the reader was delivering", n)
		} else {
			early <- ""
		}
		follow(1)
	})
	r := bufio.NewReader(serverIn)
	for range 2 {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	// Both answers in one write, so the reader delivers them together.
	fmt.Fprint(serverOut, `{"jsonrpc":"2.0","id":"r0","result":{}}`+"\n"+`{"jsonrpc":"2.0","id":"r1","result":{}}`+"\n")
	if msg := <-early; msg != "" {
		t.Fatal(msg)
	}
	for i := range 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":"f%d","method":"ping"}`+"\n", i); line != want {
			t.Errorf("line %d = %q, want %q", i, line, want)
		}
	}
}
