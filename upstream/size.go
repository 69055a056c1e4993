package upstream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/jsonrpc"
)

// This file bounds the size of what an upstream sends (a child's stdout
// through stdio.Transport, remote bodies here): a message over
// maxMessageBytes is read through and discarded without being held whole
// (see package frame). A response becomes an error for the request it
// answers, so the caller learns why at once; anything else is dropped with
// a log line. The connection stays up.

// tooLong is what an over-long line from the server turns into.
func (cn *conn) tooLong(e *frame.TooLongError) []byte {
	if e.ID == nil || e.Method {
		cn.c.log.Warn("dropped a message from the server: "+e.Error(), "method", e.Method)
		return nil
	}
	cn.c.log.Warn("the server's answer is too large: "+e.Error(), "id", string(e.ID))
	data, _ := json.Marshal(map[string]int64{"size": e.Size, "limit": e.Limit})
	out := append([]byte(nil), e.Prefix...) // "data: " on an SSE stream
	out = jsonrpc.AppendError(out, e.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Data: data,
		Message: fmt.Sprintf("server %q: the answer of %s is over the limit of %s (maxMessageBytes)", cn.c.cfg.Name, frame.Bytes(e.Size), frame.Bytes(e.Limit))})
	return append(out, '\n')
}

// httpClient is the client of a remote server: every response body (a
// JSON answer or an SSE stream) goes through the same line limit.
func (cn *conn) httpClient() *http.Client {
	// Under the size limit, the OAuth login (when the server has one)
	// adds the token and answers 401s.
	return &http.Client{Transport: limitBodies{base: traceHeader{cn.c.authTransport(http.DefaultTransport)}, cn: cn}}
}

type limitBodies struct {
	base http.RoundTripper
	cn   *conn
}

func (l limitBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || l.cn.c.opts.MaxMessageBytes <= 0 {
		return resp, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{frame.LimitLines(resp.Body, l.cn.c.opts.MaxMessageBytes, l.cn.tooLong), resp.Body}
	resp.ContentLength = -1
	return resp, nil
}
