package core

import (
	"encoding/json"

	"github.com/mcpx/mcpx/frame"
	"github.com/mcpx/mcpx/jsonrpc"
)

// The limits as a legacy session enforces them: over-long messages from
// the client and a bounded end.

// tooLong answers a message from the client over maxMessageBytes: a
// request gets an error naming the size and the limit, an answer to one
// of mcpx's requests fails that request, and a notification is dropped
// with a log line.
func (s *Session) tooLong(e *frame.TooLongError) {
	switch {
	case e.ID != nil && e.Method:
		s.out.error(e.ID, CodeInvalidRequest, "invalid request: "+e.Error(), nil)
	case e.ID != nil:
		msg, _ := json.Marshal(map[string]any{"code": CodeInvalidRequest, "message": "the client's answer was dropped: " + e.Error()})
		s.clientResponse(Message{Message: jsonrpc.Message{ID: e.ID, Error: msg}})
		s.log.Warn("dropped an answer from the client: "+e.Error(), "id", string(e.ID))
	default:
		s.log.Warn("dropped a message from the client: " + e.Error())
	}
}
