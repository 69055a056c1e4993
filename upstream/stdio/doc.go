// Package stdio is the client's transport to an upstream that is a child
// process: newline-delimited JSON-RPC on its stdin and stdout, each line
// scanned once, results handed on as the bytes the server wrote, writes
// that never hold a caller on a server that stopped reading, and the
// batching of requests into one write per upstream (callopt.Batch).
// Starting and watching the process is package upstream's (and its
// supervisor's); this package only speaks on the pipes it is given.
package stdio
