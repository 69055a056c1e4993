package core

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// States mints and verifies the requestState of an input_required result.
// A state is base64url(JSON payload) "." base64url(HMAC-SHA256): the
// payload binds it to the request (method, name or URI, a digest of the
// arguments), gives it an expiry, and names either the call waiting in
// this process for the answers (call and round: a bridge state) or the
// state an upstream minted itself (upstream, and the route to the source
// that minted it: a passthrough state), which any replica can pass on.
//
// It is signed with the shared secret when one is configured (replicas
// behind a load balancer then verify each other's states) and otherwise
// with a key drawn at random when the process starts; either verifies.
// Safe for concurrent use.
type States struct {
	keys    [][]byte // the first signs
	ttl     time.Duration
	now     func() time.Time
	replica string // the route prefix of the states minted here; "" none
}

// statePayload is what a requestState carries.
type statePayload struct {
	V        int    `json:"v"`
	Method   string `json:"m"`
	Target   string `json:"t"`           // tool or prompt name, or resource URI
	Digest   string `json:"d"`           // of the arguments
	Expires  int64  `json:"e"`           // unix seconds
	Call     string `json:"c,omitempty"` // a call waiting in this process
	Round    int    `json:"r,omitempty"`
	Upstream string `json:"u,omitempty"` // an upstream's own requestState
	Route    string `json:"s,omitempty"` // the catalog's route to that upstream (Peer.Route)
	Replica  string `json:"p,omitempty"` // the replica that minted it
}

// errBadState is what every refused state wraps.
var errBadState = errors.New("invalid requestState")

// NewStates returns States signing with secret ("" for a per-process
// random key only) whose states expire after ttl.
func NewStates(secret string, ttl time.Duration) (*States, error) {
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		return nil, fmt.Errorf("requestState key: %w", err)
	}
	s := &States{ttl: ttl, now: time.Now}
	if secret != "" {
		sum := sha256.Sum256([]byte("mcpx requestState\x00" + secret))
		s.keys = append(s.keys, sum[:])
	}
	s.keys = append(s.keys, random)
	return s, nil
}

func (s *States) sign(key []byte, payload string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// mint returns the requestState carrying p, expiring ttl from now.
func (s *States) mint(p statePayload) string {
	p.V = 1
	p.Expires = s.now().Add(s.ttl).Unix()
	p.Replica = s.replica
	b, _ := json.Marshal(p)
	payload := base64.RawURLEncoding.EncodeToString(b)
	state := payload + "." + s.sign(s.keys[0], payload)
	if s.replica != "" {
		// For the balancer, which cannot read the payload; the payload
		// names the replica too, under the signature.
		state = s.replica + "~" + state
	}
	return state
}

// open verifies state and returns its payload if it was minted here (or
// by a replica sharing the secret), has not expired, and was minted for
// this request (method, target, digest).
func (s *States) open(state, method, target, digest string) (statePayload, error) {
	var p statePayload
	// base64url has no '~': what comes before one is a replica's name.
	replica, signed, routed := strings.Cut(state, "~")
	if !routed {
		signed, replica = state, ""
	}
	payload, mac, ok := strings.Cut(signed, ".")
	if !ok {
		return p, fmt.Errorf("%w: not one mcpx minted", errBadState)
	}
	valid := false
	for _, k := range s.keys {
		if hmac.Equal([]byte(mac), []byte(s.sign(k, payload))) {
			valid = true
			break
		}
	}
	if !valid {
		return p, fmt.Errorf("%w: it fails verification (altered, or minted by another server)", errBadState)
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(b, &p) != nil || p.V != 1 {
		return p, fmt.Errorf("%w: unreadable payload", errBadState)
	}
	if s.now().Unix() > p.Expires {
		return p, fmt.Errorf("%w: it expired", errBadState)
	}
	if p.Method != method || p.Target != target || p.Digest != digest {
		return p, fmt.Errorf("%w: it was minted for another request (%s %s)", errBadState, p.Method, p.Target)
	}
	if p.Replica != replica {
		return p, fmt.Errorf("%w: its route %q is not the replica that minted it", errBadState, replica)
	}
	if p.Call != "" && p.Replica != s.replica {
		return p, fmt.Errorf("%w: its call waits in replica %q, not here (%q): route a retry by the name before '~' in requestState", errBadState, p.Replica, s.replica)
	}
	return p, nil
}

// argumentsDigest is a digest of a request's arguments that does not
// depend on how the client spaced or ordered them.
func argumentsDigest(args json.RawMessage) string {
	var v any
	if len(args) > 0 && json.Unmarshal(args, &v) == nil {
		args, _ = json.Marshal(v) // maps marshal with sorted keys
	}
	sum := sha256.Sum256(args)
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}
