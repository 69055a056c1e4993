package trust

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
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
	// current are the definitions listed now, as Approve records them.
	current *Pins
}

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
// anything it has no pins: what it lists is recorded and trusted (unless
// mode is off, or the pins cannot be written: then it is served unpinned
// and the failure is logged once). A server that lists nothing (not
// connected yet) is compared with nothing.
func (s *Store) Review(server string, mode Mode, tools, prompts []json.RawMessage) *Review {
	r := &Review{Server: server, Mode: mode}
	if mode == ModeOff || len(tools)+len(prompts) == 0 {
		return r
	}
	key := lastReview{tools: first(tools), prompts: first(prompts), nt: len(tools), np: len(prompts), mode: mode}
	s.mu.Lock()
	if l, ok := s.last[server]; ok && l.gen == s.gen && l.tools == key.tools && l.prompts == key.prompts &&
		l.nt == key.nt && l.np == key.np && l.mode == mode {
		s.mu.Unlock()
		return l.r
	}
	key.gen = s.gen
	r.current = &Pins{Tools: make(map[string]Record, len(tools)), Prompts: make(map[string]Record, len(prompts))}
	for _, l := range []struct {
		kind Kind
		raws []json.RawMessage
	}{{Tool, tools}, {Prompt, prompts}} {
		for _, raw := range l.raws {
			name := nameOf(raw)
			text, sum, err := s.canonicalLocked(l.kind, raw)
			if name == "" || err != nil {
				continue // the catalog reports it, and serves nothing of it
			}
			r.current.of(l.kind)[name] = Record{SHA256: sum, Definition: text}
		}
	}
	pins := s.pins[server]
	unwritable := s.unwritable
	s.mu.Unlock()
	if pins == nil {
		if unwritable == nil {
			s.firstUse(server, r.current)
		}
		return r
	}
	r.Pinned = true
	r.Changes = compare(pins, r.current)
	s.mu.Lock()
	if s.gen == key.gen {
		key.r = r
		s.last[server] = key
	}
	s.mu.Unlock()
	return r
}

// first is the address of the first element of l, nil when it is empty:
// with the length, what tells the same snapshot of a list from another.
func first(l []json.RawMessage) *json.RawMessage {
	if len(l) == 0 {
		return nil
	}
	return &l[0]
}

// firstUse records a server's first definitions, unless another process
// recorded some meanwhile (then the next review compares with those).
func (s *Store) firstUse(server string, current *Pins) {
	err := s.update(func(pins map[string]*Pins) {
		if pins[server] == nil {
			p := *current
			p.Approved = time.Now().UTC()
			pins[server] = &p
		}
	})
	if err != nil {
		s.mu.Lock()
		first := s.unwritable == nil
		s.unwritable = err
		s.mu.Unlock()
		if first {
			s.log.Warn("cannot record the tools of servers seen for the first time: they are served unpinned for this run; servers pinned before stay pinned",
				"err", err)
		}
	}
}

// compare lists how now differs from approved.
func compare(approved, now *Pins) []Change {
	var out []Change
	for _, kind := range []Kind{Tool, Prompt} {
		old, cur := approved.of(kind), now.of(kind)
		for name, rec := range cur {
			prev, ok := old[name]
			switch {
			case !ok:
				out = append(out, Change{Kind: kind, Name: name, Status: Added, New: rec.Definition})
			case prev.SHA256 != rec.SHA256:
				out = append(out, Change{Kind: kind, Name: name, Status: Changed, Old: prev.Definition, New: rec.Definition})
			}
		}
		for name, rec := range old {
			if _, ok := cur[name]; !ok {
				out = append(out, Change{Kind: kind, Name: name, Status: Removed, Old: rec.Definition})
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
// the user read the diff stays withheld.
func (s *Store) Approve(r *Review) error {
	if r.current == nil {
		return nil
	}
	return s.update(func(pins map[string]*Pins) {
		p := *r.current
		p.Approved = time.Now().UTC()
		pins[r.Server] = &p
	})
}
