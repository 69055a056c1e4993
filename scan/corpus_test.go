package scan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
)

// entry is one labelled definition of testdata/corpus.jsonl: malicious,
// a hard negative (honest text written to look like an attack: a guard
// that quotes one, a safe twin, a wrapper), or benign (real servers'
// honest descriptions, in the corpus's own words).
type entry struct {
	ID     string          `json:"id"`
	Label  string          `json:"label"`
	Family Family          `json:"family"`
	Others []string        `json:"others"`
	Tool   json.RawMessage `json:"tool"`
}

// names are the entry's others as the catalog's, all of another server.
func (e entry) names() *Names {
	n := &Names{}
	for _, o := range e.Others {
		n.Add("other", o)
	}
	return n
}

func readCorpus(t testing.TB) []entry {
	t.Helper()
	f, err := os.Open("testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("corpus line %d: %v", len(out)+1, err)
		}
		out = append(out, e)
	}
	return out
}

// TestCorpus: the scanner's recall on the malicious entries and its
// false positives on the hard negatives and the benign ones. Targets:
// recall at least 0.90, hard negatives flagged at most 0.05, benign
// never.
func TestCorpus(t *testing.T) {
	var mal, caught, family, hard, hardFlagged, benign, benignFlagged int
	for _, e := range readCorpus(t) {
		fs := Capability(e.Tool, "", e.names())
		switch e.Label {
		case "malicious":
			mal++
			if len(fs) == 0 {
				t.Logf("missed %s", e.ID)
				continue
			}
			caught++
			for _, f := range fs {
				if f.Family == e.Family {
					family++
					break
				}
			}
		case "hard":
			hard++
			if len(fs) > 0 {
				hardFlagged++
				t.Logf("hard negative %s flagged: %v", e.ID, fs)
			}
		case "benign":
			benign++
			if len(fs) > 0 {
				benignFlagged++
				t.Errorf("benign %s flagged: %v", e.ID, fs)
			}
		default:
			t.Fatalf("%s: label %q", e.ID, e.Label)
		}
	}
	recall := float64(caught) / float64(mal)
	fpHard := float64(hardFlagged) / float64(hard)
	t.Logf("malicious %d/%d (recall %.2f, family named %d); hard negatives flagged %d/%d (%.2f); benign flagged %d/%d",
		caught, mal, recall, family, hardFlagged, hard, fpHard, benignFlagged, benign)
	if recall < 0.90 {
		t.Errorf("recall %.2f, want at least 0.90", recall)
	}
	if fpHard > 0.05 {
		t.Errorf("hard negatives flagged %.2f, want at most 0.05", fpHard)
	}
}

// BenchmarkCapability: the scan's cost per tool, on the honest
// definitions of the corpus (benign and hard negatives, what catalogs
// are made of) and on the malicious ones, against decoding the same
// tool's JSON, which any use of it costs anyway. Each is scanned in one
// catalog of 10,000 tools' names and every entry's others.
func BenchmarkCapability(b *testing.B) {
	corpus := readCorpus(b)
	names := &Names{}
	for _, e := range corpus {
		for _, o := range e.Others {
			names.Add("other", o)
		}
	}
	for j := range 10000 {
		names.Add(fmt.Sprintf("s%d", j/10), fmt.Sprintf("s%d_tool_%d", j/10, j))
	}
	var honest, malicious, decode time.Duration
	var nh, nm int
	for b.Loop() {
		for _, e := range corpus {
			start := time.Now()
			Capability(e.Tool, "", names)
			took := time.Since(start)
			if e.Label == "malicious" {
				malicious += took
				nm++
			} else {
				honest += took
				nh++
			}
			start = time.Now()
			var v map[string]any
			_ = json.Unmarshal(e.Tool, &v)
			decode += time.Since(start)
		}
	}
	b.ReportMetric(float64(honest.Nanoseconds())/float64(nh)/1000, "µs/honest-tool")
	b.ReportMetric(float64(malicious.Nanoseconds())/float64(nm)/1000, "µs/malicious-tool")
	b.ReportMetric(float64(honest+malicious)/float64(decode), "scan/decode")
}
