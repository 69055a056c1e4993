package proxytool

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpx/mcpx/search"
)

// page is what one list answers: the matches' count and the items of the
// page asked for, with what the reader should know about them.
type page struct {
	items []Item // the list the indices refer to
	index []int  // the page's items, in order
	total int    // matches before paging
	// noWords says the query had nothing to search by.
	noWords bool
	notes   []string
}

// list answers action list: one embedded resource whose text is a JSON
// array of the capabilities on the requested page (summaries, or with
// detail "full" the MCP objects), then a text item a model reads that
// says which page this is and how to get the next, the same paging in
// structuredContent, and in the resource's annotations as Magg has it.
//
// This is the hot path of a large catalog: without a query the matches
// are only counted, and only the page's objects are read.
func (p *Proxy) list(ctx context.Context, req request) json.RawMessage {
	var starting []string
	if s, ok := p.c.(Starter); ok {
		starting = s.AwaitStarting(ctx)
	}
	pg := p.find(req)
	if len(starting) > 0 {
		pg.notes = append(pg.notes, fmt.Sprintf("Still starting, so not listed yet: %s.", strings.Join(starting, ", ")))
	}

	typ := listType(req.kind)
	b := make([]byte, 0, 1024+len(pg.index)*512)
	b = append(b, `{"content":[{"type":"resource","resource":{"uri":"proxy:list/`...)
	b = append(b, req.kind...)
	b = append(b, `","mimeType":"application/json","text":"`...)
	var arr []byte
	arr = append(arr, '[')
	for n, i := range pg.index {
		if n > 0 {
			arr = append(arr, ',')
		}
		if req.detail == detailFull {
			js := pg.items[i].JSON
			if len(js) == 0 {
				js = []byte("null")
			}
			arr = append(arr, js...)
		} else {
			arr = appendSummary(arr, &pg.items[i], p.canRun())
		}
	}
	arr = append(arr, ']')
	b = appendEscaped(b, arr)
	b = append(b, `"},"annotations":{"pythonType":"`...)
	b = append(b, typ...)
	b = append(b, `","objectType":"`...)
	b = append(b, typ...)
	b = append(b, `","many":true,"isArray":true,"proxyAction":"list","proxyType":"`...)
	b = append(b, req.kind...)
	b = append(b, `","totalCount":`...)
	b = strconv.AppendInt(b, int64(pg.total), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(req.offset), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(req.limit), 10)
	b = append(b, `}},{"type":"text","text":`...)
	b = appendQuoted(b, []byte(pg.summary(req)))
	b = append(b, `}],"structuredContent":`...)
	sc, _ := json.Marshal(pg.paging(req))
	b = append(b, sc...)
	return append(b, '}')
}

// find returns the page a list asks for.
func (p *Proxy) find(req request) page {
	items := p.c.Items(req.kind)
	keep := p.serverFilter(req.kind, items, req.filterServer)
	pg := page{items: items}
	lo, hi := req.offset, req.offset+req.limit // the page is matches [lo, hi)
	switch {
	case strings.TrimSpace(req.query) != "":
		var res search.Result
		pg.items, res = p.search(req.kind, req.query, keep)
		pg.total = len(res.Hits)
		pg.noWords = len(res.Terms) == 0 && pg.total == 0
		for _, h := range res.Hits[min(lo, pg.total):min(hi, pg.total)] {
			pg.index = append(pg.index, h.Doc)
		}
		for _, n := range res.Notes {
			pg.notes = append(pg.notes, strings.ToUpper(n[:1])+n[1:]+".")
		}
	case keep == nil:
		pg.total = len(items)
		for i := min(lo, pg.total); i < min(hi, pg.total); i++ {
			pg.index = append(pg.index, i)
		}
	default:
		for i := range items {
			if !keep(&items[i]) {
				continue
			}
			if pg.total >= lo && pg.total < hi {
				pg.index = append(pg.index, i)
			}
			pg.total++
		}
	}
	return pg
}

// search ranks a kind's items for query, through the catalog's own index
// when it keeps one ([Searcher]), else through one the proxy builds from
// Items (which its builder hands back unchanged while the items are).
func (p *Proxy) search(kind Kind, query string, keep func(*Item) bool) ([]Item, search.Result) {
	if s, ok := p.c.(Searcher); ok {
		return s.Search(kind, query, keep)
	}
	items := p.c.Items(kind)
	docs := make([]search.Doc, len(items))
	for i, it := range items {
		docs[i] = search.Doc{Name: it.Name, Original: it.Original, Server: it.Server,
			Title: it.Title, Description: it.Description, JSON: it.JSON}
	}
	ix := p.index.Build(docs, nil)
	var k func(int) bool
	if keep != nil {
		k = func(d int) bool { return keep(&items[d]) }
	}
	return items, ix.Search(query, k)
}

