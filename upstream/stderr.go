package upstream

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// stderrTailLines is how many of a child's last stderr lines an error
// quotes: enough that what a child said at start is still there after it
// logged the requests of a connect attempt (server/discover, its cancel,
// initialize, its cancel).
const stderrTailLines = 5

// maxLogLine bounds one logged stderr line; a child that writes megabytes
// without a newline must not become one giant log entry.
const maxLogLine = 4096

// logStderr logs each line a child writes on stderr under the server's
// name and keeps the last few for error messages. It returns at EOF.
//
// Most servers write a few lines at start and then nothing: the reader
// waits for the next byte with no buffer, and makes one only while the
// child writes (1,000 idle servers held 4 MB of them).
func (c *Client) logStderr(r io.Reader) {
	var first [1]byte
	src := &firstThen{r: r}
	for {
		n, err := r.Read(first[:])
		if n == 0 {
			if err != nil {
				return
			}
			continue
		}
		src.first, src.has = first[0], true
		if c.logLines(bufio.NewReaderSize(src, maxLogLine)) {
			return
		}
	}
}

// firstThen reads a byte read before, then r.
type firstThen struct {
	r     io.Reader
	first byte
	has   bool
}

func (f *firstThen) Read(p []byte) (int, error) {
	if f.has && len(p) > 0 {
		p[0], f.has = f.first, false
		return 1, nil
	}
	return f.r.Read(p)
}

// logLines logs the lines br has, and those that follow until a line ends
// with nothing more read; true at EOF or a read error.
func (c *Client) logLines(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			text := strings.TrimRight(string(line), "\r\n")
			if err == bufio.ErrBufferFull {
				text += "…"
				// Skip the rest of this overlong line.
				for err == bufio.ErrBufferFull {
					_, err = br.ReadSlice('\n')
				}
			}
			if text != "" {
				text = c.opts.Redact(text)
				c.log.Log(context.Background(), c.stderrLevel(), text, "stream", "stderr")
				c.rememberStderr(text)
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return true
		}
		if br.Buffered() == 0 {
			return false // a whole line, and nothing after it yet
		}
	}
}

// stderrLevel is the level of the child's stderr lines: info, or debug
// while it retries a server whose attempt before could not connect:
// that failure already quoted what a broken server prints at every
// start. After a lost connection, the restart's lines are info.
func (c *Client) stderrLevel() slog.Level {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retrying {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

type stderrTail struct {
	mu    sync.Mutex
	lines []string
}

func (c *Client) rememberStderr(line string) {
	c.tail.mu.Lock()
	defer c.tail.mu.Unlock()
	c.tail.lines = append(c.tail.lines, line)
	if len(c.tail.lines) > stderrTailLines {
		c.tail.lines = c.tail.lines[len(c.tail.lines)-stderrTailLines:]
	}
}

// stderrQuote starts the stderr lines an error quotes.
const stderrQuote = "; stderr: "

// stderrTail quotes the last stderr lines, for appending to an error.
func (c *Client) stderrTail() string {
	c.tail.mu.Lock()
	defer c.tail.mu.Unlock()
	if len(c.tail.lines) == 0 {
		return ""
	}
	return stderrQuote + strings.Join(c.tail.lines, " | ")
}

// lastStderr is the last line the child wrote on stderr, or "".
func (c *Client) lastStderr() string {
	c.tail.mu.Lock()
	defer c.tail.mu.Unlock()
	if len(c.tail.lines) == 0 {
		return ""
	}
	return c.tail.lines[len(c.tail.lines)-1]
}

// lineWatch passes a child's stdout through untouched and remembers the
// last line that could not be JSON-RPC. mcp-go skips such lines silently;
// a server that prints a banner on stdout then just looks hung, and this is
// how mcpx says what actually happened.
type lineWatch struct {
	r       io.Reader
	mu      sync.Mutex
	atStart bool // the next byte starts a line
	junk    []byte
	inJunk  bool
}

func newLineWatch(r io.Reader) *lineWatch { return &lineWatch{r: r, atStart: true} }

func (w *lineWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.scan(p[:n])
	}
	return n, err
}

func (w *lineWatch) scan(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(b) > 0 {
		if w.atStart {
			c := b[0]
			if c == ' ' || c == '\t' || c == '\r' {
				b = b[1:]
				continue
			}
			w.atStart = false
			w.inJunk = c != '{' && c != '\n'
			if w.inJunk {
				w.junk = w.junk[:0]
			}
		}
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		if w.inJunk && len(w.junk) < 200 {
			w.junk = append(w.junk, seg[:min(len(seg), 200-len(w.junk))]...)
		}
		if i < 0 {
			return
		}
		b = b[i+1:]
		w.atStart = true
	}
}

func (w *lineWatch) lastJunk() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.junk)
}
