package browser

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/jsonrpc"
)

func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(claims)
	return "eyJhbGciOiJIUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(b) + ".c2ln"
}

func TestParseToken(t *testing.T) {
	tok := jwt(t, map[string]any{"connection_url": "wss://relay.example/mcp", "user_id": "u1", "exp": 4102444800})
	c, err := ParseToken(tok)
	if err != nil || c.ConnectionURL != "wss://relay.example/mcp" || c.UserID != "u1" {
		t.Fatalf("got %+v, %v", c, err)
	}
	for _, bad := range []string{"", "abc", "a.b", "a.!!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte("[1]")) + ".c"} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("ParseToken(%q): want an error", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
}

func TestNewClientRefusesBadTokens(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	expired := jwt(t, map[string]any{"connection_url": "ws://127.0.0.1:1/mcp", "exp": now.Add(-time.Hour).Unix()})
	for name, tc := range map[string]struct {
		opts Options
		want string
	}{
		"expired":    {Options{Token: expired}, "expired"},
		"no token":   {Options{}, "no browser relay"},
		"not a jwt":  {Options{Token: "secret-opaque-token"}, "not a JWT"},
		"no url":     {Options{Token: jwt(t, map[string]any{"user_id": "u"})}, "no browser relay URL"},
		"http url":   {Options{Token: jwt(t, map[string]any{"connection_url": "http://x/mcp"})}, "want ws:// or wss://"},
		"config url": {Options{Token: jwt(t, map[string]any{"user_id": "u"}), URL: "ftp://x"}, "want ws:// or wss://"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.opts.Now = func() time.Time { return now }
			c := NewClient(tc.opts)
			c.Start(t.Context())
			defer c.Close()
			st := c.Status()
			if !strings.Contains(st.Err, tc.want) {
				t.Errorf("status error %q, want it to mention %q", st.Err, tc.want)
			}
			if tc.opts.Token != "" && strings.Contains(st.Err, tc.opts.Token) {
				t.Errorf("the token leaked into %q", st.Err)
			}
			res := NewTools(c, nil).Call(t.Context(), "snapshot", nil)
			var r struct {
				IsError bool
				Content []struct{ Text string }
			}
			json.Unmarshal(res, &r)
			if !r.IsError || !strings.Contains(r.Content[0].Text, tc.want) {
				t.Errorf("a tool call: %s; want isError mentioning %q", res, tc.want)
			}
		})
	}
	if c := NewClient(Options{Token: expired, Now: func() time.Time { return now }}); !errors.Is(c.badCfg, ErrTokenExpired) {
		t.Errorf("an expired token is %v, want ErrTokenExpired", c.badCfg)
	}
}

func TestCloseWithoutStart(t *testing.T) {
	c := NewClient(Options{})
	done := make(chan struct{})
	go func() { c.Close(); c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close of a client never started hangs")
	}
	c.Start(t.Context()) // after Close: nothing happens
}

func TestDecodeErrorShapes(t *testing.T) {
	for raw, want := range map[string]RemoteError{
		`{"code":-32000,"message":"Not connected"}`:        {Code: -32000, Message: "Not connected"},
		`{"message":"Unknown command: click","stack":"x"}`: {Message: "Unknown command: click"},
		`"No tab with given id"`:                           {Message: "No tab with given id"},
		`{"code":-32001}`:                                  {Code: -32001, Message: "error without a message"},
		`42`:                                               {Message: "malformed error: 42"},
	} {
		if got := jsonrpc.DecodeError(json.RawMessage(raw)); got.Code != want.Code || got.Message != want.Message {
			t.Errorf("%s: got %+v, want %+v", raw, *got, want)
		}
	}
}

func TestKeys(t *testing.T) {
	for name, want := range map[string]key{
		"Enter": {"Enter", "Enter", 13, "\r"}, "a": {"a", "KeyA", 'A', "a"}, "7": {"7", "Digit7", '7', "7"},
		"F5": {"F5", "F5", 116, ""}, "arrowdown": {"ArrowDown", "ArrowDown", 40, ""},
	} {
		if got := keyFor(name); got != want {
			t.Errorf("keyFor(%q) = %+v, want %+v", name, got, want)
		}
	}
	if err := pressKey(t.Context(), NewClient(Options{}), "Hyper+A"); err == nil || !strings.Contains(err.Error(), "unknown modifier") {
		t.Errorf("Hyper+A: %v", err)
	}
	if err := pressKey(t.Context(), NewClient(Options{}), "Control+Frobnicate"); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("Frobnicate: %v", err)
	}
}