// summary is the text item of a list answer: which page this is, how to
// get the next, and the notes.
func (pg *page) summary(req request) string {
	var b strings.Builder
	of := ""
	if req.filterServer != "" {
		of = " of " + req.filterServer
	}
	q := strings.TrimSpace(req.query)
	matching := ""
	if q != "" {
		matching = fmt.Sprintf(" matching %q", oneLine(q, 80))
	}
	plural := string(req.kind) + "s"
	switch {
	case pg.noWords:
		fmt.Fprintf(&b, "The query %q has no words to search by (only common words or punctuation), so nothing is listed. Search with a few words about the task, or list without a query to page through every %s.", oneLine(q, 80), req.kind)
	case pg.total == 0 && q != "":
		fmt.Fprintf(&b, "No %s%s matches %q. Try other words, or list without a query to page through every %s.", req.kind, of, oneLine(q, 80), req.kind)
	case pg.total == 0:
		fmt.Fprintf(&b, "No %s%s.", plural, of)
	case req.offset >= pg.total:
		last := (pg.total - 1) / req.limit * req.limit
		fmt.Fprintf(&b, "Offset %d is past the end: %d %s%s%s. The last page starts at offset %d.", req.offset, pg.total, plural, of, matching, last)
	case len(pg.index) == pg.total && pg.total == 1:
		fmt.Fprintf(&b, "1 %s%s%s.", req.kind, of, matching)
	case len(pg.index) == pg.total:
		fmt.Fprintf(&b, "All %d %s%s%s.", pg.total, plural, of, matching)
	default:
		fmt.Fprintf(&b, "Showing %d-%d of %d %s%s%s", req.offset+1, req.offset+len(pg.index), pg.total, plural, of, matching)
		if q != "" {
			b.WriteString(", best first")
		}
		b.WriteString(".")
	}
	if next := req.offset + len(pg.index); len(pg.index) > 0 && next < pg.total {
		fmt.Fprintf(&b, ` Next page: the same list with "offset":%d.`, next)
	}
	if len(pg.index) > 0 && req.detail != detailFull && req.kind != KindResource {
		fmt.Fprintf(&b, ` One in full: {"action":"info","type":"%s","path":"NAME"}.`, req.kind)
	}
	for _, n := range pg.notes {
		b.WriteString(" ")
		b.WriteString(n)
	}
	return b.String()
}

// listPaging is a list answer's structuredContent.
type listPaging struct {
	TotalCount int      `json:"totalCount"`
	Offset     int      `json:"offset"`
	Limit      int      `json:"limit"`
	Returned   int      `json:"returned"`
	NextOffset *int     `json:"nextOffset,omitempty"` // absent on the last page
	Notes      []string `json:"notes,omitempty"`
}

func (pg *page) paging(req request) listPaging {
	lp := listPaging{TotalCount: pg.total, Offset: req.offset, Limit: req.limit, Returned: len(pg.index), Notes: pg.notes}
	if next := req.offset + len(pg.index); len(pg.index) > 0 && next < pg.total {
		lp.NextOffset = &next
	}
	return lp
}

// serverFilter returns the filter_server predicate, or nil for none. The
// items of the server with that exact name are kept; when no server has
// that name (among all kinds, not only this one), items whose exposed name
// starts with it are.
func (p *Proxy) serverFilter(kind Kind, items []Item, server string) func(*Item) bool {
	if server == "" {
		return nil
	}
	byServer := func(it *Item) bool { return it.Server == server }
	if hasServer(items, server) {
		return byServer
	}
	for _, k := range []Kind{KindTool, KindResource, KindPrompt} {
		if k != kind && hasServer(p.c.Items(k), server) {
			return byServer
		}
	}
	return func(it *Item) bool { return strings.HasPrefix(it.Name, server) }
}

func hasServer(items []Item, server string) bool {
	for i := range items {
		if items[i].Server == server {
			return true
		}
	}
	return false
}

// listType is the pythonType (and objectType) of a list of kind.
func listType(kind Kind) string {
	switch kind {
	case KindTool:
		return "Tool"
	case KindResource:
		return "Resource|ResourceTemplate"
	default:
		return "Prompt"
	}
}
