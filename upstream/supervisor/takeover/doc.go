// Package takeover makes a process that mcpx started as its supervisor
// the supervisor, from this package's initialisation, and never returns
// to the rest of the program. mcpx starts the supervisor by running its
// own executable again with MCPX_SUPERVISOR=1 (see
// [github.com/mcpx/mcpx/upstream/supervisor]), so a binary whose
// [github.com/mcpx/mcpx/upstream.Client] values start stdio servers
// imports this package for that effect:
//
//	import _ "github.com/mcpx/mcpx/upstream/supervisor/takeover"
//
// Why in an initialisation and not in main: by the time main runs, every
// package of mcpx has initialised, about 14 MiB that the supervisor, which
// lives as long as mcpx, would keep for nothing. Go initialises packages
// in the order of their import paths, each once its imports are done; this
// package imports only os and package supervisor, which imports a few
// packages that sort early, so it runs right after them, when about 7 MiB
// are touched. Any other import here makes that point later.
//
// On systems other than Unix there is no supervisor, and this package does
// nothing.
package takeover
