package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
)

// These fixtures do what no reference server does on purpose: forget a
// session, end a stream early, answer with the wrong content type, point
// the SSE endpoint elsewhere. The everyday paths run against the
// reference server in package upstream (TestEverything*).

func request(id int64, method string) jsonrpc.Message {
	return jsonrpc.Message{JSONRPC: jsonrpc.Version, ID: strconv.AppendInt(nil, id, 10), Method: method}
}

func initialized() jsonrpc.Message {
	return jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: string(mcp.MethodNotificationInitialized)}
}

// readID returns the id of the JSON-RPC message in r's body.
func readID(t *testing.T, r *http.Request) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("the server got unreadable JSON: %s", b)
	}
	return string(m.ID)
}

// noting starts a streamable transport to url that notes each
// notification as its method and params.
func noting(t *testing.T, url string) (*Streamable, context.Context, *[]string) {
	tr := NewStreamable(url, Options{})
	ctx := ctxT(t)
	tr.Start(ctx)
	notes := new([]string)
	tr.SetNotificationHandler(func(n jsonrpc.Message) {
		*notes = append(*notes, n.Method+string(n.Params))
	})
	return tr, ctx, notes
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestStreamableSession: the session id the server gives at initialize,
// and the protocol version agreed, go with every later request, the
// DELETE at Close included; a 404 then means the session is gone, which
// fails the request and ends the connection.
func TestStreamableSession(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	forget := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Mcp-Session-Id")+" "+r.Header.Get("Mcp-Protocol-Version"))
		gone := forget
		mu.Unlock()
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case gone:
			http.Error(w, "no such session", http.StatusNotFound)
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
		default:
			id := readID(t, r)
			if id == "" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Mcp-Session-Id", "sess-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"ok":true}}`, id)
		}
	}))
	defer srv.Close()

	lost := make(chan error, 1)
	tr := NewStreamable(srv.URL, Options{Listen: true, OnLost: func(err error) { lost <- err }, Header: map[string]string{"X-Test": "1"}})
	ctx := ctxT(t)
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := tr.SendRequest(ctx, request(1, "initialize"))
	if err != nil || string(resp.Result) != `{"ok":true}` {
		t.Fatalf("initialize: %v %+v", err, resp)
	}
	tr.SetProtocolVersion("2025-06-18")
	if err := tr.SendNotification(ctx, initialized()); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.SendRequest(ctx, request(2, "tools/list")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	forget = true
	mu.Unlock()
	if _, err := tr.SendRequest(ctx, request(3, "tools/list")); !errors.Is(err, ErrSessionEnded) {
		t.Fatalf("a request after the server forgot the session: %v, want ErrSessionEnded", err)
	}
	select {
	case err := <-lost:
		if !errors.Is(err, ErrSessionEnded) {
			t.Errorf("OnLost got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnLost was not told that the session ended")
	}
	if _, err := tr.SendRequest(ctx, request(4, "ping")); err == nil {
		t.Error("a request after the session ended succeeded")
	}
	tr.Close()

	mu.Lock()
	defer mu.Unlock()
	if seen[0] != "POST  " {
		t.Errorf("initialize went out with %q, want no session and no version", seen[0])
	}
	for _, s := range seen[1:] {
		if !strings.HasSuffix(s, " sess-1 2025-06-18") && !strings.HasPrefix(s, "GET") {
			t.Errorf("a later request went out as %q, want session sess-1 and version 2025-06-18", s)
		}
	}
	if last := seen[len(seen)-1]; last != "DELETE sess-1 2025-06-18" {
		t.Errorf("the last request was %q, want the DELETE that ends the session", last)
	}
}

// TestStreamableEventStream: notifications and a server request that
// come on a POST's stream before the answer are handled, in order and
// before the answer is returned; a stream that ends without the answer,
// or an answer of another content type, is an error that says so.
func TestStreamableEventStream(t *testing.T) {
	answered := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal(b, &m)
		switch {
		case m.Method == "" && m.Result != nil: // the answer to the server's request
			answered <- string(b)
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "cut":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		case m.Method == "html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>")
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, ": hello\n\n")
			for i := 1; i <= 3; i++ {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d}}\n\n", i)
			}
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n")
			w.(http.Flusher).Flush()
			// The answer to roots/list comes first, as with a server that
			// needs it to go on.
			done := "false"
			select {
			case a := <-answered:
				if strings.Contains(a, `"id":"srv-1"`) && strings.Contains(a, `"roots":[]`) {
					done = "true"
				}
			case <-time.After(10 * time.Second):
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"done\":%s}}\n\n", m.ID, done)
		}
	}))
	defer srv.Close()

	tr, ctx, notes := noting(t, srv.URL)
	tr.SetRequestHandler(func(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
		return jsonrpc.NewResult(req.ID, json.RawMessage(`{"roots":[]}`)), nil
	})
	resp, err := tr.SendRequest(ctx, request(1, "tools/call"))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Result) != `{"done":true}` {
		t.Errorf("result %s", resp.Result)
	}
	want := `notifications/progress{"progress":1} notifications/progress{"progress":2} notifications/progress{"progress":3}`
	if got := strings.Join(*notes, " "); got != want {
		t.Errorf("notifications %s, want %s", got, want)
	}

	if _, err := tr.SendRequest(ctx, request(2, "cut")); err == nil || !strings.Contains(err.Error(), "ended the event stream before it answered") {
		t.Errorf("a stream that ends without the answer: %v", err)
	}
	if _, err := tr.SendRequest(ctx, request(3, "html")); err == nil || !strings.Contains(err.Error(), `content type "text/html"`) {
		t.Errorf("an HTML answer: %v", err)
	}
}

// sseServer is a legacy HTTP+SSE server whose endpoint event says
// endpoint; each POSTed request is answered on the stream by answer, and
// end closes the stream.
func sseServer(t *testing.T, endpoint string) (srv *httptest.Server, end func()) {
	msgs := make(chan string, 16)
	done := make(chan struct{})
	var once sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if id := readID(t, r); id != "" {
				msgs <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"echo":%s}}`, id, id)
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", endpoint)
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-msgs:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
				w.(http.Flusher).Flush()
			case <-done:
				return
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() { once.Do(func() { close(done) }) }
}

