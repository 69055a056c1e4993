package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
)

// ErrTooLarge is wrapped by the error for an answer larger than 1 MiB.
var ErrTooLarge = errors.New("answer too large")

// Error is an OAuth error response (RFC 6749 §5.2; the same shape in RFC
// 7591 §3.2.2 and RFC 7009 §2.2.1): the token endpoint refusing a grant,
// the registration endpoint refusing a client.
type Error struct {
	// Code is the error code, e.g. "invalid_grant", "invalid_client".
	Code string
	// Description is the server's explanation, when it gave one, cut to
	// 200 printable characters.
	Description string
	// Status is the HTTP status it came with (200 from servers that say
	// errors in a successful answer).
	Status int
}

func (e *Error) Error() string {
	if e.Description != "" {
		return "the authorization server answered " + e.Code + ": " + e.Description
	}
	return "the authorization server answered " + e.Code
}

// errorOf returns the error an answer carries: an [*Error] when the body
// is an OAuth error response, whatever the status (some servers answer
// 200 with an error); another error for any other status but 2xx; nil
// for a success.
func errorOf(a *answer) error {
	var v struct {
		Code        any    `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(a.body, &v) == nil {
		if code, ok := v.Code.(string); ok && code != "" {
			return &Error{Code: printable(code, 64), Description: printable(v.Description, 200), Status: a.status}
		}
	}
	if a.ok() {
		return nil
	}
	// The body of an answer that is not an OAuth error is left out: it is
	// the server's, and may be a whole HTML page.
	return fmt.Errorf("the server answered %d %s", a.status, http.StatusText(a.status))
}

// printable returns s without control characters, cut to n runes: it
// comes from a server and goes to a terminal.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// scrub removes the secrets a request carried from the description of the
// *Error it got: a server may quote the token it refuses.
func scrub(err error, secrets ...string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err // other errors never quote the request's body
	}
	for _, s := range secrets {
		if s != "" {
			e.Description = strings.ReplaceAll(e.Description, s, "[redacted]")
		}
	}
	return err
}
