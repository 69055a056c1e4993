package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// resultFill is the big tool's fill for these tests: 16-byte lines, so
// that a cut at a line boundary is visible.
const resultFill = "0123456789abcde\n"

// bigText is what the fixture's big tool returns for n bytes of fill.
func bigText(n int, fill string) []byte {
	return bytes.Repeat([]byte(fill), n/len(fill)+1)[:n]
}

type toolText struct {
	IsError bool
	Content []struct{ Type, Text string }
}

// resultURI finds a kept result's URI: 128 bits in hex, after the name of
// the replica that keeps it and "~" when it has one (MCPX_REPLICA).
var resultURI = regexp.MustCompile(`mcpx://results/(?:[A-Za-z0-9_:%-]+~)?[0-9a-f]{32}`)

// readKept reads a kept result back through resources/read in slices of
// page bytes, as a client following the note would.
func readKept(t *testing.T, c *rawClient, uri string, page int) []byte {
	t.Helper()
	return readParts(t, uri, page, func(u string) (string, string, int) {
		res, e := c.request("resources/read", map[string]any{"uri": u})
		if e != nil {
			t.Fatalf("resources/read %s: %s", u, e.Message)
		}
		var r struct {
			Contents []struct{ Text, Blob string }
			Meta     struct {
				Total int `json:"mcpx/total"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(res, &r); err != nil || len(r.Contents) != 1 {
			t.Fatalf("resources/read %s: %s (%v)", u, truncateForLog(res), err)
		}
		return r.Contents[0].Text, r.Contents[0].Blob, r.Meta.Total
	})
}

// readKeptByProxy reads a kept result back as readKept does, through the
// proxy tool's call of type resource: each answer the slice, then, while
// more remains, a note on reading on.
func readKeptByProxy(t *testing.T, c *rawClient, uri string, page int) []byte {
	t.Helper()
	return readParts(t, uri, page, func(u string) (string, string, int) {
		args, _ := json.Marshal(map[string]any{"action": "call", "type": "resource", "path": u})
		r := c.proxy(t, string(args))
		if r.IsError || len(r.Content) < 1 || len(r.Content) > 2 ||
			len(r.Content) == 2 && !strings.Contains(r.Content[1].Text, "Read on with the proxy tool: {") {
			t.Fatalf("proxy read of %s: error %v, %d items", u, r.IsError, len(r.Content))
		}
		total, _ := r.Meta["mcpx/total"].(float64)
		return r.Content[0].Resource.Text, r.Content[0].Resource.Blob, int(total)
	})
}

// readParts reads uri from offset 0 in slices of page bytes with read,
// which returns a slice's text or base64 blob and the part's total size,
// and joins the bytes.
func readParts(t *testing.T, uri string, page int, read func(uri string) (text, blob string, total int)) []byte {
	t.Helper()
	var got []byte
	for {
		text, blob, total := read(fmt.Sprintf("%s?offset=%d&length=%d", uri, len(got), page))
		slice := []byte(text)
		if blob != "" {
			var err error
			if slice, err = base64.StdEncoding.DecodeString(blob); err != nil {
				t.Fatalf("%s at %d: blob is not base64: %v", uri, len(got), err)
			}
		}
		got = append(got, slice...)
		if len(got) >= total || len(slice) == 0 {
			return got
		}
	}
}

// checkCut checks a result cut under limit from want: the text a prefix
// of want ending at a line boundary, within the limit, and a last item
// giving the URI of the whole. It returns the URI.
func checkCut(t *testing.T, res json.RawMessage, want []byte, limit int) string {
	t.Helper()
	var r toolText
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 2 {
		t.Fatalf("cut result: %s (%v), want the cut text and a note", truncateForLog(res), err)
	}
	text, note := r.Content[0].Text, r.Content[1].Text
	if len(text) == 0 || len(text) > limit || !strings.HasSuffix(text, "\n") || !bytes.HasPrefix(want, []byte(text)) {
		t.Fatalf("cut text: %d bytes, want a prefix of the original under %d bytes ending a line", len(text), limit)
	}
	cut := len(want) - len(text)
	if !strings.Contains(note, fmt.Sprintf("%d more bytes (%d lines)", cut, cut/len(resultFill))) {
		t.Errorf("note %q does not say %d bytes, %d lines were cut", note, cut, cut/len(resultFill))
	}
	uri := resultURI.FindString(note)
	if uri == "" {
		t.Fatalf("note %q gives no mcpx://results/ URI", note)
	}
	return uri
}

// TestMaxResultBytes: results of 300 kB and 30 MB under a 20 kB cap reach
// the client cut at a line with a note, directly and through the proxy
// tool, and read back through the note's URI byte for byte; the store
// stays bounded; with the cap off the result comes whole.
func TestMaxResultBytes(t *testing.T) {
	t.Parallel()
	const limit = 20 << 10
	whole := fx()
	whole["maxResultBytes"] = "off"
	cfg := writeConfig(t, map[string]any{"maxResultBytes": "20k", "expose": "both",
		"servers": map[string]any{"big": fx(), "whole": whole}})
	c := startServe(t, cfg)
	c.initialize()
	call := func(tool string, n int) json.RawMessage {
		t.Helper()
		res, e := c.request("tools/call", map[string]any{"name": tool, "arguments": map[string]any{"bytes": n, "fill": resultFill}})
		if e != nil {
			t.Fatalf("%s of %d bytes: %s", tool, n, e.Message)
		}
		return res
	}

	small := bigText(300_000, resultFill)
	res := call("big_big", len(small))
	uri := checkCut(t, res, small, limit)
	if !strings.Contains(string(res), "read it with resources/read, in slices with offset and length in bytes, e.g. "+uri+"?offset=") {
		t.Errorf("the note on a direct call does not name resources/read: %s", truncateForLog(res))
	}
	if got := readKept(t, c, uri, limit); !bytes.Equal(got, small) {
		t.Errorf("300 kB read back: %d bytes, differs from the original", len(got))
	}

	res, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": map[string]any{
		"action": "call", "type": "tool", "path": "big_big", "args": map[string]any{"bytes": len(small), "fill": resultFill}}})
	if e != nil {
		t.Fatalf("proxy call: %s", e.Message)
	}
	uri = checkCut(t, res, small, limit)
	if !strings.Contains(string(res), `read it with the proxy tool, in slices with offset and length in bytes, each answer giving the next call, from {\"action\":\"call\",\"type\":\"resource\",\"path\":\"`+uri+`?offset=`) {
		t.Errorf("the note on a call through proxy does not give the proxy call that reads on: %s", truncateForLog(res))
	}
	if got := readKeptByProxy(t, c, uri, 64<<10); !bytes.Equal(got, small) {
		t.Errorf("300 kB through the proxy read back: %d bytes, differs from the original", len(got))
	}

	large := bigText(30_000_000, resultFill)
	// What holding one 30 MB result once costs a process of this build
	// (the race detector, for one, triples it): the unit of the bounds.
	hold := holdCost(t, len(large))
	base := rssBase(t, c.cmd.Process.Pid)
	for range 3 {
		if err := json.Unmarshal(call("whole_big", len(large)), new(toolText)); err != nil {
			t.Fatalf("30 MB whole: %v", err)
		}
	}
	passed := rssPeak(t, c.cmd.Process.Pid) - base
	var uris []string
	for range 3 {
		uris = append(uris, checkCut(t, call("big_big", len(large)), large, limit))
	}
	capped := rssPeak(t, c.cmd.Process.Pid) - base
	if got := readKept(t, c, uris[2], 1<<20); !bytes.Equal(got, large) {
		t.Errorf("30 MB read back: %d bytes, differs from the original", len(got))
	}
	// Passing three 30 MB results whole costs about one held at a time
	// (the line read, written from where it is). Cutting one holds its
	// line and its decoded text, which the store keeps: three cuts cost
	// at most those two and the store's 64 MiB in memory (in this
	// build's bytes). Before, the peak was five to nine times a result,
	// and past twice that of passing them whole on a loaded machine.
	store := int64(float64(hold) / float64(len(large)) * (64 << 20))
	t.Logf("mcpx peak RSS grew %s passing three 30 MB results whole and %s after cutting three more; holding one costs %s",
		mib(passed), mib(capped), mib(hold))
	if passed > 2*hold {
		t.Errorf("passing three 30 MB results whole grew mcpx's peak RSS by %s, over twice the %s of holding one", mib(passed), mib(hold))
	}
	if capped > 2*hold+store+hold/4 {
		t.Errorf("cutting three 30 MB results grew mcpx's peak RSS by %s, over twice the %s of holding one, the store's %s and a quarter",
			mib(capped), mib(hold), mib(store))
	}
	// Three 30 MB results pass the store's 64 MiB in memory: the oldest
	// moved to disk, and still reads back whole.
	if got := readKept(t, c, uris[0], 1<<20); !bytes.Equal(got, large) {
		t.Errorf("the oldest 30 MB result, past the memory bound, read back: %d bytes, differs from the original", len(got))
	}

	var r toolText
	if err := json.Unmarshal(call("whole_big", len(small)), &r); err != nil || len(r.Content) != 1 || r.Content[0].Text != string(small) {
		t.Errorf("with maxResultBytes off: %d items, want the whole text alone", len(r.Content))
	}
}

// TestCallMaxBytes: `mcpx call` prints a result over the config's
// maxResultBytes whole, and cuts it at a line within --max-bytes with a
// note saying how much was cut.
func TestCallMaxBytes(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"maxResultBytes": "20k", "servers": map[string]any{"big": fx()}})
	want := bigText(300_000, resultFill)
	args := fmt.Sprintf(`{"bytes":%d,"fill":%q}`, len(want), resultFill)
	out, stderr, code := runCLI(t, "", "call", "--config", cfg, "big_big", args)
	if code != 0 || out != string(want)+"\n" {
		t.Fatalf("call without --max-bytes: exit %d, %d bytes out, want the whole %d; stderr %s", code, len(out), len(want), stderr)
	}
	out, stderr, code = runCLI(t, "", "call", "--config", cfg, "--max-bytes", "2048", "big_big", args)
	text, note, ok := strings.Cut(out, "\n[mcpx: ")
	if code != 0 || !ok {
		t.Fatalf("call --max-bytes 2048: exit %d, no note in %q; stderr %s", code, truncateForLog([]byte(out)), stderr)
	}
	if len(text) > 2048 || !strings.HasSuffix(text, "\n") || !strings.HasPrefix(string(want), text) {
		t.Errorf("call --max-bytes 2048: %d bytes of text, want a prefix of the result within 2048 ending a line", len(text))
	}
	cut := len(want) - len(text)
	if !strings.Contains(note, fmt.Sprintf("%d more bytes (%d lines)", cut, cut/len(resultFill))) {
		t.Errorf("note %q does not say %d bytes were cut", note, cut)
	}
}

// TestMaxResultBytesMedia: images (up to 30 MB), audio and structuredContent over a
// 20 kB cap are replaced by a note naming a URI each; read back through
// resources/read and through the proxy tool, each equals the original
// byte for byte (a blob for images and audio, the JSON for
// structuredContent). A result larger than the store's memory bound is
// kept on disk, in a private directory that is gone when mcpx exits.
func TestMaxResultBytesMedia(t *testing.T) {
	t.Parallel()
	const limit = 20 << 10
	cfg := writeConfig(t, map[string]any{"maxResultBytes": "20k", "expose": "both",
		"results": map[string]any{"maxMemory": "1MiB"}, "servers": map[string]any{"big": fx()}})
	tmp := t.TempDir()
	c := startServeEnv(t, cfg, []string{"TMPDIR=" + tmp})
	c.initialize()
	call := func(as string, n int) toolText {
		t.Helper()
		res, e := c.request("tools/call", map[string]any{"name": "big_big", "arguments": map[string]any{"bytes": n, "fill": resultFill, "as": as}})
		if e != nil {
			t.Fatalf("%s of %d bytes: %s", as, n, e.Message)
		}
		var r toolText
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		if len(res) > limit {
			t.Errorf("%s of %d bytes: the capped result is %d bytes, over the 20 kB cap", as, n, len(res))
		}
		return r
	}
	for _, tc := range []struct {
		as   string
		size int
		what string
	}{
		{"image", 300_000, "an image (image/png, 300000 bytes) is not shown"},
		{"audio", 300_000, "an audio (audio/wav, 300000 bytes) is not shown"},
		{"image", 3_000_000, "an image (image/png, 3000000 bytes) is not shown"},
		{"image", 30_000_000, "an image (image/png, 30000000 bytes) is not shown"},
	} {
		want := bigText(tc.size, resultFill)
		r := call(tc.as, tc.size)
		if len(r.Content) != 1 || r.Content[0].Type != "text" || !strings.Contains(r.Content[0].Text, tc.what) {
			t.Fatalf("%s of %d bytes: %+v, want one note saying %q", tc.as, tc.size, r.Content, tc.what)
		}
		uri := resultURI.FindString(r.Content[0].Text)
		if uri == "" {
			t.Fatalf("note %q gives no URI", r.Content[0].Text)
		}
		page := max(tc.size/8, 64<<10)
		if got := readKept(t, c, uri, page); !bytes.Equal(got, want) {
			t.Errorf("%s of %d bytes read back: %d bytes, differ from the original", tc.as, tc.size, len(got))
		}
		if tc.size > 3_000_000 {
			continue // the proxy's path is the same for any size; spare the race detector
		}
		if got := readKeptByProxy(t, c, uri, page); !bytes.Equal(got, want) {
			t.Errorf("%s of %d bytes read back through proxy: %d bytes, differ from the original", tc.as, tc.size, len(got))
		}
	}

	want := bigText(300_000, resultFill)
	res, e := c.request("tools/call", map[string]any{"name": "big_big", "arguments": map[string]any{"bytes": len(want), "fill": resultFill, "as": "structured"}})
	if e != nil {
		t.Fatal(e.Message)
	}
	wantJSON, _ := json.Marshal(map[string]string{"fill": string(want)})
	var r struct {
		toolText
		StructuredContent json.RawMessage
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if r.StructuredContent != nil || len(r.Content) != 2 || r.Content[0].Text != "the fill is in structuredContent.fill" ||
		!strings.Contains(r.Content[1].Text, fmt.Sprintf("structuredContent (%d bytes of JSON) is not shown", len(wantJSON))) {
		t.Fatalf("structured: %s, want the text kept and a note in place of structuredContent", truncateForLog(res))
	}
	uri := resultURI.FindString(r.Content[1].Text)
	if got := readKept(t, c, uri, limit); !bytes.Equal(got, wantJSON) {
		t.Errorf("structuredContent read back: %d bytes, differ from the %d the server sent", len(got), len(wantJSON))
	}
	if got := readKeptByProxy(t, c, uri, limit); !bytes.Equal(got, wantJSON) {
		t.Errorf("structuredContent read back through proxy: %d bytes, differ from the %d the server sent", len(got), len(wantJSON))
	}

	dirs, _ := filepath.Glob(filepath.Join(tmp, "mcpx-results-*"))
	if len(dirs) != 1 {
		t.Fatalf("%v: want one private directory for results past the 1 MiB in memory", dirs)
	}
	if fi, err := os.Stat(dirs[0]); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("results directory: %v, %v; want mode 0700", fi, err)
	}
	c.stop()
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("results directory %s still there after mcpx exited: %v", dirs[0], err)
	}
}

// TestKeptResultIsTheSessions: over serve --http, a result kept for one
// session reads back in that session and is "not found" in another, even
// with its URI, directly and through the proxy tool.
func TestKeptResultIsTheSessions(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, map[string]any{"maxResultBytes": "20k", "expose": "both", "servers": map[string]any{"big": fx()}})
	srv := startHTTP(t, cfg, nil)
	hdr := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	open := func() map[string]string {
		code, h, body := do(t, "POST", srv.url+"/mcp", hdr, initBody)
		if code != 200 || h.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %q; stderr:\n%s", code, body, srv.stderr.String())
		}
		sh := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
		for k, v := range hdr {
			sh[k] = v
		}
		do(t, "POST", srv.url+"/mcp", sh, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return sh
	}
	a, b := open(), open()
	_, _, body := do(t, "POST", srv.url+"/mcp", a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big_big","arguments":{"bytes":300000}}}`)
	uri := resultURI.FindString(body)
	if uri == "" {
		t.Fatalf("no URI in the cut result: %s", truncateForLog([]byte(body)))
	}
	read := func(sh map[string]string) string {
		_, _, body := do(t, "POST", srv.url+"/mcp", sh, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":%q}}`, uri+"?length=10"))
		return body
	}
	viaProxy := func(sh map[string]string) string {
		_, _, body := do(t, "POST", srv.url+"/mcp", sh, fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"proxy","arguments":{"action":"call","type":"resource","path":%q}}}`, uri+"?length=10"))
		return body
	}
	if got := read(a); !strings.Contains(got, `"text":"0123456789"`) {
		t.Errorf("the session that made it reads %s, want its first 10 bytes", got)
	}
	if got := viaProxy(a); !strings.Contains(got, `"text":"0123456789"`) {
		t.Errorf("the session that made it reads through proxy %s, want its first 10 bytes", got)
	}
	if got := read(b); strings.Contains(got, "0123456789") || !strings.Contains(got, "not found") {
		t.Errorf("another session reads %s, want not found", got)
	}
	if got := viaProxy(b); strings.Contains(got, "0123456789") || !strings.Contains(got, "not found") {
		t.Errorf("another session reads through proxy %s, want not found", got)
	}
}
