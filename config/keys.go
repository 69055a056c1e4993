package config

import (
	"slices"
	"strings"

	"github.com/mcpx/mcpx/internal/editdist"
)

// topKeys are the top-level keys mcpx reads.
var topKeys = []string{
	"servers", "mcpServers", "browser", "http", "expose", "separator", "lazy", "idleTimeout",
	"callTimeout", "maxCallTime", "maxConcurrent", "maxMessageBytes", "shutdownTimeout", "readyTimeout",
	"maxResultBytes", "results", "audit", "profiles", "trust", "code",
}

// foreignTopKeys belong to the formats mcpx reads besides its own: a JSON
// schema reference, VS Code's prompted inputs.
var foreignTopKeys = []string{"$schema", "inputs"}

// warnUnknownTop warns about each top-level key mcpx does not read. A
// file that keeps its servers under mcpServers is another program's
// (Claude Desktop, Claude Code, Cursor) and holds much else: there only a
// key close to one of mcpx's, a likely typo, is worth a word.
func (p *parser) warnUnknownTop(tree map[string]any) {
	_, shared := tree["mcpServers"]
	r := &reader{p: p, m: tree, typosOnly: shared}
	r.warnUnknown(slices.Concat(topKeys, foreignTopKeys)...)
}

// unknownKey is the warning for a key mcpx does not read, naming the
// closest of known when one is close; "" when typosOnly and none is.
func unknownKey(key string, known []string, typosOnly bool) string {
	if near := closestKey(key, known); near != "" {
		return "unknown key, ignored; did you mean " + near + "?"
	}
	if typosOnly {
		return ""
	}
	return "unknown key, ignored"
}

// maxKeyCompared bounds the length of a key compared: the edit distance
// costs the product of two lengths.
const maxKeyCompared = 64

// closestKey is the key of known that looks most like key, or "" when
// none does. The measure is the one proxytool.Closest uses for names, on
// the same edit distance (internal/editdist): case aside, one containing
// the other counts as close, else the edit distance must be at most a
// third of key's length (at least 2). Ties go to the first in known.
func closestKey(key string, known []string) string {
	want := strings.ToLower(key)
	if want == "" || len(want) > maxKeyCompared {
		return ""
	}
	limit := max(2, len([]rune(want))/3)
	best, bestDist := "", limit+1
	for _, k := range known {
		have := strings.ToLower(k)
		d := editdist.Distance(want, have)
		if strings.Contains(have, want) || strings.Contains(want, have) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// ClosestName is the name of known that looks most like name, or "" when
// none does, by the measure unknown keys are matched with: for a
// suggestion in a message about a name the config gives.
func ClosestName(name string, known []string) string { return closestKey(name, known) }
