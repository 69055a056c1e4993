// Package search owns the ranked keyword search over a catalog's
// capabilities: what of a tool, prompt or resource is searched, how a
// query is read, and how matches rank. The proxy tool's list and `mcpx
// list --query` rank through it, so a model and a person find the same
// things in the same order.
//
// A [Builder] makes an immutable [Index] over a list of [Doc]s (one per
// capability, in catalog order) and the servers' instructions. It
// remembers what each document was analysed into, so a rebuild after one
// server's list changed re-reads only that server's, and a build of the
// same documents returns the same index: every session and profile over
// one catalog shares it, filtering at query time.
//
//	b := search.NewBuilder()             // one per catalog owner
//	ix := b.Build(docs, instructions)    // on every catalog change
//	res := ix.Search("read a file", keep) // keep: a profile's filter, or nil
//	for _, h := range res.Hits { use(docs[h.Doc]) }
//
// Ranking is BM25F over the fields a person would search by (the name
// split into words, the title, the description, the parameters' names
// and descriptions at any depth), with the server's name, prefix and
// instructions scored once per server; stop words dropped, English words
// stemmed, Chinese, Japanese and Korean text in character pairs. A query
// word also finds its synonyms, the words a path or a phrase implies,
// and, when no tool has it, the words it starts or is a typo of. A name
// the query spells comes first and a deprecated tool ranks lower. Only
// documents that share enough with the query match, so the number of
// hits means something.
//
// The package knows nothing of MCP's transport or of mcpx's catalog: it
// reads the capability objects it is given and nothing else.
package search
