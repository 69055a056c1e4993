package oauth

import (
	"errors"
	"fmt"
)

// ErrIssuerMismatch is what [CheckIssuer]'s refusals wrap: the
// authorization response may come from another authorization server (a
// mix-up attack, RFC 9207 §1), so its code must not be redeemed.
var ErrIssuerMismatch = errors.New("the authorization response's iss does not match the authorization server's issuer")

// CheckIssuer applies RFC 9207 §2.4 to an authorization response, as MCP
// 2026-07-28 asks, before its code goes to a token endpoint: iss is the
// response's iss parameter (already form-decoded) and present says
// whether it had one; md is the metadata whose issuer was recorded when
// the authorization request was made.
//
//   - A present iss must equal md.Issuer by simple string comparison: no
//     case folding, no default port or trailing slash dropped, no
//     percent-decoding (RFC 3986 §6.2.1). This holds whether or not the
//     server advertises iss, for servers that send it before they say so.
//   - An absent iss is refused when the server advertises
//     authorization_response_iss_parameter_supported, and accepted
//     otherwise.
//
// The check applies to error responses too: on a refusal the caller must
// not act on or show the response's error.
func CheckIssuer(md *Metadata, iss string, present bool) error {
	if md == nil {
		return errNoMetadata
	}
	switch {
	case present && iss != md.Issuer:
		return fmt.Errorf("%w: expected %q, got %q", ErrIssuerMismatch, md.Issuer, printable(iss, 200))
	case !present && md.IssParameterSupported:
		return fmt.Errorf("%w: expected %q, got none, though the server says it always sends one", ErrIssuerMismatch, md.Issuer)
	}
	return nil
}
