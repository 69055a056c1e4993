//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/internal/testenv"
)

// page is one headless Chromium tab driven over the DevTools protocol:
// the dashboard's tests load pages in it, run script in them, and read
// every URL it requested (the Network domain).
type tab struct {
	t    *testing.T
	conn *websocket.Conn
	ctx  context.Context

	mu      sync.Mutex
	next    int64
	pending map[int64]chan cdpReply
	urls    []string // every request the page made, in order
}

type cdpReply struct {
	Result json.RawMessage
	Error  *struct{ Message string }
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// openTab starts headless Chromium with a blank tab and attaches to
// that tab; both end with the test.
func openTab(t *testing.T) *tab {
	t.Helper()
	bin := testenv.NeedChromium(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--headless=new", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--no-default-browser-check", "--disable-dev-shm-usage",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-port=0", "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = 2 * time.Second
	// A group of its own: Chromium's helper processes go with it, before
	// the test removes the profile they write in.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGKILL)
		cmd.Wait()
		testenv.Eventually(t, 10*time.Second, func() bool { return syscall.Kill(-pgid, 0) != nil },
			"Chromium's processes outlived SIGKILL")
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("Chromium did not say where DevTools listens")
	}
	u, _ := url.Parse(browserWS)
	var targets []struct{ Type, URL, WebSocketDebuggerURL string }
	testenv.Eventually(t, 30*time.Second, func() bool {
		resp, err := http.Get("http://" + u.Host + "/json/list")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		targets = nil
		json.NewDecoder(resp.Body).Decode(&targets)
		for _, tg := range targets {
			if tg.Type == "page" {
				return true
			}
		}
		return false
	}, "Chromium lists no page")
	var pageWS string
	for _, tg := range targets {
		if tg.Type == "page" {
			pageWS = tg.WebSocketDebuggerURL
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, pageWS, nil)
	if err != nil {
		t.Fatalf("attach to the tab: %v", err)
	}
	conn.SetReadLimit(64 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	p := &tab{t: t, conn: conn, ctx: ctx, pending: map[int64]chan cdpReply{}}
	go p.read()
	p.call("Network.enable", nil)
	p.call("Page.enable", nil)
	return p
}

// read is the connection's one reader: answers go to their callers,
// and the URL of every request the page makes is recorded.
func (p *tab) read() {
	for {
		_, data, err := p.conn.Read(p.ctx)
		if err != nil {
			return
		}
		var m struct {
			ID     int64
			Method string
			Params json.RawMessage
			cdpReply
		}
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		p.mu.Lock()
		if m.ID != 0 {
			if ch := p.pending[m.ID]; ch != nil {
				ch <- m.cdpReply
				delete(p.pending, m.ID)
			}
		} else if m.Method == "Network.requestWillBeSent" {
			var ev struct{ Request struct{ URL string } }
			json.Unmarshal(m.Params, &ev)
			p.urls = append(p.urls, ev.Request.URL)
		}
		p.mu.Unlock()
	}
}

// call sends one DevTools command and returns its result.
func (p *tab) call(method string, params any) json.RawMessage {
	p.t.Helper()
	res, err := p.callErr(method, params)
	if err != nil {
		p.t.Fatal(err)
	}
	return res
}

// callErr is call, with the command's error returned.
func (p *tab) callErr(method string, params any) (json.RawMessage, error) {
	p.mu.Lock()
	p.next++
	id := p.next
	ch := make(chan cdpReply, 1)
	p.pending[id] = ch
	p.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := p.conn.Write(p.ctx, websocket.MessageText, msg); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	case <-time.After(60 * time.Second):
		return nil, fmt.Errorf("%s: no answer in a minute", method)
	}
}

// eval runs a script expression in the page (awaiting a promise) and
// returns its value as JSON.
func (p *tab) eval(expr string) json.RawMessage {
	p.t.Helper()
	v, err := p.evalErr(expr)
	if err != nil {
		p.t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

// evalErr is eval, with the script's exception (or a page gone while it
// ran) as an error.
func (p *tab) evalErr(expr string) (json.RawMessage, error) {
	p.t.Helper()
	res, err := p.callErr("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	json.Unmarshal(res, &r)
	if r.ExceptionDetails != nil {
		return nil, fmt.Errorf("%s %s", r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	return r.Result.Value, nil
}

// text is the page's visible text (empty while no document is there).
func (p *tab) text() string {
	var s string
	v, _ := p.evalErr(`document.body ? document.body.innerText : ""`)
	json.Unmarshal(v, &s)
	return s
}

// html is the page's markup.
func (p *tab) html() string {
	var s string
	json.Unmarshal(p.eval(`document.documentElement ? document.documentElement.outerHTML : ""`), &s)
	return s
}

// open navigates to u and waits until the page loaded shows want.
func (p *tab) open(u, want string) {
	p.t.Helper()
	p.call("Page.navigate", map[string]any{"url": u})
	p.waitText(want, "after opening "+u)
}

// waitText waits (a generous bound: it must not hang) until the page's
// text holds want.
func (p *tab) waitText(want, what string) {
	p.t.Helper()
	var last string
	testenv.Eventually(p.t, 30*time.Second, func() bool {
		last = p.text()
		return regexp.MustCompile(want).MatchString(last)
	}, "%s: the page never showed %q; it shows:\n%s", what, want, &lastText{&last})
}

// lastText prints the text last read when a wait fails.
type lastText struct{ s *string }

func (l *lastText) String() string { return *l.s }

// requested are the URLs the page has requested so far.
func (p *tab) requested() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

func (p *tab) String() string { return fmt.Sprintf("page with %d requests", len(p.requested())) }
