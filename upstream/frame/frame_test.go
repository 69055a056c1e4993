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
