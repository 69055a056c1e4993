package httpserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/aggregator/core"
)

// echoAPI answers an API request with the length of the body it got and
// whether that came whole from the body gate (Bytes).
var echoAPI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, ok := r.Body.(interface{ Bytes() []byte })
	if !ok {
		http.Error(w, "the body did not come from the body gate", 500)
		return
	}
	fmt.Fprintf(w, "%d", len(b.Bytes()))
})

// noRead is a body that must not be read.
type noRead struct{ reads int }

func (b *noRead) Read([]byte) (int, error) { b.reads++; return 0, io.ErrUnexpectedEOF }

// post is a POST to the API with body and Content-Length n (-1: unknown,
// as for a chunked body).
func post(body io.Reader, n int64) *http.Request {
	r := httptest.NewRequest("POST", "/mcpx/v1/call", body)
	r.Host = "localhost"
	r.ContentLength = n
	return r
}

// wantError checks that a refusal has the status, a JSON-RPC error body
// that says want, and closes the connection.
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	var e struct {
		Error struct{ Message string }
	}
	if w.Code != status || json.Unmarshal(w.Body.Bytes(), &e) != nil || !strings.Contains(e.Error.Message, want) {
		t.Fatalf("status %d %s, want %d with a JSON-RPC error saying %q", w.Code, w.Body, status, want)
	}
	if w.Header().Get("Connection") != "close" {
		t.Errorf("Connection %q, want close", w.Header().Get("Connection"))
	}
}

// TestBodyLimit: a Content-Length over maxMessageBytes is refused before
// a byte of the body is read; a body of unknown length is cut at the
// limit; one at the limit passes, whole. Nothing stays reserved.
func TestBodyLimit(t *testing.T) {
	const limit = 8 << 10
	h := newHandler(t.Context(), stubCatalog{}, Options{MaxMessageBytes: limit, API: echoAPI}, "127.0.0.1", true)
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	t.Run("Content-Length over the limit", func(t *testing.T) {
		body := &noRead{}
		w := serve(post(body, limit+1))
		wantError(t, w, 413, "request body over maxMessageBytes (8192 bytes)")
		if body.reads != 0 {
			t.Errorf("the body was read %d times", body.reads)
		}
	})
	t.Run("unknown length over the limit", func(t *testing.T) {
		wantError(t, serve(post(strings.NewReader(strings.Repeat("x", limit+1)), -1)), 413, "over maxMessageBytes (8192 bytes)")
	})
	t.Run("short body", func(t *testing.T) {
		w := serve(post(strings.NewReader("{}"), 100))
		if w.Code != 400 || !strings.Contains(w.Body.String(), "unexpected EOF") {
			t.Errorf("status %d %s, want 400 naming the early end", w.Code, w.Body)
		}
	})
	for _, n := range []int64{limit, -1} {
		w := serve(post(strings.NewReader(strings.Repeat("x", limit)), n))
		if w.Code != 200 || w.Body.String() != strconv.Itoa(limit) {
			t.Errorf("a body at the limit, Content-Length %d: %d %s", n, w.Code, w.Body)
		}
	}
	if n := h.bodies.inUse(); n != 0 {
		t.Errorf("%d bytes still reserved", n)
	}
}

// TestReadUnknownGrowth: a body of unknown length holds at most the limit
// plus bodyGrowMax, and keeps reserved only the buffer it is in.
func TestReadUnknownGrowth(t *testing.T) {
	const limit = 8 << 20
	for _, n := range []int{0, 10, bodyGrowMin, bodyGrowMin + 1, bodyGrowMax, bodyGrowMax + 1, limit} {
		b := &bodyBudget{max: limit + bodyGrowMax}
		hd := &hold{budget: b}
		hd.refs.Store(1)
		hd.grow(bodyGrowMin)
		data, err := readUnknown(io.MultiReader(strings.NewReader(strings.Repeat("x", n)), strings.NewReader("")), limit, hd)
		if err != nil || len(data) != n {
			t.Fatalf("%d bytes: read %d, %v", n, len(data), err)
		}
		want := int64(bodyGrowMin) // a buffer grows only when a body is longer
		for want < int64(n) {
			want *= 2
			if want > bodyGrowMax {
				want = limit
			}
		}
		if int64(cap(data)) != want || hd.n != want || b.inUse() != want {
			t.Errorf("%d bytes: capacity %d, reserved %d (budget %d), want %d", n, cap(data), hd.n, b.inUse(), want)
		}
		hd.release()
		if b.inUse() != 0 {
			t.Errorf("%d bytes: %d still reserved", n, b.inUse())
		}
	}
}

