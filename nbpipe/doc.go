// Package nbpipe writes to pipes without waiting: one write(2) that takes
// what fits and says when the rest would have to wait. mcpx's serving
// loop writes a request to an upstream, and an upstream's reader writes
// an answer to the client, this way, so neither is ever held by a peer
// that stopped reading, and neither hands its bytes to another goroutine
// in the common case where the pipe has room.
package nbpipe
