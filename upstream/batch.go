package upstream

import "github.com/mcpx/mcpx/callopt"

// Batch holds back a serving loop's requests for one write per upstream
// (see [callopt.Batch]).
type Batch = callopt.Batch

// A Flusher writes out what it has held back (see [callopt.Flusher]).
type Flusher = callopt.Flusher
