package proxytool

import (
	"encoding/json"
	"strconv"
	"strings"
)

// list answers action list: one embedded resource whose text is a JSON
// array of the capability objects on the requested page.
//
// This is the hot path of a large catalog, so it never decodes an item's
// JSON: the page's objects are escaped straight into the result, and
// without a query the matches are only counted, not collected.
func (p *Proxy) list(req request) json.RawMessage {
	items := p.c.Items(req.kind)
	keep := p.serverFilter(req.kind, items, req.filterServer)

	var total int
	page := make([]int, 0, min(req.limit, len(items))) // indices into items
	lo, hi := req.offset, req.offset+req.limit         // the page is matches [lo, hi)
	if terms := searchTerms(req.query); len(terms) > 0 {
		hits := rank(items, terms, keep)
		total = len(hits)
		for _, h := range hits[min(lo, total):min(hi, total)] {
			page = append(page, h.index)
		}
	} else if keep == nil {
		total = len(items)
		for i := min(lo, total); i < min(hi, total); i++ {
			page = append(page, i)
		}
	} else {
		for i := range items {
			if !keep(&items[i]) {
				continue
			}
			if total >= lo && total < hi {
				page = append(page, i)
			}
			total++
		}
	}

	typ := listType(req.kind)
	size := 320
	for _, i := range page {
		size += len(items[i].JSON) + len(items[i].JSON)/4 + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"content":[{"type":"resource","resource":{"uri":"proxy:list/`...)
	b = append(b, req.kind...)
	b = append(b, `","mimeType":"application/json","text":"[`...)
	for n, i := range page {
		if n > 0 {
			b = append(b, ',')
		}
		js := items[i].JSON
		if len(js) == 0 {
			js = []byte("null")
		}
		b = appendEscaped(b, js)
	}
	b = append(b, `]"},"annotations":{"pythonType":"`...)
	b = append(b, typ...)
	b = append(b, `","objectType":"`...)
	b = append(b, typ...)
	b = append(b, `","many":true,"isArray":true,"proxyAction":"list","proxyType":"`...)
	b = append(b, req.kind...)
	b = append(b, `","totalCount":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(req.offset), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(req.limit), 10)
	return append(b, `}}]}`...)
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
