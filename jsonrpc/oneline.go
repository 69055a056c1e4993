package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// OneLine keeps a message on one line, as newline-delimited JSON-RPC
// needs: raw with a newline inside (pretty-printed) is compacted; raw
// that is not JSON is returned as it is.
func OneLine(raw []byte) []byte {
	// Two IndexByte, not ContainsAny: this runs on every request, and
	// ContainsAny's byte set costs several times their vector scans.
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
