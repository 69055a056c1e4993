package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/jsonrpc"
)

// pipePair is a Transport and the server's ends of its pipes.
func pipePair(t *testing.T) (*Transport, *os.File, *os.File) {
	t.Helper()
	return pipePairLimit(t, 1<<20)
}

// pipePairLimit is pipePair with lines of at most max bytes.
func pipePairLimit(t *testing.T, max int64) (*Transport, *os.File, *os.File) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	tr := New(inW, outR, Options{Max: max})
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close(); inR.Close(); outW.Close(); outR.Close() })
	return tr, inR, outW
}

// TestPipeTransportResultBytes: a result reaches the caller as the bytes
// the server wrote (spacing, key order, escapes), and a notification
// written before it is delivered first.
func TestPipeTransportResultBytes(t *testing.T) {
	tr, serverIn, serverOut := pipePair(t)
	var notes []string
	tr.SetNotificationHandler(func(n jsonrpc.Message) { notes = append(notes, n.Method) })
	result := `{ "z" : 1,"a":"\u00e9\"}", "n":[{},[]] }`
	go func() {
		line, err := bufio.NewReader(serverIn).ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct{ ID json.RawMessage }
		_ = json.Unmarshal(line, &req)
		fmt.Fprintf(serverOut, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n")
		fmt.Fprintf(serverOut, "{\"result\":%s , \"id\":%s,\"jsonrpc\":\"2.0\"}\n", result, req.ID)
	}()
	resp, err := tr.SendRequest(context.Background(), jsonrpc.Message{ID: json.RawMessage(`"r1"`), Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Result) != result {
		t.Errorf("result = %s, want %s", resp.Result, result)
	}
	if len(notes) != 1 || notes[0] != "notifications/progress" {
		t.Errorf("notifications before the result = %v", notes)
	}
}

// TestPipeTransportDeafServer: a request the server never reads ends with
// the caller's context; one cut in the middle breaks the transport, and
// the connection is told.
func TestPipeTransportDeafServer(t *testing.T) {
	tr, _, _ := pipePair(t)
	broken := make(chan error, 1)
	tr.broken = func(err error) { broken <- err }
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	big := json.RawMessage(`{"s":"` + strings.Repeat("x", 1<<20) + `"}`)
	_, err := tr.SendRequest(ctx, jsonrpc.Message{ID: json.RawMessage(`1`), Method: "tools/call", Params: big})
	if !errors.Is(err, errDeaf) {
		t.Fatalf("err = %v, want errDeaf", err)
	}
	select {
	case err := <-broken:
		if !errors.Is(err, errDeaf) {
			t.Errorf("broken with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection was not told that the transport broke")
	}
	if _, err := tr.SendRequest(context.Background(), jsonrpc.Message{ID: json.RawMessage(`2`), Method: "ping"}); !errors.Is(err, errDeaf) {
		t.Errorf("a request after the break: %v, want errDeaf", err)
	}
}

// TestRequestLineIsJSON: a method passed through from a client is written
// as a JSON string whatever it holds (Go's quoting would write \x7f).
func TestRequestLineIsJSON(t *testing.T) {
	for _, method := range []string{"tools/call", "x/\x7f", "é/ü", `a"b\c`} {
		line := RequestLine(json.RawMessage(`"mcpx-1"`), method, json.RawMessage(`{"a":1}`))
		var m struct{ Method string }
		if err := json.Unmarshal(line, &m); err != nil || m.Method != method {
			t.Errorf("RequestLine(%q) = %s: method %q, %v", method, line, m.Method, err)
		}
	}
}

// TestPipeTransportServerRequestID: a request from the server is answered
// with its id as the server wrote it, a number past 2^53 included (read
// through a float64, its last digit would change), and its params reach
// the handler as sent.
func TestPipeTransportServerRequestID(t *testing.T) {
	tr, serverIn, serverOut := pipePair(t)
	got := make(chan jsonrpc.Message, 1)
	tr.SetRequestHandler(func(_ context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
		got <- req
		return jsonrpc.NewResult(req.ID, json.RawMessage(`{"roots":[]}`)), nil
	})
	fmt.Fprintln(serverOut, `{"jsonrpc":"2.0","id":9007199254740993,"method":"roots/list","params":{"x":[1, 2]}}`)
	line, err := bufio.NewReader(serverIn).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":9007199254740993,"result":{"roots":[]}}` + "\n"; string(line) != want {
		t.Errorf("answer = %s, want %s", line, want)
	}
	if req := <-got; req.Method != "roots/list" || string(req.Params) != `{"x":[1, 2]}` {
		t.Errorf("the handler got %s %s", req.Method, req.Params)
	}
	tr.SetRequestHandler(nil)
	fmt.Fprintln(serverOut, `{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage"}`)
	line, _ = bufio.NewReader(serverIn).ReadBytes('\n')
	if want := `{"jsonrpc":"2.0","id":"s-1","error":{"code":-32601,"message":"mcpx does not support sampling/createMessage"}}` + "\n"; string(line) != want {
		t.Errorf("answer without a handler = %s, want %s", line, want)
	}
}

// TestPipeTransportNotificationParams: a notification's params reach the
// handler as the server wrote them; params that are not JSON (which the
// envelope's scan alone would let through) drop the notification.
func TestPipeTransportNotificationParams(t *testing.T) {
	tr, _, serverOut := pipePair(t)
	got := make(chan string, 2)
	tr.SetNotificationHandler(func(n jsonrpc.Message) { got <- n.Method + " " + string(n.Params) })
	fmt.Fprintln(serverOut, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":tru}}`)
	fmt.Fprintln(serverOut, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":18446744073709551617, "x":"\u00e9"}}`)
	if g, want := <-got, `notifications/progress {"progress":18446744073709551617, "x":"\u00e9"}`; g != want {
		t.Errorf("delivered first: %s\nwant: %s", g, want)
	}
}
