package dashboard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/trust"
)

// errConflict is what an approval of a review that changed since the
// page showed it fails with.
var errConflict = errors.New("the changes differ from those the page showed: reload it and read them again")

// trustEntry is one server's review on the trust page.
type trustEntry struct {
	Server   string
	Mode     trust.Mode
	Pinned   bool
	Withheld int
	Diffs    []trust.Diff
	// Mark names the review the page showed; an approval must carry it.
	Mark string
}

// mark names a review's changes: an approval posted with another mark
// was read against other changes and is refused.
func mark(r *trust.Review) string {
	b, _ := json.Marshal(r.Changes)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// reviews are the reviews with something waiting, of the shown servers,
// in config order.
func reviews(cat Catalog) []*trust.Review {
	c := cat.Catalog()
	var out []*trust.Review
	for _, s := range cat.Servers() {
		if r := c.Reviews[s.Name]; r != nil && r.Pending() > 0 {
			out = append(out, r)
		}
	}
	return out
}

// trust shows what waits for approval: the changes since approved and
// the first sights the scanner flagged, as mcpx trust shows them.
func (d *Dashboard) trust(w http.ResponseWriter, r *http.Request, cat Catalog) {
	names := cat.Catalog().ToolNames()
	var entries []trustEntry
	for _, rv := range reviews(cat) {
		entries = append(entries, trustEntry{Server: rv.Server, Mode: rv.Mode, Pinned: rv.Pinned,
			Withheld: rv.WithheldCount(), Diffs: rv.Diffs(names), Mark: mark(rv)})
	}
	d.render(w, r, http.StatusOK, "trust", &page{Title: "Trust", Flash: flash(r), Live: "/ui/trust?part=live", Data: entries})
}

// trustAction approves a server's changes, exactly those the page
// showed, or rejects them: the server is disabled, and what it changed
// stays withheld.
func (d *Dashboard) trustAction(w http.ResponseWriter, r *http.Request, cat Catalog) {
	if !d.checkPost(w, r) {
		return
	}
	if d.o.Control == nil {
		http.Error(w, "forbidden: this dashboard makes no changes", http.StatusForbidden)
		return
	}
	server := r.PostForm.Get("server")
	rvs := reviews(cat)
	i := slices.IndexFunc(rvs, func(rv *trust.Review) bool { return rv.Server == server })
	if i < 0 {
		http.Error(w, "nothing of "+quoteName(server)+" waits for approval here", http.StatusNotFound)
		return
	}
	rv := rvs[i]
	verb := strings.TrimPrefix(r.URL.Path, "/ui/trust/")
	var err error
	switch {
	case r.PostForm.Get("mark") != mark(rv):
		err = errConflict
	case verb == "approve":
		err = d.o.Control.Approve(rv)
	default:
		err = d.o.Control.SetEnabled(server, false)
	}
	d.done(w, r, "/ui/trust", verb, server, err)
}
