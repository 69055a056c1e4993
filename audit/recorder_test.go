package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func readTrail(t testing.TB, path string) []Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []Line
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

func record(t testing.TB, opts Options, calls ...Call) {
	t.Helper()
	r, err := New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		r.Record(c)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestArgumentModes(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	call := Call{Start: start, End: start.Add(1500 * time.Microsecond), Client: "claude", Session: "s1", Server: "files",
		Method: "tools/call", Params: json.RawMessage(`{"name":"read","arguments":{"path":"/secret","n":1}}`),
		Result: json.RawMessage(`{"content":[],"isError":true}`)}
	for _, tc := range []struct {
		mode     Arguments
		keys     []string
		wantArgs bool
	}{{"", nil, false}, {ArgumentsKeys, []string{"path", "n"}, false}, {ArgumentsFull, nil, true}} {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		record(t, Options{Path: path, Arguments: tc.mode}, call)
		lines := readTrail(t, path)
		if len(lines) != 1 {
			t.Fatalf("%q: %d lines, want 1", tc.mode, len(lines))
		}
		l := lines[0]
		if l.Server != "files" || l.Tool != "read" || l.Client != "claude" || l.Session != "s1" || l.Outcome != OutcomeIsError ||
			l.ArgsBytes != len(`{"path":"/secret","n":1}`) || len(l.ArgsSHA256) != 64 || l.DurationMS != 1.5 || l.ResultBytes != len(call.Result) {
			t.Errorf("%q: line %+v", tc.mode, l)
		}
		if strings.Join(l.ArgKeys, ",") != strings.Join(tc.keys, ",") {
			t.Errorf("%q: keys %v, want %v", tc.mode, l.ArgKeys, tc.keys)
		}
		raw, _ := os.ReadFile(path)
		if got := strings.Contains(string(raw), "/secret"); got != tc.wantArgs {
			t.Errorf("%q: value in the trail = %v, want %v: %s", tc.mode, got, tc.wantArgs, raw)
		}
	}
}

func TestOutcomesAndKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	now := time.Now()
	record(t, Options{Path: path},
		Call{Start: now, Server: "a", Method: "resources/read", Params: json.RawMessage(`{"uri":"file:///x"}`), Result: json.RawMessage(`{}`)},
		Call{Start: now, Server: "a", Method: "prompts/get", Params: json.RawMessage(`{"name":"p"}`), Err: errors.New("boom"), ErrorCode: -32602},
		Call{Start: now, Server: "a", Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`), Outcome: "withheld"})
	l := readTrail(t, path)
	if len(l) != 3 || l[0].URI != "file:///x" || l[0].Outcome != OutcomeOK || l[1].Prompt != "p" || l[1].Outcome != OutcomeError ||
		l[1].ErrorCode != -32602 || l[2].Outcome != "withheld" || l[2].ArgsSHA256 != "" {
		t.Errorf("lines %+v", l)
	}
}

func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var calls []Call
	for range 50 {
		calls = append(calls, Call{Start: time.Now(), Server: "s", Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`)})
	}
	record(t, Options{Path: path, MaxBytes: 400}, calls...)
	total := 0
	for _, p := range []string{path, path + ".1", path + ".2"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 400 {
			t.Errorf("%s is %d bytes, past maxBytes 400", p, st.Size())
		}
		total += len(readTrail(t, p))
	}
	if _, err := os.Stat(path + ".3"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fourth file: %v", err)
	}
	if total == 0 || total >= 50 {
		t.Errorf("%d lines kept of 50, want the newest ones only", total)
	}
}

func TestUnwritableDropsWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	block := filepath.Join(dir, "file")
	if err := os.WriteFile(block, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The trail's directory is a file: every write fails.
	r, err := New(&Options{Path: filepath.Join(block, "mcpx", "audit.jsonl"), Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 10000 {
		r.Record(Call{Start: time.Now(), Server: "s", Method: "tools/call"})
	}
	r.Close()
	r.Record(Call{}) // after Close: nothing, no panic
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	r.Record(Call{})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Path: "x", Arguments: "all"}, {Path: "x", MaxBytes: -1}} {
		if _, err := New(&o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestLargeResult: a large result's line has its size and outcome, and
// Record does not hold the result for the writer.
func TestLargeResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 2*keptResult) + `"}]`
	call := func(result string) Call {
		return Call{Start: time.Now(), Server: "a", Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`), Result: json.RawMessage(result)}
	}
	record(t, Options{Path: path}, call(big+`,"isError":true}`), call(big+`}`))
	l := readTrail(t, path)
	if len(l) != 2 || l[0].Outcome != OutcomeIsError || l[0].ResultBytes != len(big)+16 || l[1].Outcome != OutcomeOK || l[1].ResultBytes != len(big)+1 {
		t.Errorf("lines %+v, want the sizes %d and %d, isError then ok", l, len(big)+16, len(big)+1)
	}

	r, err := New(&Options{Path: path, Interval: time.Hour}) // not written yet: the queue shows what it holds
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Record(call(big + `}`))
	r.mu.Lock()
	held := r.pending[0].Result
	r.mu.Unlock()
	if held != nil {
		t.Errorf("the queue holds the %d-byte result", len(held))
	}
}

// TestWritesABatchAfterInterval: the calls recorded within Interval of
// the first are written together once it has passed, without Close, and
// the next call arms the timer again.
func TestWritesABatchAfterInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		r, err := New(&Options{Path: path, Interval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		call := Call{Start: time.Now(), Server: "s", Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`)}
		r.Record(call)
		time.Sleep(50 * time.Millisecond)
		r.Record(call)
		synctest.Wait()
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the trail was written before Interval passed: %v", err)
		}
		time.Sleep(60 * time.Millisecond)
		synctest.Wait()
		if got := len(readTrail(t, path)); got != 2 {
			t.Fatalf("%d lines after Interval, want both calls", got)
		}
		r.Record(call)
		time.Sleep(110 * time.Millisecond)
		synctest.Wait()
		if got := len(readTrail(t, path)); got != 3 {
			t.Fatalf("%d lines after the second batch, want 3", got)
		}
	})
}

// TestIdleCostsNothing: a Recorder that records nothing starts no
// goroutine and holds no queue (the queue was once a channel of 4096
// calls, 800 KB, made at every start).
func TestIdleCostsNothing(t *testing.T) {
	// TotalAlloc is the process's: what another goroutine of the test
	// binary allocates meanwhile counts too, so the least of a few tries
	// is New's.
	least := uint64(math.MaxUint64)
	for range 5 {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		before := runtime.NumGoroutine()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		r, err := New(&Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines after New, %d before", n, before)
		}
		least = min(least, m1.TotalAlloc-m0.TotalAlloc)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a trail with no call was created: %v", err)
		}
	}
	if least > 4<<10 {
		t.Errorf("New allocated %d bytes, want a few hundred", least)
	}
}

// TestCloseWritesWhatIsQueued: Close waits for the lines recorded before
// it, however many, and a Record after it does nothing.
func TestCloseWritesWhatIsQueued(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	r, err := New(&Options{Path: path, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		r.Record(Call{Start: time.Now(), Server: "s", Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`)})
	}
	r.Close()
	r.Record(Call{Start: time.Now(), Server: "s", Method: "tools/call"})
	r.Close()
	if got := len(readTrail(t, path)); got != 1000 {
		t.Fatalf("%d lines, want 1000", got)
	}
}

// TestClientNameBounded: a client name of a megabyte (a client chooses
// it) is cut in its line, at a character, and marked.
func TestClientNameBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	long := strings.Repeat("é", 1<<19)
	record(t, Options{Path: path}, Call{Start: time.Now(), Client: long, Server: "a", Method: "tools/call", Params: json.RawMessage(`{"name":"t"}`)})
	l := readTrail(t, path)
	if len(l) != 1 || len(l[0].Client) > maxClient || !strings.HasSuffix(l[0].Client, "…") || !strings.HasPrefix(long, strings.TrimSuffix(l[0].Client, "…")) {
		t.Errorf("client name of %d bytes kept as %d bytes %q…", len(long), len(l[0].Client), l[0].Client[:min(20, len(l[0].Client))])
	}
}
