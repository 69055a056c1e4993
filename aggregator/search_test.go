package aggregator

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/search"
)

func describedTool(name, desc, param string) string {
	return fmt.Sprintf(`{"name":%q,"description":%q,"inputSchema":{"type":"object","properties":{%q:{"type":"string"}}}}`, name, desc, param)
}

func searchSources(t *testing.T) []*member {
	files := &fakeSource{name: "files", tools: raws(t,
		describedTool("read_file", "Read a file", "path"), describedTool("write_file", "Write a file", "path"))}
	mail := &fakeSource{name: "mail", tools: raws(t,
		describedTool("send_mail", "Send an email with a file attached", "to"), describedTool("read_inbox", "Read the inbox", "folder"))}
	return []*member{mem(files, "files"), mem(mail, "mail")}
}

func hitNames(items []proxytool.Item, res search.Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, items[h.Doc].Name)
	}
	return out
}

// TestSearchSharedByProfiles checks that catalogs of the same servers,
// seen through different profiles (the sessions of serve --http, the
// /mcp/NAME views), search one index, and that each sees only what its
// profile shows.
func TestSearchSharedByProfiles(t *testing.T) {
	b := search.NewBuilder()
	all := build(searchSources(t), "_", nil, b)
	// One built again over the same servers (a session's own catalog),
	// one a view of the first.
	work := build(searchSources(t), "_", nil, b).View(&config.Profile{Name: "work", Servers: []string{"mail"}})
	noWrite := all.View(&config.Profile{Name: "read", Tools: config.Filter{Deny: []string{"*write*"}}})

	ix := all.search.kinds[0].index(all.search)
	for _, c := range []*Catalog{work, noWrite} {
		if got := c.search.kinds[0].index(c.search); got != ix {
			t.Error("a profile's catalog built an index of its own")
		}
	}

	for _, tt := range []struct {
		c    *Catalog
		want []string
	}{
		{all, []string{"files_read_file", "files_write_file", "mail_send_mail"}},
		{work, []string{"mail_send_mail"}},
		{noWrite, []string{"files_read_file", "mail_send_mail"}},
	} {
		items, res := tt.c.Search(proxytool.KindTool, "file", nil)
		got := hitNames(items, res)
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("file: %v, want %v", got, tt.want)
		}
	}
	// The terminal's ranking is the same search.
	if got := work.Rank(KindTool, "inbox"); len(got) == 0 || got[0].Name != "mail_read_inbox" {
		t.Errorf("Rank inbox: %v", labels(got))
	}
}

// TestSearchFollowsChanges checks that a rebuild with a changed server
// finds the new text, and that the proxy tool's description follows.
func TestSearchFollowsChanges(t *testing.T) {
	b := search.NewBuilder()
	members := searchSources(t)
	before := build(members, "_", nil, b)
	if got := before.Rank(KindTool, "calendar"); len(got) != 0 {
		t.Fatalf("calendar before: %v", labels(got))
	}
	src := members[1].src.(*fakeSource)
	src.mu.Lock()
	src.tools = append(src.tools, raws(t, describedTool("add_event", "Add an event to the calendar", "when"))...)
	src.mu.Unlock()
	after := build(members, "_", nil, b)
	if got := after.Rank(KindTool, "calendar"); len(got) != 1 || got[0].Name != "mail_add_event" {
		t.Errorf("calendar after: %v", labels(got))
	}
	if string(before.proxyTool().JSON) == string(after.proxyTool().JSON) {
		t.Error("the proxy tool's description did not follow the change")
	}
}
