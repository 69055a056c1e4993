package trust

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/mcpx/mcpx/scan"
)

// Status says how a definition differs from the approved one.
type Status string

// The statuses of a change.
const (
	Added   Status = "added"   // new on a server already pinned
	Changed Status = "changed" // its pinned members differ
	Removed Status = "removed" // no longer listed; nothing to withhold
)

// Change is one definition that differs from what was approved: Old is
// the approved canonical definition (nil when added), New the one listed
// now (nil when removed).
type Change struct {
	Kind   Kind            `json:"kind"`
	Name   string          `json:"name"`
	Status Status          `json:"status"`
	Old    json.RawMessage `json:"old,omitempty"`
	New    json.RawMessage `json:"new,omitempty"`
}

// Review is what a server lists now against what was approved.
type Review struct {
	Server string
	Mode   Mode
	// Pinned says the server has approved definitions to compare with.
	Pinned bool
	// Changes are sorted by kind, then name.
	Changes []Change
	// tools and prompts are the lists reviewed, as the server sent them:
	// what Approve records.
	tools, prompts []json.RawMessage
}

// current are the definitions reviewed, as Approve records them.
func (r *Review) current() *Pins { return pinsOf(r.tools, r.prompts) }

// Withheld reports whether the definition of that kind and server's own
// name is kept from clients, and why: it is new or changed and the
// server's mode is pin.
func (r *Review) Withheld(kind Kind, name string) (Change, bool) {
	if r == nil || r.Mode != ModePin {
		return Change{}, false
	}
	for _, c := range r.Changes {
		if c.Kind == kind && c.Name == name && c.Status != Removed {
			return c, true
		}
	}
	return Change{}, false
}

// Pending counts the changes that wait for approval, removals aside.
func (r *Review) Pending() int {
	if r == nil {
		return 0
	}
	n := 0
	for _, c := range r.Changes {
		if c.Status != Removed {
			n++
		}
	}
	return n
}

// WithheldCount counts the definitions withheld (Pending in mode pin).
func (r *Review) WithheldCount() int {
	if r == nil || r.Mode != ModePin {
		return 0
	}
	return r.Pending()
}

// Review compares the tools and prompts server lists now (raw, as the
// server sent them, before any cleaning: hidden text added to a
// description is a change) with its pins. The first time a server lists
// anything it has no pins: what it lists is trusted, and recorded with
// the next write of the first uses (see [Store]), except what the
// scanner (package scan) flags, which is new until approved; unless mode
// is off or the pins cannot be written: then it is served unpinned and
// the failure is logged once. A server that lists nothing (not connected
// yet) is compared with nothing. others, called only at a first sight
// (nil: none), gives the catalog's tool names, as their servers name them
// and as they are exposed, so that a first text telling the model how to
// use another server's tool (shadowing) is caught too.
//
// A first use costs the review a scan of each definition (tens of
// microseconds each, once per server) and a note: its definitions are
// pinned when written, off the catalog's path. The review of a pinned
// server reads each definition once (its fingerprint is cached by its
// bytes) and is kept for the next rebuild over the same lists.
func (s *Store) Review(server string, mode Mode, tools, prompts []json.RawMessage, others func() *scan.Names) *Review {
	r := &Review{Server: server, Mode: mode}
	if mode == ModeOff || len(tools)+len(prompts) == 0 {
		return r
	}
	r.tools, r.prompts = tools, prompts
	if s.wait() != nil {
		// The pins cannot be read: nothing listed is known to be approved.
		s.mu.Lock()
		defer s.mu.Unlock()
		r.Pinned = true
		r.Changes = s.compareLocked(&Pins{Tools: map[string]Record{}, Prompts: map[string]Record{}}, r)
		return r
	}
	key := lastReview{tools: first(tools), prompts: first(prompts), nt: len(tools), np: len(prompts), mode: mode}
	s.mu.Lock()
	defer s.mu.Unlock()
	grew := s.namesGrewLocked(server, others)
	if l, ok := s.last[server]; ok && l.gen == s.gen && l.tools == key.tools && l.prompts == key.prompts &&
		l.nt == key.nt && l.np == key.np && l.mode == mode && !grew {
		return l.r
	}
	key.gen, key.r = s.gen, r
	pins := s.pins[server]
	if pins == nil {
		fu := s.pending[server]
		if grew {
			s.rescanLocked(server, fu, others())
		}
		switch {
		case fu == nil && (s.unwritable != nil || s.closed):
			return r // served unpinned
		case fu == nil:
			var names *scan.Names
			if others != nil {
				names = others()
			}
			clean, cleanPrompts := unflagged(server, tools, names), unflagged(server, prompts, names)
			s.pending[server] = &firstUse{tools: clean, prompts: cleanPrompts, seen: time.Now(), names: names.Len()}
			s.scheduleLocked()
			if len(clean) == len(tools) && len(cleanPrompts) == len(prompts) {
				s.last[server] = key
				return r
			}
			// What the scanner flags at first sight is not pinned: it
			// is compared with the pins to be, so it is new, and
			// withheld in mode pin until approved.
			fu := s.pending[server]
			fu.rec = fu.make()
		case first(fu.tools) == key.tools && first(fu.prompts) == key.prompts && len(fu.tools) == key.nt && len(fu.prompts) == key.np:
			s.last[server] = key
			return r
		}
		// Other lists before the first ones were written: compared with
		// those, as they will be pinned.
		if fu := s.pending[server]; fu.rec == nil {
			fu.rec = fu.make()
		}
		pins = s.pending[server].rec
	}
	r.Pinned = true
	r.Changes = s.compareLocked(pins, r)
	s.last[server] = key
	if len(r.Changes) > 0 {
		s.startWatchLocked()
	}
	return r
}

