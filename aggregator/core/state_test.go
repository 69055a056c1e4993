package core

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStates(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	mint := func(secret string) *States {
		s, err := NewStates(secret, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		s.now = func() time.Time { return now }
		return s
	}
	here, other := mint(""), mint("")
	shared1, shared2 := mint("s3cret"), mint("s3cret")
	p := statePayload{Method: "tools/call", Target: "echo", Digest: argumentsDigest([]byte(`{"a":1,"b":2}`)), Call: "c1", Round: 2}
	good := here.mint(p)
	r1, r2 := mint("s3cret"), mint("s3cret")
	r1.replica, r2.replica = "r1", "r2"
	routed := r1.mint(p)
	if !strings.HasPrefix(routed, "r1~") {
		t.Fatalf("a state minted by replica r1 = %q, want it to start with its route r1~", routed)
	}

	tests := []struct {
		name    string
		s       *States
		state   string
		target  string
		args    string
		later   time.Duration
		wantErr string
	}{
		{name: "minted here", s: here, state: good, target: "echo", args: `{"b":2, "a":1}`},
		{name: "altered", s: here, state: good + "-TAMPERED", target: "echo", args: `{"a":1,"b":2}`, wantErr: "fails verification"},
		{name: "payload altered", s: here, state: "x" + good[1:], target: "echo", args: `{"a":1,"b":2}`, wantErr: "fails verification"},
		{name: "minted by another mcpx", s: other, state: good, target: "echo", args: `{"a":1,"b":2}`, wantErr: "fails verification"},
		{name: "no dot", s: here, state: "garbage", target: "echo", args: `{}`, wantErr: "not one mcpx minted"},
		{name: "another tool", s: here, state: good, target: "add", args: `{"a":1,"b":2}`, wantErr: "another request"},
		{name: "other arguments", s: here, state: good, target: "echo", args: `{"a":2,"b":2}`, wantErr: "another request"},
		{name: "expired", s: here, state: good, target: "echo", args: `{"a":1,"b":2}`, later: 2 * time.Minute, wantErr: "expired"},
		{name: "replica with the shared secret", s: shared2, state: shared1.mint(p), target: "echo", args: `{"a":1,"b":2}`},
		{name: "routed back to its replica", s: r1, state: routed, target: "echo", args: `{"a":1,"b":2}`},
		{name: "routed to another replica", s: r2, state: routed, target: "echo", args: `{"a":1,"b":2}`, wantErr: `waits in replica "r1"`},
		{name: "route renamed", s: r2, state: "r2" + strings.TrimPrefix(routed, "r1"), target: "echo", args: `{"a":1,"b":2}`, wantErr: "not the replica that minted it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.s.now = func() time.Time { return now.Add(tt.later) }
			got, err := tt.s.open(tt.state, "tools/call", tt.target, argumentsDigest([]byte(tt.args)))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				if got.Call != "c1" || got.Round != 2 {
					t.Errorf("payload = %+v", got)
				}
				return
			}
			if err == nil || !errors.Is(err, errBadState) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("open: %v, want an invalid requestState saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestPassthroughState: a state that keeps an upstream's own requestState
// carries it and the route to that upstream under the signature, and is
// told apart from a bridge state by naming no call.
func TestPassthroughState(t *testing.T) {
	s, err := NewStates("", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	digest := argumentsDigest([]byte(`{}`))
	state := s.mint(statePayload{Method: "tools/call", Target: "up_confirm", Digest: digest, Upstream: "round-1", Route: "up\x00confirm"})
	p, err := s.open(state, "tools/call", "up_confirm", digest)
	if err != nil {
		t.Fatal(err)
	}
	if p.Call != "" || p.Upstream != "round-1" || p.Route != "up\x00confirm" {
		t.Errorf("payload = %+v, want no call, the upstream's state and its route", p)
	}
	// Nothing waits in the replica that minted it: another one, sharing
	// the secret, serves the retry.
	r1, _ := NewStates("shared", time.Minute)
	r2, _ := NewStates("shared", time.Minute)
	r1.replica, r2.replica = "r1", "r2"
	routed := r1.mint(statePayload{Method: "tools/call", Target: "up_confirm", Digest: digest, Upstream: "round-1", Route: "up\x00confirm"})
	if !strings.HasPrefix(routed, "r1~") {
		t.Errorf("state %q, want the minting replica's route first", routed)
	}
	if _, err := r2.open(routed, "tools/call", "up_confirm", digest); err != nil {
		t.Errorf("another replica refused a passthrough state: %v", err)
	}
}
