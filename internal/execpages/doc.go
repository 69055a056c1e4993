// Package execpages gives back the pages of the running executable that a
// process touched while it started and is unlikely to touch again.
//
// A Go binary's package initialisation, the runtime's start (its
// interface tables, its check of the function table) and, in mcpx, the
// start of every server touch code and read-only data spread over the
// whole executable, and the kernel maps a file's pages 64 KiB around each
// fault. An idle mcpx kept 20 MiB of its 15 MB executable resident, most
// of it code that had run once. Those pages are clean copies of the file:
// unmapping them loses nothing, the kernel keeps them in its page cache
// (reclaimable, no longer counted against the process), and a page that
// is needed again faults back in from there.
//
// Only mappings of the executable itself that cannot be written and hold
// no private copy of a page are dropped: a read-only mapping with
// anonymous pages (relocations a loader applied) would lose them.
package execpages
