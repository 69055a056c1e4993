package oauth

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckIssuer is the table of MCP 2026-07-28's authorization response
// validation (RFC 9207 §2.4), with the normalizations a client must not
// apply.
func TestCheckIssuer(t *testing.T) {
	const issuer = "https://as.example.com"
	for _, c := range []struct {
		name       string
		advertised bool
		iss        string
		present    bool
		ok         bool
	}{
		{"advertised, matching", true, issuer, true, true},
		{"advertised, absent", true, "", false, false},
		{"advertised, another server", true, "https://evil.example.com", true, false},
		{"not advertised, absent", false, "", false, true},
		{"not advertised, matching", false, issuer, true, true},
		{"not advertised, another server", false, "https://evil.example.com", true, false},
		{"present but empty", false, "", true, false},
		{"trailing slash", true, issuer + "/", true, false},
		{"host case", true, "https://AS.example.com", true, false},
		{"scheme case", true, "HTTPS://as.example.com", true, false},
		{"default port", true, "https://as.example.com:443", true, false},
		{"percent-encoding", true, "https://as%2Eexample.com", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			md := &Metadata{Issuer: issuer, IssParameterSupported: c.advertised}
			err := CheckIssuer(md, c.iss, c.present)
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrIssuerMismatch) {
				t.Fatalf("err = %v, want ErrIssuerMismatch", err)
			}
			// The error names what was expected and what came.
			if !strings.Contains(err.Error(), `"`+issuer+`"`) || (c.present && !strings.Contains(err.Error(), c.iss)) {
				t.Errorf("error %q does not name both issuers", err)
			}
		})
	}
	if err := CheckIssuer(nil, issuer, true); err == nil {
		t.Error("checked against no metadata")
	}
}