// TestBodyBudget: bodies share the budget while they are handled; past
// it a request is refused with 503 and Retry-After before its body is
// read (a body of unknown length reserves its first buffer), and once
// the others are done it passes.
func TestBodyBudget(t *testing.T) {
	const limit, budget = 64 << 10, 100 << 10
	entered, proceed := make(chan struct{}), make(chan struct{})
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-proceed
		echoAPI.ServeHTTP(w, r)
	})
	h := newHandler(t.Context(), stubCatalog{}, Options{MaxMessageBytes: limit, MaxBodyMemory: budget, API: blocking}, "127.0.0.1", true)
	held := make(chan *httptest.ResponseRecorder, 2)
	for _, n := range []int{60 << 10, 30 << 10} { // 90 KiB of 100 held
		go func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, post(strings.NewReader(strings.Repeat("x", n)), int64(n)))
			held <- w
		}()
		<-entered
	}
	refused := func(r *http.Request, body *noRead) {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		wantError(t, w, 503, "http.maxBodyMemory (102400 bytes)")
		if got := w.Header().Get("Retry-After"); got != retryAfter {
			t.Errorf("Retry-After %q, want %q", got, retryAfter)
		}
		if body != nil && body.reads != 0 {
			t.Errorf("the refused body was read %d times", body.reads)
		}
	}
	body := &noRead{}
	refused(post(body, 20<<10), body)
	refused(post(strings.NewReader("{}"), -1), nil) // unknown length: its first 64 KiB do not fit
	if n := h.bodies.inUse(); n != 90<<10 {
		t.Errorf("%d bytes reserved, want %d", n, 90<<10)
	}
	// Under the budget, they pass.
	go func() { proceed <- struct{}{}; proceed <- struct{}{} }()
	for range 2 {
		if w := <-held; w.Code != 200 {
			t.Errorf("a body under the budget: %d %s", w.Code, w.Body)
		}
	}
	go func() { <-entered; proceed <- struct{}{} }()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(strings.NewReader(strings.Repeat("x", 20<<10)), 20<<10))
	if w.Code != 200 || w.Body.String() != strconv.Itoa(20<<10) {
		t.Errorf("after the others: %d %s", w.Code, w.Body)
	}
	if n := h.bodies.inUse(); n != 0 {
		t.Errorf("%d bytes still reserved", n)
	}
}

// TestBodyHeldUntilAnswered: a legacy session's request keeps its body
// reserved after the POST has returned, until it is answered; an ended
// session lets every body go, and takes none after.
func TestBodyHeldUntilAnswered(t *testing.T) {
	h := newHandler(t.Context(), stubCatalog{}, Options{}, "127.0.0.1", true)
	s := &httpSession{h: h, legacy: true, byID: map[string]*stream{}, streams: map[string]*stream{}, bodies: map[string][]*hold{}}
	s.standalone = s.newStream(false)
	take := func(n int64) *hold {
		hd := &hold{budget: h.bodies}
		hd.refs.Store(1)
		hd.grow(n)
		return hd
	}
	a, b := take(1000), take(10)
	s.mu.Lock()
	s.holdBody(json.RawMessage(`1`), a)
	s.holdBody(json.RawMessage(`2`), b)
	s.holdBody(json.RawMessage(`"x"`), b) // one body, two requests
	s.mu.Unlock()
	a.release() // the POSTs return
	b.release()
	for _, c := range []struct {
		answers string
		want    int64
	}{{`1`, 10}, {`7`, 10}, {`2`, 10}, {`"x"`, 0}} {
		s.route(core.Routed{Answers: json.RawMessage(c.answers)})
		if n := h.bodies.inUse(); n != c.want {
			t.Errorf("after the answer to %s: %d bytes reserved, want %d", c.answers, n, c.want)
		}
	}
	c := take(500)
	s.mu.Lock()
	s.holdBody(json.RawMessage(`3`), c)
	s.releaseBodies()
	s.holdBody(json.RawMessage(`4`), c) // too late: the session ended
	s.mu.Unlock()
	c.release()
	if n := h.bodies.inUse(); n != 0 {
		t.Errorf("after the session ended: %d bytes reserved", n)
	}
}

// listen serves h's routes on a loopback port, as ListenAndServe does.
func listen(t *testing.T, o Options) string {
	t.Helper()
	addr := make(chan string, 1)
	o.OnListen = func(a net.Addr) { addr <- a.String() }
	done := make(chan error, 1)
	go func() { done <- ListenAndServe(t.Context(), "127.0.0.1:0", stubCatalog{}, &o) }()
	t.Cleanup(func() { <-done })
	select {
	case a := <-addr:
		return a
	case err := <-done:
		t.Fatal(err)
	}
	return ""
}

