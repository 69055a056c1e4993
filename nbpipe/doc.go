// Package nbpipe owns how mcpx waits on the pipes of its stdio path.
//
// Writes never wait: one write(2) takes what fits and says when the rest
// would have to wait. mcpx's serving loop writes a request to an
// upstream, and an upstream's reader writes an answer to the client,
// this way, so neither is ever held by a peer that stopped reading, and
// neither hands its bytes to another goroutine in the common case where
// the pipe has room.
//
// Reads of the client's stdin (Reader) wait either blocked in read(2) or
// in Go's poller, as the serving loop chooses before each read; reads of
// an upstream's stdout (PolledReader) wait in the poller.
//
// A read or write that cannot wait, on a descriptor in non-blocking
// mode, is a raw system call, one the runtime is not told of (see
// rawRead for why).
package nbpipe
