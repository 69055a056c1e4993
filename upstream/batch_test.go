package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// TestBatchHoldsUntilFlush: requests sent under a Batch reach the server
// only at Flush, together and in order, and each still gets its own
// answer.
func TestBatchHoldsUntilFlush(t *testing.T) {
	tr, serverIn, serverOut := pipePair(t)
	var b Batch
	answers := make(chan string, 3)
	for i := range 3 {
		key := fmt.Sprintf(`"r%d"`, i)
		line := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", key))
		tr.start(context.Background(), &b, key, line, func(resp *transport.JSONRPCResponse, err error) {
			if err != nil {
				answers <- "error: " + err.Error()
				return
			}
			answers <- string(resp.Result)
		})
	}
	// Nothing may be readable yet: a read with a deadline already past
	// returns at once.
	serverIn.SetReadDeadline(time.Now())
	if n, err := serverIn.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server could read %d bytes before Flush (err %v)", n, err)
	}
	serverIn.SetReadDeadline(time.Time{})
	b.Flush()
	r := bufio.NewReader(serverIn)
	for i := range 3 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":"ping"}`+"\n", i)
		if line != want {
			t.Fatalf("line %d = %q, want %q", i, line, want)
		}
		fmt.Fprintf(serverOut, `{"jsonrpc":"2.0","id":"r%d","result":{"n":%d}}`+"\n", i, i)
	}
	for i := range 3 {
		if got, want := <-answers, fmt.Sprintf(`{"n":%d}`, i); got != want {
			t.Errorf("answer %d = %s, want %s", i, got, want)
		}
	}
	if len(b.pipes) != 0 {
		t.Errorf("the batch still lists %d pipes after Flush", len(b.pipes))
	}
}
