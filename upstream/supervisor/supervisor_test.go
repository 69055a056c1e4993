//go:build unix

package supervisor

import (
	"slices"
	"testing"
)

// An mcpx that serves behind another passes its supervisor's commands the
// outer tag too; each command must carry exactly its own.
func TestWithTagReplacesOuterTag(t *testing.T) {
	got := withTag([]string{"A=1", TreeEnv + "=outer.1", "MCPX_TREEX=keep"}, "inner.2")
	want := []string{"A=1", "MCPX_TREEX=keep", TreeEnv + "=inner.2"}
	if !slices.Equal(got, want) {
		t.Errorf("withTag = %q, want %q", got, want)
	}
}
