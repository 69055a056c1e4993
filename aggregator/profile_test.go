package aggregator

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/search"
)

// TestCatalogView: a profile's view narrows the catalog as built to its
// servers and tools, shares its entries and search, is made once per
// snapshot, and leaves the catalog it was made from as it was.
func TestCatalogView(t *testing.T) {
	full := build(searchSources(t), "_", nil, search.NewBuilder())
	mail := &config.Profile{Name: "mail", Servers: []string{"mail"}}
	v := full.View(mail)

	if got := entryNames(v.Tools); !slices.Equal(got, []string{"mail_send_mail", "mail_read_inbox"}) {
		t.Errorf("view lists %v", got)
	}
	for _, e := range v.Tools {
		if f, _ := full.Tool(e.Name); f != e {
			t.Errorf("%s: the view has an entry of its own, not the snapshot's", e.Name)
		}
	}
	if full.View(mail) != v {
		t.Error("a second View of the same profile made another view")
	}
	if full.View(nil) != full {
		t.Error("View(nil) is not the catalog itself")
	}

	// What the profile keeps out is unknown to the view, saying why, and
	// still known to the catalog.
	if _, ok := v.Tool("files_read_file"); ok {
		t.Error("the view serves a tool of a server outside its profile")
	}
	f := v.FilteredOut(KindTool, "files_read_file")
	if f == nil || f.Profile != "mail" || !errors.Is(f, ErrUnknown) {
		t.Errorf("FilteredOut in the view = %+v, want one naming profile mail", f)
	}
	if _, ok := full.Tool("files_read_file"); !ok {
		t.Error("making a view removed a tool from the catalog")
	}
	if f := full.FilteredOut(KindTool, "files_read_file"); f != nil {
		t.Errorf("making a view filed %+v in the catalog", f)
	}
	if got := entryNames(full.Tools); len(got) != 4 {
		t.Errorf("the catalog lists %v after a view was made", got)
	}

	// The view searches the catalog's index, seeing only its own.
	if v.search.kinds[0].index(v.search) != full.search.kinds[0].index(full.search) {
		t.Error("the view made a search index of its own")
	}
	if got := entryNames(v.Rank(KindTool, "read")); !slices.Equal(got, []string{"mail_read_inbox"}) {
		t.Errorf("the view ranks %v for read", got)
	}
	if got := entryNames(full.Rank(KindTool, "read")); len(got) < 2 {
		t.Errorf("the catalog ranks %v for read after a view was searched", got)
	}

	// The proxy tool's list over the view describes only what it shows.
	items := v.items[proxytool.KindTool]
	var names []string
	for _, it := range items {
		names = append(names, it.Name)
	}
	if !slices.Equal(names, []string{"mail_send_mail", "mail_read_inbox"}) {
		t.Errorf("the view's proxy items are %v", names)
	}
}

// TestProfileViewFollowsTheSnapshot: the catalog a session shown a
// profile reads is the shared snapshot seen through it, not a catalog
// built again from the sources; a change to a source reaches it with
// list_changed, and its client lists the new tools.
func TestProfileViewFollowsTheSnapshot(t *testing.T) {
	mailProfile := &config.Profile{Name: "mail", Servers: []string{"mail"}}
	cfg := &config.Config{Separator: "_", Expose: config.ExposeDirect,
		Profiles: map[string]*config.Profile{"mail": mailProfile}}
	a := New(cfg, &Options{Serving: true})
	members := searchSources(t)
	a.members = members
	a.Rebuild()
	close(a.ready)
	v := a.childCatalog(nil, "mail")
	v.Rebuild()
	close(v.ready)

	if got, want := v.Catalog(), a.full.Load().View(mailProfile); got != want {
		t.Fatal("the view's catalog is not the shared snapshot's view")
	}
	c := serveOn(t, v)
	c.initialize()
	c.sync()
	listed := func(id int) []string {
		t.Helper()
		r := c.call(id, "tools/list", nil)
		var res struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatalf("tools/list: %v: %s", err, r.line)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := listed(1); !slices.Equal(got, []string{"mail_send_mail", "mail_read_inbox"}) {
		t.Fatalf("tools/list through the view: %v", got)
	}

	n := c.noteCount()
	members[1].src.(*fakeSource).set("tools", raws(t, describedTool("archive", "Archive a message", "id")))
	a.Rebuild()
	if got := relayed(c, n, "notifications/tools/list_changed"); len(got) == 0 {
		t.Error("no tools/list_changed reached the view's client")
	}
	if got := listed(2); !slices.Equal(got, []string{"mail_archive"}) {
		t.Errorf("tools/list after the change: %v", got)
	}
	if got, want := v.Catalog(), a.full.Load().View(mailProfile); got != want {
		t.Error("after the rebuild the view's catalog is not the new snapshot's view")
	}
	if strings.Contains(strings.Join(listed(3), ","), "files_") {
		t.Error("the view lists a tool of a server outside its profile")
	}
}

func entryNames(entries []*Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name
	}
	return out
}

// BenchmarkProfileViews measures what a rebuild costs the sessions shown
// a profile: each building its own catalog from the sources and
// narrowing it (as they did), against one build and a view per session's
// profile. Ten servers of a hundred tools, four profiles, and a session
// for each of them.
func BenchmarkProfileViews(b *testing.B) {
	var members []*member
	for s := range 10 {
		var tools []string
		for i := range 100 {
			tools = append(tools, describedTool(fmt.Sprintf("tool_%d", i), fmt.Sprintf("Does thing %d of server %d", i, s), "arg"))
		}
		name := fmt.Sprintf("s%d", s)
		members = append(members, mem(&fakeSource{name: name, tools: raws(b, tools...)}, name))
	}
	profiles := []*config.Profile{
		{Name: "a", Servers: []string{"s0", "s1"}},
		{Name: "b", Servers: []string{"s2", "s3", "s4"}},
		{Name: "c", Tools: config.Filter{Deny: []string{"*_tool_1*"}}},
		{Name: "d", Servers: []string{"s9"}},
	}
	ix := search.NewBuilder()
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			build(members, "_", nil, ix)
			for _, p := range profiles {
				build(members, "_", nil, ix).View(p)
			}
		}
	})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			full := build(members, "_", nil, ix)
			for _, p := range profiles {
				full.View(p)
			}
		}
	})
}
