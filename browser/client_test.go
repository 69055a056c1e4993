package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"log/slog"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/internal/testenv"
)

// setup is a relay with one scripted extension of a dialect, and a client
// of the same user whose logs go to a buffer.
type setup struct {
	relay *browsertest.Relay
	ext   *browsertest.Extension
	token string
	c     *browser.Client
	tools *browser.Tools
	logs  *testenv.Buffer
}

func newSetup(t *testing.T, d browsertest.Dialect, ropts *browsertest.RelayOptions, copts browser.Options) *setup {
	t.Helper()
	r := browsertest.NewRelay(ropts)
	t.Cleanup(r.Close)
	s := &setup{relay: r, token: r.Token("user-1", time.Hour), logs: &testenv.Buffer{}}
	s.ext = browsertest.NewExtension(d, "Chrome test")
	t.Cleanup(s.ext.Close)
	if err := s.ext.Connect(t.Context(), r.ExtensionURL(), s.token); err != nil {
		t.Fatal(err)
	}
	copts.Token = s.token
	copts.Logger = slog.New(log.NewWithOptions(s.logs, log.Options{Level: log.DebugLevel}))
	if copts.MinBackoff == 0 {
		copts.MinBackoff = 20 * time.Millisecond
	}
	s.c = browser.NewClient(copts)
	s.c.Start(context.Background())
	t.Cleanup(func() {
		s.c.Close()
		if strings.Contains(s.logs.String(), s.token) {
			t.Errorf("the token appeared in a log line:\n%s", s.logs.String())
		}
	})
	s.tools = browser.NewTools(s.c, nil)
	return s
}

type toolResult struct {
	Content []struct {
		Type, Text, Data, MimeType string
	}
	IsError bool
}

func (s *setup) call(t *testing.T, name, args string) toolResult {
	t.Helper()
	raw := s.tools.Call(t.Context(), name, json.RawMessage(args))
	var r toolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v: %s", name, err, raw)
	}
	return r
}