func TestFitImageDownscales(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3000, 120))
	for x := 0; x < 3000; x++ {
		img.Set(x, 60, color.RGBA{255, 0, 0, 255})
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	got, err := fitImage(base64.StdEncoding.EncodeToString(buf.Bytes()), 1<<20)
	if err != nil || got.mime != "image/png" || got.w != 2000 || got.h != 80 || !strings.Contains(got.note, "from 3000x120") {
		t.Fatalf("got %s %dx%d %q, err=%v", got.mime, got.w, got.h, got.note, err)
	}
	raw, _ := base64.StdEncoding.DecodeString(got.data)
	cfg, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil || cfg.Width != 2000 || cfg.Height != 80 || got.bytes != len(raw) {
		t.Errorf("the scaled image decodes as %+v, %v", cfg, err)
	}
	if _, err := fitImage("not base64!", 1<<20); err == nil {
		t.Error("bad base64: want an error")
	}
}

// noise is a w x h PNG of random pixels: it compresses badly, like a
// busy page, so it is as big as such a screenshot.
func noise(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rand.New(rand.NewSource(7)).Read(img.Pix)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// TestFitImageBytes: an image over the byte limit comes back as a JPEG
// within it (scaled down when JPEG alone is not enough), and the note says
// what was done; one within every limit passes untouched.
func TestFitImageBytes(t *testing.T) {
	big := noise(500, 300) // about 600 KB as PNG
	for _, limit := range []int{200 << 10, 40 << 10} {
		got, err := fitImage(base64.StdEncoding.EncodeToString(big), limit)
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		raw, _ := base64.StdEncoding.DecodeString(got.data)
		cfg, kind, err := image.DecodeConfig(bytes.NewReader(raw))
		if err != nil || kind != "jpeg" || got.mime != "image/jpeg" || len(raw) > limit || got.bytes != len(raw) ||
			cfg.Width != got.w || cfg.Height != got.h || cfg.Width > 500 {
			t.Errorf("limit %d: %s %dx%d, %d bytes (%v)", limit, kind, cfg.Width, cfg.Height, len(raw), err)
		}
		if !strings.Contains(got.note, "JPEG") || !strings.Contains(got.note, "browser.maxImageBytes") {
			t.Errorf("limit %d: note %q", limit, got.note)
		}
	}
	small := noise(40, 30)
	got, err := fitImage(base64.StdEncoding.EncodeToString(small), 1<<20)
	if err != nil || got.note != "" || got.mime != "image/png" || got.data != base64.StdEncoding.EncodeToString(small) {
		t.Errorf("a small image was changed: %s %q %v", got.mime, got.note, err)
	}
}

func TestToolSchemas(t *testing.T) {
	tools := NewTools(NewClient(Options{}), nil)
	names := map[string]bool{}
	for _, raw := range tools.List() {
		var tl struct {
			Name        string
			InputSchema map[string]any
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			t.Fatal(err)
		}
		names[tl.Name] = true
		if tl.InputSchema["type"] != "object" || tl.InputSchema["additionalProperties"] != false {
			t.Errorf("%s: schema %v", tl.Name, tl.InputSchema)
		}
	}
	for _, want := range []string{"tabs", "navigate", "navigate_back", "snapshot", "click", "type", "hover", "take_screenshot", "evaluate", "press_key", "list", "connect"} {
		if !names[want] {
			t.Errorf("missing tool %s", want)
		}
	}
	if names["cdp"] {
		t.Error("cdp must be off unless enabled")
	}
	if !contains(NewTools(NewClient(Options{}), &ToolsOptions{CDP: true}).List(), `"cdp"`) {
		t.Error("cdp missing when enabled")
	}
	res := tools.Call(t.Context(), "click", json.RawMessage(`{"ref":"e1","bogus":1}`))
	if !strings.Contains(string(res), "bogus") || !strings.Contains(string(res), `"isError":true`) {
		t.Errorf("unknown argument: %s", res)
	}
}

func contains(list []json.RawMessage, s string) bool {
	for _, r := range list {
		if strings.Contains(string(r), s) {
			return true
		}
	}
	return false
}

// TestOpenedAt: the tabs a refused createTab may have left, which mcpx
// closes; a tab the user opened meanwhile elsewhere is not among them.
func TestOpenedAt(t *testing.T) {
	for _, tc := range []struct {
		have, want string
		ok         bool
	}{
		{"about:blank", "about:blank", true},
		{"", "https://a.test/x", true},
		{"about:blank", "https://a.test/x", true},
		{"https://a.test/x/", "https://a.test/x", true},
		{"https://a.test/login?next=x", "http://a.test/x", true},
		{"https://b.test/", "https://a.test/x", false},
		{"https://b.test/", "about:blank", false},
		{"chrome://newtab/", "about:blank", false},
	} {
		if got := openedAt(tc.have, tc.want); got != tc.ok {
			t.Errorf("openedAt(%q, %q) = %v, want %v", tc.have, tc.want, got, tc.ok)
		}
	}
}
