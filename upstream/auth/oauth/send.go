package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

const (
	// requestTimeout bounds every request, whatever the HTTP client's own
	// timeout (none, for http.DefaultClient).
	requestTimeout = 30 * time.Second
	// maxBody caps what is read of any answer: metadata documents and
	// token responses take a few KB.
	maxBody = 1 << 20
)

// answer is a response read whole.
type answer struct {
	status int
	body   []byte
}

func (a *answer) ok() bool { return a.status/100 == 2 }

// send sends req under its own timeout and reads the answer whole,
// refusing one larger than maxBody. A nil hc means a client with no
// timeout of its own. Errors name the request's URL, never its body,
// which carries the secrets.
func send(hc *http.Client, req *http.Request) (*answer, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(req.Context(), requestTimeout)
	defer cancel()
	resp, err := hc.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s: %w", req.URL.Redacted(), err)
	}
	if len(b) > maxBody {
		return nil, fmt.Errorf("%s answered with more than %d bytes: %w", req.URL.Redacted(), maxBody, ErrTooLarge)
	}
	return &answer{status: resp.StatusCode, body: b}, nil
}

// noRedirects returns hc, or a default client, that does not follow
// redirects: a request whose form carries secrets (a code, a refresh
// token, a client secret) is sent to the endpoint the metadata names and
// nowhere else.
func noRedirects(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}