// open gives the client a tab to work in: the browser tools open none of
// their own accord but at a URL.
func (s *setup) open(t *testing.T) {
	t.Helper()
	if r := s.call(t, "tabs", `{"action":"new","url":"https://example.test/"}`); r.IsError {
		t.Fatalf("open a tab: %s", r.text())
	}
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func TestTabsOnBothDialects(t *testing.T) {
	for _, d := range []browsertest.Dialect{browsertest.V15, browsertest.V19} {
		t.Run(d.String(), func(t *testing.T) {
			s := newSetup(t, d, nil, browser.Options{})
			s.ext.AddPage("https://example.test/page", "Example Page")
			r := s.call(t, "tabs", `{"action":"new","url":"https://example.test/page"}`)
			if r.IsError || !strings.Contains(r.text(), "https://example.test/page") {
				t.Fatalf("new tab: %+v", r)
			}
			before := len(s.ext.Tabs())
			if r := s.call(t, "tabs", `{"action":"list"}`); r.IsError || !strings.Contains(r.text(), "Example Page") {
				t.Errorf("list: %+v", r)
			}
			// v1.5 answers closeTab with success and closes nothing: mcpx
			// must notice and close the tab another way.
			if r := s.call(t, "tabs", `{"action":"close"}`); r.IsError {
				t.Fatalf("close: %s", r.text())
			}
			if after := len(s.ext.Tabs()); after != before-1 {
				t.Errorf("tabs before close %d, after %d: the tab was not closed", before, after)
			}
			// With its tab closed the client opens none of its own accord.
			if r := s.call(t, "take_screenshot", `{}`); !r.IsError || !strings.Contains(r.text(), "no tab to work in: open a page with browser_navigate") {
				t.Errorf("screenshot with no tab: %+v", r)
			}
			if r := s.call(t, "navigate", `{"url":"https://example.test/page"}`); r.IsError {
				t.Fatalf("navigate with no tab: %s", r.text())
			}
			shot := s.call(t, "take_screenshot", `{}`)
			if shot.IsError || len(shot.Content) == 0 || shot.Content[0].Type != "image" {
				t.Fatalf("screenshot: %+v", shot)
			}
			img, _, err := image.Decode(base64.NewDecoder(base64.StdEncoding, strings.NewReader(shot.Content[0].Data)))
			if err != nil || img.Bounds().Dx() == 0 {
				t.Errorf("the screenshot does not decode: %v", err)
			}
			for _, f := range s.relay.Frames() {
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				json.Unmarshal(f.Data, &m)
				if f.Side == browsertest.SideMCP && (strings.HasPrefix(string(m.ID), `"proxy:`) || strings.HasPrefix(string(m.ID), `"ext:`)) {
					t.Errorf("mcpx sent a reserved id: %s", f.Data)
				}
			}
		})
	}
}

func TestErrorShapes(t *testing.T) {
	s := newSetup(t, browsertest.V19, nil, browser.Options{})
	for _, shape := range []browsertest.ErrorShape{browsertest.CodeMessage, browsertest.MessageStack, browsertest.BareString} {
		msg := fmt.Sprintf("tabs are on fire (%d)", shape)
		s.ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) { return nil, shape.Errorf("%s", msg) })
		if r := s.call(t, "tabs", `{"action":"list"}`); !r.IsError || !strings.Contains(r.text(), msg) {
			t.Errorf("shape %d: %+v", shape, r)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := newSetup(t, browsertest.V15, &browsertest.RelayOptions{
		Delay: func(string) time.Duration { return time.Duration(rand.Intn(20)) * time.Millisecond },
	}, browser.Options{})
	s.ext.Handle("echoTitle", func(_ context.Context, p json.RawMessage) (any, error) {
		var in struct{ Title string }
		json.Unmarshal(p, &in)
		return map[string]string{"title": in.Title}, nil
	})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			title := fmt.Sprintf("page %d", i)
			res, err := s.c.Call(t.Context(), "echoTitle", map[string]string{"title": title})
			if err != nil {
				errs <- err
				return
			}
			var got struct{ Title string }
			json.Unmarshal(res, &got)
			if got.Title != title {
				errs <- fmt.Errorf("call %d got %q: answers were mixed up", i, got.Title)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestExtensionDisconnectFailsCallsInFlight(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	if r := s.call(t, "tabs", `{"action":"list"}`); r.IsError {
		t.Fatal(r.text())
	}
	arrived := make(chan struct{})
	s.ext.Handle("getTabs", func(ctx context.Context, _ json.RawMessage) (any, error) {
		close(arrived)
		<-ctx.Done()
		return nil, browsertest.ErrNoResponse
	})
	done := make(chan toolResult)
	go func() { done <- s.call(t, "tabs", `{"action":"list"}`) }()
	select {
	case <-arrived: // the call is in flight at the extension
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the extension")
	}
	start := time.Now()
	s.ext.Disconnect()
	select {
	case r := <-done:
		if !r.IsError || !strings.Contains(r.text(), "disconnected") {
			t.Errorf("the call in flight ended with %+v", r)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the call learned of the disconnect after %s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight hung after the extension disconnected")
	}
	// The browser comes back: the next call connects again.
	ext2 := browsertest.NewExtension(browsertest.V15, "Chrome test")
	t.Cleanup(ext2.Close)
	if err := ext2.Connect(t.Context(), s.relay.ExtensionURL(), s.token); err != nil {
		t.Fatal(err)
	}
	if r := s.call(t, "tabs", `{"action":"list"}`); r.IsError {
		t.Errorf("after the browser came back: %s", r.text())
	}
}

func TestRelayRestartIsRedialed(t *testing.T) {
	s := newSetup(t, browsertest.V19, nil, browser.Options{})
	if r := s.call(t, "tabs", `{"action":"list"}`); r.IsError {
		t.Fatal(r.text())
	}
	s.relay.Restart()
	if err := s.ext.Connect(t.Context(), s.relay.ExtensionURL(), s.token); err != nil {
		t.Fatal(err)
	}
	var last toolResult
	testenv.Eventually(t, 5*time.Second, func() bool {
		last = s.call(t, "tabs", `{"action":"list"}`)
		return !last.IsError
	}, "still failing after the relay restarted: %v", &last)
}

func TestAlreadyConnectedReconnects(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	for range 2 {
		if _, err := s.c.Connect(t.Context(), "Chrome test"); err != nil {
			t.Fatalf("connect: %v", err)
		}
	}
	var sawRefusal bool
	for _, f := range s.relay.Frames() {
		if f.Side == browsertest.SideMCP && strings.Contains(string(f.Data), `"disconnect"`) {
			sawRefusal = true
		}
	}
	if !sawRefusal {
		t.Error("a second connect on the same socket should meet -32001 and disconnect first")
	}
}

func TestSlowAnswerTimesOut(t *testing.T) {
	s := newSetup(t, browsertest.V15, &browsertest.RelayOptions{
		Delay: func(key string) time.Duration {
			if key == "getTabs" {
				return 3 * time.Second
			}
			return 0
		},
	}, browser.Options{CallTimeout: 300 * time.Millisecond})
	start := time.Now()
	r := s.call(t, "tabs", `{"action":"list"}`)
	if !r.IsError || !strings.Contains(r.text(), "did not answer getTabs within 300ms") {
		t.Errorf("slow answer: %+v", r)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if r := s.call(t, "navigate", `{"url":"https://example.test/"}`); r.IsError {
		t.Errorf("the next call after a timeout: %s", r.text())
	}
}

func TestHugeScreenshotFrame(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	big := bigPNG(t, 2400, 150, 10<<20)
	data := base64.StdEncoding.EncodeToString(big)
	s.ext.Handle("forwardCDPCommand:Page.captureScreenshot", func(context.Context, json.RawMessage) (any, error) {
		return map[string]string{"data": data}, nil
	})
	s.open(t)
	r := s.call(t, "take_screenshot", `{}`)
	if r.IsError || r.Content[0].MimeType != "image/png" {
		t.Fatalf("screenshot: %s", r.text())
	}
	got, err := png.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(r.Content[0].Data)))
	if err != nil || got.Width != 2000 || got.Height != 125 {
		t.Errorf("scaled screenshot %+v (%v), want 2000x125", got, err)
	}
}

// bigPNG is a valid w x h PNG padded to at least size bytes with a private
// ancillary chunk, which decoders skip: a frame as big as a real
// full-page screenshot, cheap to decode.
func bigPNG(t *testing.T, w, h, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	iend := len(b) - 12 // the IEND chunk is last
	pad := make([]byte, size)
	rand.New(rand.NewSource(1)).Read(pad)
	var chunk bytes.Buffer
	binary.Write(&chunk, binary.BigEndian, uint32(len(pad)))
	chunk.WriteString("mcPx")
	chunk.Write(pad)
	binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(append([]byte("mcPx"), pad...)))
	return append(append(append([]byte{}, b[:iend]...), chunk.Bytes()...), b[iend:]...)
}

func TestRelayDownIsAnErrorNotAHang(t *testing.T) {
	r := browsertest.NewRelay(nil)
	tok := r.Token("u", time.Hour)
	r.Close() // nothing listens now
	c := browser.NewClient(browser.Options{Token: tok, ReadyTimeout: 300 * time.Millisecond})
	c.Start(t.Context())
	defer c.Close()
	start := time.Now()
	res := browser.NewTools(c, nil).Call(t.Context(), "snapshot", nil)
	if !strings.Contains(string(res), "not reachable") || !strings.Contains(string(res), `"isError":true`) {
		t.Errorf("got %s", res)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	if st := c.Status(); st.Reachable || st.Err == "" {
		t.Errorf("status %+v", st)
	}
}

// TestRefusedToken: a token the relay refuses is a clear error in every
// tool, never quoted, and not retried in a loop.
func TestRefusedToken(t *testing.T) {
	r := browsertest.NewRelay(nil)
	defer r.Close()
	// A token the relay does not accept (signed by another relay).
	other := browsertest.NewRelay(nil)
	defer other.Close()
	bad := other.Token("u", time.Hour)
	c := browser.NewClient(browser.Options{Token: bad, URL: r.MCPURL(), ReadyTimeout: time.Second})
	c.Start(t.Context())
	defer c.Close()
	res := browser.NewTools(c, nil).Call(t.Context(), "tabs", json.RawMessage(`{"action":"list"}`))
	if !strings.Contains(string(res), "Authentication failed") {
		t.Errorf("a refused token: %s", res)
	}
	if strings.Contains(string(res), bad) {
		t.Error("the token leaked into the error")
	}
	var rerr *browser.RemoteError
	_, err := c.ListExtensions(t.Context())
	if err == nil || (!errors.As(err, &rerr) && !strings.Contains(err.Error(), "Authentication failed")) {
		t.Errorf("ListExtensions: %v", err)
	}
}

// TestTabsWithoutURLYet: v1.5 computes automatable as `tab.url && ...`,
// "" for a tab still opening; getTabs must still read.
func TestTabsWithoutURLYet(t *testing.T) {
	s := newSetup(t, browsertest.V15, nil, browser.Options{})
	s.ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) {
		return json.RawMessage(`{"tabs":[{"id":1,"title":"A","url":"https://a.test/","active":true,"index":0,"automatable":true},
			{"id":2,"title":"","url":"","active":false,"index":1,"automatable":""},
			{"id":3,"title":"S","url":"chrome://settings","active":false,"index":2,"automatable":false}]}`), nil
	})
	r := s.call(t, "tabs", `{"action":"list"}`)
	want := "0. A (https://a.test/) [active]\n1.  () [not automatable]\n2. S (chrome://settings) [not automatable]"
	if r.IsError || r.text() != want {
		t.Errorf("list:\n%s\nwant:\n%s", r.text(), want)
	}
}
