// Package nbpipe owns how mcpx waits on the pipes of its stdio path.
//
// Writes never wait: one write(2) takes what fits and says when the rest
// would have to wait. mcpx's serving loop writes a request to an
// upstream, and an upstream's reader writes an answer to the client,
// this way, so neither is ever held by a peer that stopped reading, and
// neither hands its bytes to another goroutine in the common case where
// the pipe has room.
//
// Reads wait in Go's poller (PolledReader): the client's stdin, which
// Pollable puts in non-blocking mode, and an upstream's stdout.
//
// A read or write on a descriptor in non-blocking mode cannot wait, and
// is a raw system call, one the runtime is not told of (see rawRead for
// why). So no thread of mcpx's stdio path ever sits in a system call.
package nbpipe