// TestSSE: requests are answered on the stream; when the server ends the
// stream, a request waiting fails and the connection is lost.
func TestSSE(t *testing.T) {
	srv, end := sseServer(t, "/messages?session=abc")
	lost := make(chan error, 1)
	tr := NewSSE(srv.URL+"/sse", Options{OnLost: func(err error) { lost <- err }})
	ctx := ctxT(t)
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.endpoint != srv.URL+"/messages?session=abc" {
		t.Errorf("endpoint %s", tr.endpoint)
	}
	resp, err := tr.SendRequest(ctx, request(5, "ping"))
	if err != nil || string(resp.Result) != `{"echo":5}` {
		t.Fatalf("ping: %v %+v", err, resp)
	}
	end()
	select {
	case err := <-lost:
		if !strings.Contains(err.Error(), "ended the SSE stream") {
			t.Errorf("OnLost got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnLost was not told that the stream ended")
	}
	if _, err := tr.SendRequest(ctx, request(6, "ping")); err == nil {
		t.Error("a request after the stream ended succeeded")
	}
}

// TestSSEEndpointElsewhere: an endpoint on another origin is refused: the
// POSTs would carry the stream's headers, a token among them, there.
func TestSSEEndpointElsewhere(t *testing.T) {
	srv, _ := sseServer(t, "http://evil.example/steal")
	tr := NewSSE(srv.URL+"/sse", Options{})
	err := tr.Start(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "another origin (http://evil.example)") {
		t.Fatalf("Start: %v, want the other origin refused", err)
	}
	tr.Close()
}

// TestStreamableResumes: a server that ends a request's stream after an
// event ID, before the answer (as a 2025-11-25 server may, to be polled),
// is asked again with a GET carrying Last-Event-ID after the reconnection
// time it set, and the answer that comes there is the request's. A stream
// ended before any event ID fails the request, since it cannot be
// resumed.
func TestStreamableResumes(t *testing.T) {
	var mu sync.Mutex
	var resumedFrom []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Method == http.MethodGet {
			mu.Lock()
			resumedFrom = append(resumedFrom, r.Header.Get("Last-Event-ID"))
			n := len(resumedFrom)
			mu.Unlock()
			if n == 1 { // the first resume ends at once, with one more event
				fmt.Fprint(w, "id: e3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":2}}\n\n")
				return
			}
			fmt.Fprint(w, "id: e4\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"late\":true}}\n\n")
			return
		}
		if readID(t, r) == "2" {
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
			return
		}
		// A priming event without data sets the ID and the reconnection time.
		fmt.Fprint(w, "id: e1\nretry: 20\ndata:\n\n")
		fmt.Fprint(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
	}))
	defer srv.Close()

	tr, ctx, notes := noting(t, srv.URL)
	resp, err := tr.SendRequest(ctx, request(1, "tools/call"))
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Result) != `{"late":true}` {
		t.Errorf("result %s", resp.Result)
	}
	mu.Lock()
	if got := strings.Join(resumedFrom, " "); got != "e2 e3" {
		t.Errorf("resumed from %q, want e2 then e3", got)
	}
	mu.Unlock()
	if got := strings.Join(*notes, " "); got != `notifications/progress{"progress":1} notifications/progress{"progress":2}` {
		t.Errorf("progress %s, want each once, in order", got)
	}
	if _, err := tr.SendRequest(ctx, request(2, "tools/call")); err == nil || !strings.Contains(err.Error(), "ended the event stream before it answered") {
		t.Errorf("a stream without event IDs that ends early: %v", err)
	}
}

// TestStreamableCloseEndsRequests: Close ends a request whose answer's
// stream is still open, at once and with ErrClosed, rather than leaving
// it to the caller's deadline.
func TestStreamableCloseEndsRequests(t *testing.T) {
	opened, finished := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": working\n\n")
		w.(http.Flusher).Flush()
		close(opened)
		select { // never answers
		case <-r.Context().Done():
		case <-finished:
		}
	}))
	defer srv.Close()
	defer close(finished)
	tr := NewStreamable(srv.URL, Options{})
	tr.Start(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := tr.SendRequest(context.Background(), request(1, "tools/call"))
		errs <- err
	}()
	<-opened
	tr.Close()
	select {
	case err := <-errs:
		if !errors.Is(err, jsonrpc.ErrClosed) {
			t.Errorf("the request ended with %v, want jsonrpc.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close left the request waiting")
	}
}
