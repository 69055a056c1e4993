// Package trust pins the definitions of the tools and prompts upstream
// servers list, so that a server cannot change what a tool says to the
// model, or add a tool, behind the user's back (a "rug pull").
//
// The first time a server's tools and prompts are seen they are recorded
// (trust on first use): the pinned members of each definition as
// canonical JSON, and their SHA-256. A later [Store.Review] compares what
// the server lists now with that record; in [ModePin] a changed or new
// definition is withheld until [Store.Approve] records the new ones. The
// record lives in one JSON file in $XDG_STATE_HOME/mcpx, not the cache
// directory: clearing the cache must not drop a decision. Writes are
// atomic (a temporary file renamed over the old one) under a lock file,
// and merge with what other mcpx processes wrote meanwhile.
package trust