// TestBodyRefusedOnTheWire, over a real connection: a client that sends
// only the headers of a 100 MB POST and waits gets 413 before it sends a
// byte of the body, and the connection is closed; a chunked body over
// the limit is cut with 413 while the client is still sending.
func TestBodyRefusedOnTheWire(t *testing.T) {
	const limit = 64 << 10
	addr := listen(t, Options{MaxMessageBytes: limit, API: echoAPI})
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// Only to fail rather than hang if the server waits for the body.
		c.SetReadDeadline(time.Now().Add(time.Minute))
		return c, bufio.NewReader(c)
	}
	readResponse := func(br *bufio.Reader) (*http.Response, string) {
		t.Helper()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no response: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	c, br := dial()
	fmt.Fprintf(c, "POST /mcpx/v1/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
	resp, body := readResponse(br)
	if resp.StatusCode != 413 || !strings.Contains(body, "request body over maxMessageBytes (65536 bytes)") || !resp.Close {
		t.Errorf("headers of a 100 MB body: %d close=%v %s", resp.StatusCode, resp.Close, body)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the 413 the connection is still open (%v)", err)
	}

	c, br = dial()
	fmt.Fprintf(c, "POST /mcpx/v1/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
	sent := make(chan int64, 1)
	go func() {
		// Send until the server stops reading: it closes the connection.
		chunk := fmt.Sprintf("%x\r\n%s\r\n", 16<<10, bytes.Repeat([]byte("x"), 16<<10))
		var n int64
		for n < 100_000_000 {
			if _, err := io.WriteString(c, chunk); err != nil {
				break
			}
			n += 16 << 10
		}
		sent <- n
	}()
	resp, body = readResponse(br)
	if resp.StatusCode != 413 || !strings.Contains(body, "over maxMessageBytes (65536 bytes)") || !resp.Close {
		t.Errorf("chunked body over the limit: %d close=%v %s", resp.StatusCode, resp.Close, body)
	}
	if n := <-sent; n >= 100_000_000 {
		t.Errorf("the server read all %d bytes of a chunked body over the limit", n)
	}

	// A body under the limit on the same kind of connection passes.
	c, br = dial()
	fmt.Fprintf(c, "POST /mcpx/v1/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	if resp, body := readResponse(br); resp.StatusCode != 200 || body != "5" {
		t.Errorf("small chunked body: %d %s", resp.StatusCode, body)
	}
}

// TestBodyBudgetCollects: a large buffer given back stays counted until a
// collection that began after it has ended; one starts when a quarter of
// the budget is pending, or when a body does not fit while some is, once
// at a time, and once more after it for what was given back while it
// ran. Small buffers, which the collector's pacing handles, are given
// back at once.
func TestBodyBudgetCollects(t *testing.T) {
	const M = bodyGrowMax
	started, finish := make(chan struct{}, 4), make(chan struct{})
	b := newBodyBudget(16*M, func() { started <- struct{}{}; <-finish })
	wantStart := func(why string) {
		t.Helper()
		select {
		case <-started:
		case <-time.After(time.Minute): // only to fail rather than hang
			t.Fatalf("%s, and no collection", why)
		}
	}
	wantNoStart := func(why string) {
		t.Helper()
		select {
		case <-started:
			t.Fatalf("%s, and a collection started", why)
		default:
		}
	}
	wantInUse := func(want int64) {
		t.Helper()
		// Given back by the collection's goroutine once it has ended.
		for deadline := time.Now().Add(time.Minute); b.inUse() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes reserved, want %d", b.inUse(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 100 { // small bodies
		b.take(bodyGrowMin)
		b.give(bodyGrowMin)
	}
	wantInUse(0)
	b.take(3 * M)
	b.give(3 * M)
	wantNoStart("less than a quarter pending")
	wantInUse(3 * M)
	b.take(2 * M)
	b.give(M)
	wantStart("a quarter of the budget pending")
	b.give(M)
	b.take(20 * M)
	wantNoStart("more given back and a body refused while a collection runs")
	close(finish)
	wantInUse(M) // what was pending when it began: not the last M
	wantNoStart("less than a quarter pending after it")
	if b.take(16 * M) {
		t.Fatal("a body the size of the budget fitted beside a pending buffer")
	}
	wantStart("a body refused while some is pending")
	wantInUse(0)
	if !b.take(16 * M) {
		t.Error("after the collection, a body the size of the budget does not fit")
	}
}
