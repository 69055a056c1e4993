package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/jsonrpc"
)

// errRefused is wrapped by errors of a relay that refused this client (a
// bad token or secret): redialing would only be refused again.
var errRefused = errors.New("the browser relay refused this client")

// handshakeResult is what mcp_handshake answers.
type handshakeResult struct {
	Authenticated *bool  `json:"authenticated"`
	UserID        string `json:"user_id"`
}

// handshake performs mcp_handshake on a new socket, before its reader
// starts, and learns which protocol the relay speaks. A relay of the legacy
// protocol (before 1.0) answers mcp_handshake with nothing, so
// list_extensions goes out right behind it: a 1.0 relay answers the
// handshake first (by id), a legacy relay answers only the list, with no
// id. No round trip is spent on the question.
func (c *Client) handshake(ctx context.Context, s *socket) (handshakeResult, error) {
	var hs handshakeResult
	params := map[string]string{"client_id": c.opts.ClientID, "projectName": c.opts.ClientID}
	if c.opts.Token != "" {
		params["access_token"], params["accessToken"] = c.opts.Token, c.opts.Token
	}
	hsID := s.ids.Add(1)
	for _, m := range []struct {
		id     int64
		method string
		params any
	}{{hsID, "mcp_handshake", params}, {s.ids.Add(1), "list_extensions", struct{}{}}} {
		params, _ := json.Marshal(m.params) // strings only
		msg := jsonrpc.AppendRequest(nil, strconv.AppendInt(nil, m.id, 10), m.method, params)
		if err := s.conn.Write(ctx, websocket.MessageText, msg); err != nil {
			return hs, fmt.Errorf("mcp_handshake: %w: %v", ErrRelayClosed, err)
		}
	}
	want := strconv.FormatInt(hsID, 10)
	for {
		_, data, err := s.conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return hs, fmt.Errorf("the browser relay did not answer mcp_handshake within %s", c.opts.ControlTimeout)
			}
			if st := websocket.CloseStatus(err); st == websocket.StatusPolicyViolation {
				return hs, fmt.Errorf("%w: mcp_handshake: closed with %v", errRefused, err)
			}
			return hs, fmt.Errorf("mcp_handshake: %w: %v", ErrRelayClosed, err)
		}
		var f struct {
			frame
			Extensions json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		switch {
		case len(f.ID) > 0 && jsonrpc.IDKey(f.ID) == want:
			if len(f.Error) > 0 && string(f.Error) != "null" {
				// The relay's own words and code, as it sent them.
				return hs, fmt.Errorf("%w: mcp_handshake: %w", errRefused, jsonrpc.DecodeError(f.Error))
			}
			_ = json.Unmarshal(f.Result, &hs)
			if hs.Authenticated != nil && !*hs.Authenticated {
				return hs, fmt.Errorf("%w: mcp_handshake answered authenticated: false", errRefused)
			}
			return hs, nil
		case len(f.ID) == 0 && f.Method == "" && len(f.Extensions) > 0:
			s.legacy = true
			return hs, nil
		}
		// a notification (status) or a frame of no interest
	}
}
