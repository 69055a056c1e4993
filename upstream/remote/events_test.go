package remote

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestEventReader(t *testing.T) {
	stream := ": keep-alive\r\n\r\n" +
		"event: endpoint\r\ndata: /messages?s=1\r\n\r\n" +
		"id: 7\ndata: {\"a\":\ndata: 1}\n\n" +
		"event: ping\n\n" + // no data: skipped
		"retry: 100\ndata:no-space\n\n" +
		"data: cut off"
	er := newEventReader(strings.NewReader(stream))
	want := []event{
		{name: "endpoint", data: []byte("/messages?s=1")},
		{name: "message", data: []byte("{\"a\":\n1}"), id: "7"},
		{name: "message", data: []byte("no-space")},
	}
	for i, w := range want {
		ev, err := er.next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.name != w.name || string(ev.data) != string(w.data) || ev.id != w.id {
			t.Errorf("event %d = {%q %q %q}, want {%q %q %q}", i, ev.name, ev.data, ev.id, w.name, w.data, w.id)
		}
	}
	if _, err := er.next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("an event cut off by the end: err %v, want io.ErrUnexpectedEOF", err)
	}
	if er.lastID != "7" || er.retry != 100*time.Millisecond {
		t.Errorf("last event ID %q, retry %s; want 7 and 100ms", er.lastID, er.retry)
	}
	if _, err := newEventReader(strings.NewReader("data: x\n\n")).next(); err != nil {
		t.Errorf("a whole event: %v", err)
	}
	if _, err := newEventReader(strings.NewReader("")).next(); err != io.EOF {
		t.Errorf("an empty stream: err %v, want io.EOF", err)
	}
}
