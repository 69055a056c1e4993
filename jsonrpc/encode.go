package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// The encoders below append one message to b, members in the order
// jsonrpc, id, method, params, result, error, with no reflection: they
// are on every answer's path. Raw members (ids, params, results, data)
// are copied as they are, so they must be valid JSON, and on one line
// where the framing is newline-delimited. An empty id is written null;
// empty or null params are left out. Strings are escaped as
// encoding/json escapes them, HTML characters included, so the bytes are
// those json.Marshal of a [Message] would write for compact members.

// AppendResult appends the answer to the request with id carrying
// result.
func AppendResult(b []byte, id, result json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, orNull(id)...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// ResultSize is the length of what AppendResult appends, for checking a
// limit before building the message.
func ResultSize(id, result json.RawMessage) int {
	return len(`{"jsonrpc":"2.0","id":,"result":}`) + len(orNull(id)) + len(result)
}

// AppendError appends the error answer e to the request with id.
func AppendError(b []byte, id json.RawMessage, e *Error) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, orNull(id)...)
	b = append(b, `,"error":`...)
	b = appendErrorObject(b, e)
	return append(b, '}')
}

// AppendRequest appends a request; params may be nil.
func AppendRequest(b []byte, id json.RawMessage, method string, params json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, orNull(id)...)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

// AppendNotification appends a notification; params may be nil.
func AppendNotification(b []byte, method string, params json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = appendString(b, method)
	return appendParams(b, params)
}

func appendParams(b []byte, params json.RawMessage) []byte {
	if len(params) > 0 && string(params) != "null" {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

func appendErrorObject(b []byte, e *Error) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, escaped as json.Marshal
// escapes it. Methods and most messages are printable ASCII without
// HTML characters, copied as they are; anything else goes through
// encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
