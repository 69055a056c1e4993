package main

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeHTTPResume: a client whose POST stream broke mid-call gets the
// rest of it, answer included, by GET with Last-Event-ID, from the event
// after the last it saw.
func TestServeHTTPResume(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "prefix": ""}}})
	srv := startHTTP(t, cfg, nil)
	s := openRaw(t, srv.url+"/mcp")

	resp := s.open(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":5},"_meta":{"progressToken":"p7"}}}`)
	sc := bufio.NewScanner(resp.Body)
	var lastID string
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			lastID = id
		}
		if strings.Contains(sc.Text(), `"progress":1`) {
			break
		}
	}
	resp.Body.Close() // the connection breaks after the first step
	if lastID == "" {
		t.Fatal("the stream's events carry no id")
	}

	req, _ := http.NewRequest("GET", s.url, nil)
	for k, v := range s.header("text/event-stream") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Last-Event-ID", lastID)
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Body.Close()
	var progress []string
	sc = bufio.NewScanner(again.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"notifications/progress"`) {
			progress = append(progress, line)
		}
		if strings.Contains(line, `"id":7,"result"`) {
			break
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Steps 2 to 5: none lost, none repeated.
	if len(progress) != 4 || !strings.Contains(progress[0], `"progress":2`) {
		t.Errorf("after Last-Event-ID %s got progress %q, want steps 2..5", lastID, progress)
	}
}

// TestServeHTTPCancelEndsStream: cancelling the one request of a POST
// stream ends that stream (no answer will come), and the session stays
// usable.
func TestServeHTTPCancelEndsStream(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "prefix": ""}}})
	srv := startHTTP(t, cfg, nil)
	s := openRaw(t, srv.url+"/mcp")

	resp := s.open(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":30},"_meta":{"progressToken":"pc"}}}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	}
	if code, _, body := do(t, "POST", s.url, s.header("application/json, text/event-stream"),
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"test"}}`); code != 202 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	ended := make(chan bool, 1)
	go func() {
		answered := false
		for sc.Scan() {
			answered = answered || strings.Contains(sc.Text(), `"id":"c1"`)
		}
		ended <- answered
	}()
	select {
	case answered := <-ended:
		if answered {
			t.Error("a cancelled request was answered")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the POST stream of a cancelled request stayed open")
	}
	if out := s.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"after"}}}`); !strings.Contains(out, "Echo: after") {
		t.Errorf("after the cancel: %s", out)
	}
}
