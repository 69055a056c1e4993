package search

import (
	"fmt"
	"runtime"
	"testing"
)

func docsOf(server string, n int, desc string) []Doc {
	out := make([]Doc, n)
	for i := range out {
		orig := fmt.Sprintf("tool_%d", i)
		out[i] = Doc{Name: server + "_" + orig, Original: orig, Server: server,
			Description: fmt.Sprintf("%s number %d", desc, i),
			JSON:        []byte(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"where"}}}}`, server+"_"+orig))}
	}
	return out
}

func TestBuilderShares(t *testing.T) {
	b := NewBuilder()
	docs := docsOf("a", 20, "reads files")
	ix := b.Build(docs, nil)
	// Another catalog of the same capabilities (a session's, a
	// profile's) gets the same index.
	if again := b.Build(append([]Doc(nil), docs...), nil); again != ix {
		t.Error("a build of the same documents made a new index")
	}
	// Other instructions make another index.
	if other := b.Build(docs, map[string]string{"a": "for weather"}); other == ix {
		t.Error("new instructions kept the old index")
	}
	runtime.KeepAlive(ix)
}

func TestBuilderIncremental(t *testing.T) {
	b := NewBuilder()
	a, c := docsOf("a", 10, "reads files"), docsOf("c", 10, "sends mail")
	b.Build(append(append([]Doc(nil), a...), c...), nil)
	before := map[string]*analysed{}
	for i := range a {
		before[a[i].Name] = b.analysed[b.key(&a[i])]
	}
	// Server c's list changes: a's documents are not analysed again.
	c[3].Description = "sends letters"
	ix := b.Build(append(append([]Doc(nil), a...), c...), nil)
	for i := range a {
		if b.analysed[b.key(&a[i])] != before[a[i].Name] {
			t.Errorf("%s analysed again", a[i].Name)
		}
	}
	if len(b.analysed) != 20 {
		t.Errorf("%d documents remembered, want the 20 of the catalog", len(b.analysed))
	}
	if hits := ix.Search("letters", nil).Hits; len(hits) != 1 || hits[0].Doc != 13 {
		t.Errorf("letters: %v", hits)
	}
}

func TestBuilderForgets(t *testing.T) {
	// Catalogs whose words keep changing do not grow the vocabulary
	// without bound.
	b := NewBuilder()
	for round := range 40 {
		docs := docsOf("s", 50, fmt.Sprintf("round%d alpha%d beta%d", round, round, round))
		for i := range docs {
			docs[i].Description += fmt.Sprintf(" w%dx%d", round, i)
		}
		b.Build(docs, nil)
	}
	if n := len(b.words); n > 2*4096 {
		t.Errorf("%d words remembered after 40 catalogs of about 60 each", n)
	}
}
