package supervisor

import (
	"bytes"
	"reflect"
	"testing"
)

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{
		{Op: OpStart, ID: 7, Path: "/usr/bin/node", Dir: "/tmp/x y", Args: []string{"a", "", "b c"}, Env: []string{"A=1", "B="}},
		{Op: OpSignal, PID: 1234, Force: true},
		{Op: OpExited, PID: 99, Text: "signal: killed"},
		{Op: OpStarted, ID: 1 << 40, PID: 5},
	} {
		got, err := Read(bytes.NewReader(m.Append(nil)))
		if err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip: got %+v, want %+v", got, m)
		}
	}
	if _, err := Parse([]byte("s\x00x\x00")); err == nil {
		t.Error("a truncated message parsed")
	}
}
