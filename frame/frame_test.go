package frame

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestReaderLimits(t *testing.T) {
	big := strings.Repeat("x", 300)
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"id":99,"s":"` + big + `"},"id":"last, } id"}`,
		`{"jsonrpc":"2.0","id": {"a":[1,2]} ,"result":"` + big + `"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`,
		`data: {"jsonrpc":"2.0","id":7,"result":"` + big + `"}`,
		`{"id":"\"quoted\\\\","x":"` + big + `"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`, // no newline at the end
	}
	in := strings.Join(lines, "\n")
	r := NewReader(strings.NewReader(in), 100)
	type want struct {
		line   string
		size   int64
		id     string
		method bool
		prefix string
	}
	for i, w := range []want{
		{line: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{id: `"last, } id"`, method: true},
		{id: `{"a":[1,2]}`},
		{method: true},
		{id: `7`, prefix: "data: "},
		{id: `"\"quoted\\\\"`},
		{line: `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{line: `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
	} {
		line, err := r.Next()
		var tl *TooLongError
		switch {
		case w.line != "":
			if err != nil || string(line) != w.line {
				t.Errorf("line %d: %q, %v; want %q", i, line, err, w.line)
			}
		case !errors.As(err, &tl):
			t.Errorf("line %d: %q, %v; want a TooLongError", i, line, err)
		default:
			w.size = int64(len(lines[i]))
			if tl.Size != w.size || string(tl.ID) != w.id || tl.Method != w.method || string(tl.Prefix) != w.prefix || tl.Limit != 100 {
				t.Errorf("line %d: %+v (id %s), want %+v", i, tl, tl.ID, w)
			}
			if !strings.Contains(tl.Error(), "over the limit of 100 bytes") {
				t.Errorf("line %d: error %q", i, tl)
			}
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last line: %v, want EOF", err)
	}
}

// pattern is an endless reader of one long line.
type pattern struct{ left int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(b))
	if n > p.left {
		n = p.left
	}
	for i := range b[:n] {
		b[i] = 'x'
	}
	if p.left == n {
		b[n-1] = '\n'
	}
	p.left -= n
	return int(n), nil
}

// TestReaderMemory: a 128 MiB line under a 1 MiB limit costs a small
// multiple of the limit, not the line.
func TestReaderMemory(t *testing.T) {
	const size, limit = 128 << 20, 1 << 20
	src := io.MultiReader(strings.NewReader(`{"id":5,"result":"`), &pattern{left: size}, strings.NewReader(`{"id":6}`+"\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := NewReader(src, limit)
	_, err := r.Next()
	var tl *TooLongError
	if !errors.As(err, &tl) || string(tl.ID) != "5" || tl.Size < size {
		t.Fatalf("got %v, want a TooLongError for id 5", err)
	}
	line, err := r.Next()
	if err != nil || string(line) != `{"id":6}` {
		t.Fatalf("the next line: %q, %v", line, err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 8*limit {
		t.Errorf("reading a %d MiB line allocated %d MiB, want at most 8x the %d MiB limit", size>>20, alloc>>20, limit>>20)
	}
	t.Logf("a %d MiB line under a %d MiB limit allocated %.2f MiB", size>>20, limit>>20, float64(alloc)/(1<<20))
}

func TestLimitLines(t *testing.T) {
	in := "{\"id\":1,\"result\":{}}\n{\"id\":2,\"result\":\"" + strings.Repeat("y", 200) + "\"}\n{\"method\":\"n\",\"params\":\"" + strings.Repeat("z", 200) + "\"}\n{\"id\":3,\"result\":{}}\n"
	r := LimitLines(strings.NewReader(in), 100, func(e *TooLongError) []byte {
		if e.ID == nil {
			return nil
		}
		return []byte(`{"id":` + string(e.ID) + `,"error":{"code":-32600,"message":"too long"}}` + "\n")
	})
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"id\":1,\"result\":{}}\n{\"id\":2,\"error\":{\"code\":-32600,\"message\":\"too long\"}}\n{\"id\":3,\"result\":{}}\n"
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{300: "300 bytes", 64 << 20: "64 MiB", 1536: "1.5 KiB", 3 << 30: "3 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestReaderLongLines: a line over ShortLine is returned whole, in memory
// of its own that later reads leave alone (Owned), whether the Reader
// has a limit (gathered in a mapping where the system has one) or none
// (gathered in blocks); a short line is not the caller's.
func TestReaderLongLines(t *testing.T) {
	sizes := []int{ShortLine - 1, ShortLine, ShortLine + 1, 3*maxBlock + 17, 100}
	var in bytes.Buffer
	var want [][]byte
	for i, n := range sizes {
		line := bytes.Repeat([]byte{'a' + byte(i)}, n)
		want = append(want, line)
		in.Write(line)
		in.WriteByte('\n')
	}
	for _, limit := range []int64{0, 8 << 20} {
		r := NewReader(bytes.NewReader(in.Bytes()), limit)
		var kept [][]byte
		for i, w := range want {
			line, err := r.Next()
			if err != nil || !bytes.Equal(line, w) {
				t.Fatalf("limit %d, line %d: %d bytes, %v; want %d bytes", limit, i, len(line), err, len(w))
			}
			if long := len(w)+1 > ShortLine; r.Owned() != long { // with its newline
				t.Errorf("limit %d, line %d of %d bytes: Owned %v, want %v", limit, i, len(w), r.Owned(), long)
			}
			if r.Owned() {
				kept = append(kept, line)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("limit %d: after the last line %v, want EOF", limit, err)
		}
		for _, line := range kept {
			if line[0] != line[len(line)-1] || bytes.Count(line, line[:1]) != len(line) {
				t.Errorf("limit %d: a kept line of %d bytes changed after later reads", limit, len(line))
			}
		}
	}
}

// TestReaderLongOverLimit: a long line over the limit, with a long line
// and a short one after it, is reported with its id, and the lines after
// it read whole.
func TestReaderLongOverLimit(t *testing.T) {
	const limit = 1 << 20
	after := bytes.Repeat([]byte("y"), 2*ShortLine)
	in := `{"id":9,"result":"` + strings.Repeat("x", 3*limit) + `"}` + "\n" + string(after) + "\n" + `{"id":10}` + "\n"
	r := NewReader(strings.NewReader(in), limit)
	_, err := r.Next()
	var tl *TooLongError
	if !errors.As(err, &tl) || string(tl.ID) != "9" || tl.Size != int64(3*limit+len(`{"id":9,"result":""}`)) {
		t.Fatalf("got %v, want a TooLongError for id 9", err)
	}
	if line, err := r.Next(); err != nil || !bytes.Equal(line, after) || !r.Owned() {
		t.Fatalf("the long line after it: %d bytes, %v, owned %v", len(line), err, r.Owned())
	}
	if line, err := r.Next(); err != nil || string(line) != `{"id":10}` {
		t.Fatalf("the short line after it: %q, %v", line, err)
	}
}

// TestReaderLongMemory: reading a 32 MiB line allocates it once, exactly:
// with a limit its bytes gather outside the Go heap (where the system
// has anonymous mappings) and are copied out once; without one they
// gather in blocks, then the copy, about twice the line. Growing one
// buffer by appending allocated about five times the line, and the
// garbage of the smaller buffers stayed until the next collection.
func TestReaderLongMemory(t *testing.T) {
	const size = 32 << 20
	for _, c := range []struct {
		limit int64
		most  float64 // bytes allocated per byte of the line
	}{{64 << 20, 1.01}, {0, 2.05}} {
		if m := mapLine(1); m == nil {
			c.most = 2.05 // no mapping on this system: blocks
		} else {
			unmapLine(m)
		}
		src := io.MultiReader(strings.NewReader(`{"id":5,"result":"`), &pattern{left: size})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		line, err := NewReader(src, c.limit).Next()
		runtime.ReadMemStats(&after)
		if err != nil || len(line) != size+len(`{"id":5,"result":"`)-1 {
			t.Fatalf("limit %d: %d bytes, %v", c.limit, len(line), err)
		}
		per := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(line))
		t.Logf("limit %d: a %d MiB line allocated %.3f bytes per byte", c.limit, size>>20, per)
		if per > c.most {
			t.Errorf("limit %d: a %d MiB line allocated %.3f bytes per byte, want at most %.2f", c.limit, size>>20, per, c.most)
		}
	}
}

// TestLimitLinesLong: LimitLines passes long lines on whole, each with
// its newline, among short ones.
func TestLimitLinesLong(t *testing.T) {
	long := `{"id":2,"result":"` + strings.Repeat("w", 3*ShortLine) + `"}`
	in := "{\"id\":1}\n" + long + "\n" + long + "\n{\"id\":3}"
	got, err := io.ReadAll(LimitLines(strings.NewReader(in), 1<<20, func(*TooLongError) []byte { return nil }))
	if err != nil || string(got) != in+"\n" {
		t.Errorf("got %d bytes (%v), want the %d bytes passed on, each line ending in a newline", len(got), err, len(in)+1)
	}
}

// readSizes is a source of chunks, one per Read, that records how much
// each Read asked for.
type readSizes struct {
	chunks []string
	asked  []int
}

func (r *readSizes) Read(p []byte) (int, error) {
	r.asked = append(r.asked, len(p))
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// TestReaderWaitsWithoutBuffer: a Reader that has read all that was sent
// waits for the next line with a read of one byte (it holds no buffer
// meanwhile), and lines read across such waits, several in one read, a
// long one and a last one without a newline come out whole.
func TestReaderWaitsWithoutBuffer(t *testing.T) {
	long := strings.Repeat("y", ShortLine+10)
	src := &readSizes{chunks: []string{"one\n", "tw", "o\nthree\nfour\n", long + "\n", "last"}}
	r := NewReader(src, 1<<20)
	var got []string
	var waits []int // the size of the read each line began with
	for {
		before := len(src.asked)
		line, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
		if len(src.asked) > before {
			waits = append(waits, src.asked[before])
		}
	}
	want := []string{"one", "two", "three", "four", long, "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines %q, want %q", got, want)
	}
	for i, n := range waits {
		if n != 1 {
			t.Errorf("wait %d read %d bytes at once: a buffer held between lines", i, n)
		}
	}
	if len(waits) < 4 {
		t.Errorf("%d waits for a first byte, want one per read of the source that began a line", len(waits))
	}
}
