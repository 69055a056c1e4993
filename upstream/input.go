package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
)

// A modern server asks its client for input (an elicitation, a sampling,
// the roots) by answering a request with resultType "input_required": the
// questions in inputRequests, and an opaque requestState. The client asks
// them, then sends the request again with the answers in inputResponses
// and the requestState as it came (SEP-2322). Over mcpx, a legacy client
// is asked the questions as the server-initiated requests a legacy
// upstream would send (Options.OnServerRequest); a modern client gets
// the result as it is and retries itself ([CallOptions].PassInput).

// maxInputRounds bounds the rounds of one request: a server that keeps
// asking (or keeps shedding load with no questions) fails the request.
const maxInputRounds = 10

// needsInput reports whether a result asks for input. Most results do
// not, and one substring scan tells.
func needsInput(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"input_required"`)) {
		return false
	}
	rt, _ := rawjson.Get(res, "resultType")
	return string(rt) == `"input_required"`
}

// answersInput reports whether the request's result must be answered by
// mcpx before it returns: the server is modern, the result asks for
// input, and the caller did not ask for it as it is (pass).
func answersInput(cn *conn, pass bool, res json.RawMessage) bool {
	return !pass && cn.modern() && needsInput(res)
}

// inputRequest is one question of an input_required result.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// resolveInput answers res's questions through OnServerRequest and sends
// the request again with the answers, round after round, until the
// server gives a result that is not input_required. params are the
// request's own (never those of a retry), so that each retry carries the
// latest round's answers and requestState only: a round without a
// requestState sends none. touch and o are the request's (see request).
func (c *Client) resolveInput(ctx context.Context, touch *limitedCall, o CallOptions, method string, params, res json.RawMessage) (json.RawMessage, error) {
	for round := 1; ; round++ {
		if round > maxInputRounds {
			return nil, fmt.Errorf("%s: the server still asks for input after %d rounds", method, maxInputRounds)
		}
		var ir struct {
			InputRequests map[string]inputRequest `json:"inputRequests"`
			RequestState  json.RawMessage         `json:"requestState"`
		}
		if err := json.Unmarshal(res, &ir); err != nil {
			return nil, fmt.Errorf("%s: unreadable input_required result: %w", method, err)
		}
		answers, err := c.askInput(ctx, ir.InputRequests)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		retry, err := rawjson.Set(params, "inputResponses", answers)
		if err == nil && len(ir.RequestState) > 0 && string(ir.RequestState) != "null" {
			retry, err = rawjson.Set(retry, "requestState", ir.RequestState)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: cannot add the answers to the request's params: %w", method, err)
		}
		res, err = c.request(ctx, touch, o, method, retry)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		cn := c.conn
		c.mu.Unlock()
		if cn == nil || !answersInput(cn, o.PassInput, res) {
			return res, nil
		}
	}
}

// askInput asks the questions through OnServerRequest, all at once, as
// the server asked them (a legacy client gets them as concurrent
// requests, a modern one in one input_required), and returns the
// answers as an inputResponses object, by the questions' keys. The first
// failure cancels the other questions.
func (c *Client) askInput(ctx context.Context, questions map[string]inputRequest) (json.RawMessage, error) {
	handler := c.opts.OnServerRequest
	for _, q := range questions {
		if !relayedRequests[q.Method] || handler == nil {
			return nil, &RPCError{Code: jsonrpc.CodeMethodNotFound, Message: "the server asks for " + q.Method + ", which mcpx cannot relay"}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		answers = make(map[string]json.RawMessage, len(questions))
		failed  error
		wg      sync.WaitGroup
	)
	for key, q := range questions {
		wg.Go(func() {
			params := q.Params
			if len(params) == 0 {
				params = json.RawMessage(`{}`)
			}
			res, err := handler(ctx, c.cfg.Name, q.Method, params)
			var rpc *RPCError
			if err != nil && !errors.As(err, &rpc) {
				err = fmt.Errorf("ask the client (%s): %w", q.Method, err)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				answers[key] = res
			case failed == nil:
				failed = err
				cancel()
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return nil, failed
	}
	return json.Marshal(answers)
}
