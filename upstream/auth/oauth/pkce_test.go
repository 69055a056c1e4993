package oauth

import (
	"regexp"
	"testing"
)

// TestS256ChallengeVector: RFC 7636 appendix B.
func TestS256ChallengeVector(t *testing.T) {
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	if got, want := S256Challenge(verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"; got != want {
		t.Errorf("S256Challenge = %q, want %q", got, want)
	}
}

func TestVerifierAndState(t *testing.T) {
	// RFC 7636 §4.1: 43 to 128 unreserved characters.
	unreserved := regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)
	seen := map[string]bool{}
	for range 100 {
		for _, s := range []string{NewVerifier(), NewState()} {
			if !unreserved.MatchString(s) {
				t.Fatalf("%q is not 43-128 unreserved characters", s)
			}
			if seen[s] {
				t.Fatalf("%q came twice", s)
			}
			seen[s] = true
		}
	}
}
