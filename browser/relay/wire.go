package relay

import (
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"
	"github.com/mcpx/mcpx/jsonrpc"
)

// socket is one accepted WebSocket: one reader (its handler), one writer
// at a time.
type socket struct {
	rpcwire.Conn
	side  string
	label string
}

var errBadJSON = errors.New("not a JSON object")

// message is the part of a frame the relay looks at.
type message = rpcwire.Message

// Error codes of the protocol.
const (
	codeServerError      = rpcwire.CodeServerError
	codeAlreadyConnected = rpcwire.CodeAlreadyConnected
	codeParseError       = jsonrpc.CodeParseError
	codeInvalidRequest   = jsonrpc.CodeInvalidRequest
	codeMethodNotFound   = jsonrpc.CodeMethodNotFound
)

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