// namesGrewLocked reports whether server's first sight is not yet
// written and the catalog knows more tool names than when it was
// scanned: servers start at their own pace, and a first text that
// shadows a tool of a server that came up a moment later must not pass
// for having been checked. s.mu must be held.
func (s *Store) namesGrewLocked(server string, others func() *scan.Names) bool {
	fu := s.pending[server]
	return fu != nil && !fu.writing && others != nil && s.pins[server] == nil && others().Len() > fu.names
}

// rescanLocked takes out of fu what now shadows a tool of another
// server; what it takes out is then new, and withheld. Only a definition
// that names one is scanned again. s.mu must be held.
func (s *Store) rescanLocked(server string, fu *firstUse, names *scan.Names) {
	fu.names = names.Len()
	flagged := func(raw json.RawMessage) bool {
		return names.Mentioned(raw, server) && len(scan.Capability(raw, server, names)) > 0
	}
	tools, prompts := without(fu.tools, flagged), without(fu.prompts, flagged)
	if len(tools) != len(fu.tools) || len(prompts) != len(fu.prompts) {
		fu.tools, fu.prompts = tools, prompts
		fu.rec = fu.make()
	}
}

// unflagged are the definitions of l the scanner finds nothing in: what
// a first sight may pin without asking. others holds the catalog's tool
// names.
func unflagged(server string, l []json.RawMessage, others *scan.Names) []json.RawMessage {
	return without(l, func(raw json.RawMessage) bool { return len(scan.Capability(raw, server, others)) > 0 })
}

// without is l less the definitions flagged reports, l itself when it
// reports none. Each is asked about once: flagged is a scan.
func without(l []json.RawMessage, flagged func(json.RawMessage) bool) []json.RawMessage {
	i := slices.IndexFunc(l, flagged)
	if i < 0 {
		return l
	}
	out := slices.Clone(l[:i])
	for _, raw := range l[i+1:] {
		if !flagged(raw) {
			out = append(out, raw)
		}
	}
	return out
}

// first is the address of the first element of l, nil when it is empty:
// with the length, what tells the same snapshot of a list from another.
func first(l []json.RawMessage) *json.RawMessage {
	if len(l) == 0 {
		return nil
	}
	return &l[0]
}

// oldLocked is rec's definition: its own (a first use not written yet)
// or the file's. s.mu must be held.
func (s *Store) oldLocked(server string, kind Kind, name string, rec Record) json.RawMessage {
	if rec.Definition != nil {
		return rec.Definition
	}
	return s.definitionLocked(server, kind, name)
}

// compareLocked lists how what r reviews differs from approved; s.mu
// must be held.
func (s *Store) compareLocked(approved *Pins, r *Review) []Change {
	var out []Change
	for _, l := range []struct {
		kind Kind
		raws []json.RawMessage
	}{{Tool, r.tools}, {Prompt, r.prompts}} {
		old := approved.of(l.kind)
		cur := make(map[string]json.RawMessage, len(l.raws))
		sums := make(map[string]string, len(l.raws))
		for _, raw := range l.raws {
			name, sum, err := s.sumLocked(l.kind, raw)
			if name == "" || err != nil {
				continue // the catalog reports it, and serves nothing of it
			}
			cur[name], sums[name] = raw, sum
		}
		for name, raw := range cur {
			prev, ok := old[name]
			if ok && prev.SHA256 == sums[name] {
				continue
			}
			text, _, _ := canonical(l.kind, raw)
			if !ok {
				out = append(out, Change{Kind: l.kind, Name: name, Status: Added, New: text})
			} else {
				out = append(out, Change{Kind: l.kind, Name: name, Status: Changed, Old: s.oldLocked(r.Server, l.kind, name, prev), New: text})
			}
		}
		for name, rec := range old {
			if _, ok := cur[name]; !ok {
				out = append(out, Change{Kind: l.kind, Name: name, Status: Removed, Old: s.oldLocked(r.Server, l.kind, name, rec)})
			}
		}
	}
	slices.SortFunc(out, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Approve records what r saw the server list as its approved
// definitions: exactly those, so that a definition changed again since
// the user read the diff stays withheld. It returns once the pin file
// holds them (and the first uses that waited), so that an approval
// survives whatever happens to the process next.
func (s *Store) Approve(r *Review) error {
	if r == nil || len(r.tools)+len(r.prompts) == 0 {
		return nil
	}
	if err := s.wait(); err != nil {
		return err
	}
	cur := r.current()
	cur.Approved = time.Now().UTC()
	_, err := s.update(func(pins map[string]*Pins) { pins[r.Server] = cur })
	return err
}
