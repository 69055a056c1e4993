package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
)

var dialects = []browsertest.Dialect{browsertest.V15, browsertest.V19}

// noisyPNG is a w x h PNG of random pixels: as big as a busy page's
// screenshot.
func noisyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rand.New(rand.NewSource(3)).Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestScreenshotFitsTheClient: on both extension generations, a capture
// over 2000 px a side and over browser.maxImageBytes comes back as a JPEG
// within both, and the text part says so. (Small limits keep the images,
// and the test under -race, small; the Chromium test checks the default.)
func TestScreenshotFitsTheClient(t *testing.T) {
	big := base64.StdEncoding.EncodeToString(noisyPNG(t, 2100, 120)) // ~1 MB
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			s := newSetup(t, d, nil, browser.Options{})
			s.open(t)
			s.ext.Handle("forwardCDPCommand:Page.captureScreenshot", func(context.Context, json.RawMessage) (any, error) {
				return map[string]string{"data": big}, nil
			})
			for _, limit := range []int{30 << 10} {
				s.tools = browser.NewTools(s.c, &browser.ToolsOptions{MaxImageBytes: limit})
				r := s.call(t, "take_screenshot", `{}`)
				if r.IsError || len(r.Content) != 2 {
					t.Fatalf("screenshot: %s", r.text())
				}
				raw, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
				if err != nil {
					t.Fatal(err)
				}
				cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
				if err != nil || r.Content[0].MimeType != "image/jpeg" || len(raw) > limit || cfg.Width > 2000 || cfg.Height > 2000 {
					t.Errorf("limit %d: %s %dx%d, %d bytes, %v", limit, r.Content[0].MimeType, cfg.Width, cfg.Height, len(raw), err)
				}
				note := r.Content[1].Text
				if !strings.Contains(note, "2100x120") || !strings.Contains(note, "JPEG") || !strings.Contains(note, fmt.Sprintf("%dx%d", cfg.Width, cfg.Height)) {
					t.Errorf("limit %d: the text part does not say what was done: %q", limit, note)
				}
			}
		})
	}
}

// TestConsoleAndEvaluateAreCapped: thousands of console messages or a
// huge evaluate result come back within browser.maxSnapshotChars, with
// the total count.
func TestConsoleAndEvaluateAreCapped(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			s := newSetup(t, d, nil, browser.Options{})
			s.open(t)
			s.tools = browser.NewTools(s.c, &browser.ToolsOptions{MaxSnapshotChars: 5000})
			var msgs []map[string]any
			for i := range 3000 {
				msgs = append(msgs, map[string]any{"type": "log", "text": fmt.Sprintf("message %d", i)})
			}
			msgs = append(msgs, map[string]any{"type": "error", "text": strings.Repeat("x", 100000)})
			s.ext.Handle("getConsoleMessages", func(context.Context, json.RawMessage) (any, error) {
				return map[string]any{"messages": msgs}, nil
			})
			out := s.call(t, "console_messages", `{}`).text()
			if n := utf8.RuneCountInString(out); n > 5000 || !strings.HasPrefix(out, "3001 console messages; showing the last ") ||
				!strings.Contains(out, "message 2999\n[error] xxx") {
				t.Errorf("console (%d chars):\n%.600s", n, out)
			}

			items := make([]int, 100000)
			value, _ := json.Marshal(items)
			s.ext.Handle("forwardCDPCommand:Runtime.evaluate", func(context.Context, json.RawMessage) (any, error) {
				return map[string]any{"result": map[string]any{"type": "object", "value": json.RawMessage(value)}}, nil
			})
			out = s.call(t, "evaluate", `{"function": "() => new Array(100000).fill(0)"}`).text()
			if n := utf8.RuneCountInString(out); n > 5000 || !strings.Contains(out, "an array of 100000 items") || !strings.Contains(out, fmt.Sprintf("of its %d characters", len(value))) {
				t.Errorf("evaluate (%d chars): ...%s", n, out[max(0, len(out)-300):])
			}
			s.ext.Handle("forwardCDPCommand:Runtime.evaluate", func(context.Context, json.RawMessage) (any, error) {
				return map[string]any{"result": map[string]any{"type": "string", "value": "short"}}, nil
			})
			if out := s.call(t, "evaluate", `{"function": "() => 'short'"}`).text(); out != `"short"` {
				t.Errorf("a small result was changed: %s", out)
			}
		})
	}
}

// TestSnapshotIsOneEvaluate: the snapshot uses nothing but
// Runtime.evaluate, which both generations forward (v1.9 allows a short
// list of CDP methods), and reads its answer with v1.5's currentTab merged
// in.
func TestSnapshotIsOneEvaluate(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			s := newSetup(t, d, nil, browser.Options{})
			s.open(t)
			var mu sync.Mutex
			var methods []string
			s.ext.Handle("forwardCDPCommand", func(_ context.Context, params json.RawMessage) (any, error) {
				var p struct{ Method string }
				json.Unmarshal(params, &p)
				mu.Lock()
				methods = append(methods, p.Method)
				mu.Unlock()
				if p.Method != "Runtime.evaluate" {
					return nil, fmt.Errorf("Unsupported CDP method: %s", p.Method)
				}
				return map[string]any{"result": map[string]any{"type": "object", "value": map[string]any{
					"url": "https://example.test/", "title": "Example", "text": `- button "Go" [ref=e1]`,
					"offset": 0, "end": 1, "total": 1, "totalChars": 23,
				}}}, nil
			})
			out := s.call(t, "snapshot", `{}`).text()
			if !strings.Contains(out, `- button "Go" [ref=e1]`) || !strings.Contains(out, "Page Title: Example") {
				t.Errorf("snapshot:\n%s", out)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(methods) != 1 || methods[0] != "Runtime.evaluate" {
				t.Errorf("the snapshot sent %q, want one Runtime.evaluate", methods)
			}
		})
	}
}

// TestEveryResultFits: a tool without a cut of its own (the raw CDP
// escape hatch, here with a huge answer) and a huge error both come back
// within browser.maxSnapshotChars, saying they were cut.
func TestEveryResultFits(t *testing.T) {
	s := newSetup(t, browsertest.V19, nil, browser.Options{})
	s.open(t)
	s.tools = browser.NewTools(s.c, &browser.ToolsOptions{CDP: true, MaxSnapshotChars: 3000})
	huge := strings.Repeat("a", 100000)
	s.ext.Handle("forwardCDPCommand:Page.getLayoutMetrics", func(context.Context, json.RawMessage) (any, error) {
		return map[string]string{"blob": huge}, nil
	})
	out := s.call(t, "cdp", `{"method": "Page.getLayoutMetrics"}`).text()
	if n := utf8.RuneCountInString(out); n > 3000 || !strings.Contains(out, "(cut: the result has 100011 characters, over the limit of 3000)") {
		t.Errorf("cdp (%d chars): ...%q", n, out[max(0, len(out)-200):])
	}
	s.ext.Handle("forwardCDPCommand:Page.reload", func(context.Context, json.RawMessage) (any, error) {
		return nil, fmt.Errorf("boom %s", huge)
	})
	r := s.call(t, "cdp", `{"method": "Page.reload"}`)
	if n := utf8.RuneCountInString(r.text()); !r.IsError || n > 3000 {
		t.Errorf("a huge error: isError=%v, %d chars", r.IsError, n)
	}
}
