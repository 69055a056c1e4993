package browsertest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"testing"
)

func TestDialectUnknownMethod(t *testing.T) {
	for _, d := range []Dialect{V15, V19} {
		t.Run(d.String(), func(t *testing.T) {
			s := newSession(t, d, nil)
			res, rpcErr, err := s.rc.call(testCtx(t), "browser_navigate", map[string]any{"url": "http://x.test/"})
			if err != nil {
				t.Fatal(err)
			}
			switch d {
			case V15: // a silent success
				if rpcErr != nil || !strings.Contains(string(res), `"currentTab":null`) {
					t.Fatalf("v1.5: result %s, error %s", res, rpcErr)
				}
			case V19:
				e := decodeErr(t, rpcErr)
				if e.Code != nil || e.Message != "Unknown command: browser_navigate" || e.Stack == "" {
					t.Fatalf("v1.9: error %s", rpcErr)
				}
			}
		})
	}
}

func TestDialectCloseTab(t *testing.T) {
	for _, d := range []Dialect{V15, V19} {
		t.Run(d.String(), func(t *testing.T) {
			s := newSession(t, d, nil)
			mustCall(t, s.rc, "createTab", map[string]any{"url": "http://x.test/"})
			if n := len(s.ext.Tabs()); n != 2 {
				t.Fatalf("%d tabs", n)
			}
			res := mustCall(t, s.rc, "closeTab", map[string]any{})
			switch d {
			case V15: // not implemented: answers, closes nothing
				if n := len(s.ext.Tabs()); n != 2 || !strings.Contains(string(res), "currentTab") {
					t.Fatalf("v1.5: %d tabs after closeTab, result %s", n, res)
				}
				// Page.close is the way out
				mustCall(t, s.rc, "forwardCDPCommand", cdp("Page.close", nil))
				if n := len(s.ext.Tabs()); n != 1 {
					t.Fatalf("v1.5: %d tabs after Page.close", n)
				}
			case V19:
				if n := len(s.ext.Tabs()); n != 1 || string(res) != `{"closedAttachedTab":true,"success":true}` {
					t.Fatalf("v1.9: %d tabs after closeTab, result %s", n, res)
				}
				wantStack(t, callErr(t, s.rc, "forwardCDPCommand", cdp("Page.close", nil)), "No tab attached")
			}
		})
	}
}

func wantStack(t testing.TB, raw json.RawMessage, msg string) {
	t.Helper()
	if e := decodeErr(t, raw); e.Code != nil || e.Message != msg || e.Stack == "" {
		t.Fatalf("error %s, want {message: %q, stack}", raw, msg)
	}
}

func TestDialectTabs(t *testing.T) {
	for _, d := range []Dialect{V15, V19} {
		t.Run(d.String(), func(t *testing.T) {
			s := newSession(t, d, nil)
			s.ext.AddPage("http://x.test/", "X Page")

			// No CDP before a tab is attached.
			noTab := callErr(t, s.rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "1"}))
			if d == V15 {
				wantCode(t, noTab, -32000, "No tab is connected")
			} else {
				wantStack(t, noTab, "No tab attached")
			}

			var created struct {
				Success    bool             `json:"success"`
				Tab        struct{ ID int } `json:"tab"`
				CurrentTab json.RawMessage  `json:"currentTab"`
			}
			unmarshal(t, mustCall(t, s.rc, "createTab", map[string]any{"url": "http://x.test/"}), &created)
			if created.Tab.ID == 0 || (d == V15) != created.Success || (d == V15) != (created.CurrentTab != nil) {
				t.Fatalf("createTab: %+v", created)
			}

			var eval struct {
				Result struct{ Type, Value string } `json:"result"`
			}
			unmarshal(t, mustCall(t, s.rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})), &eval)
			if eval.Result.Type != "string" || eval.Result.Value != "X Page" {
				t.Fatalf("document.title: %+v", eval)
			}

			var tabs struct {
				Tabs []struct {
					ID     int  `json:"id"`
					Active bool `json:"active"`
				} `json:"tabs"`
			}
			unmarshal(t, mustCall(t, s.rc, "getTabs", nil), &tabs)
			if len(tabs.Tabs) != 2 || tabs.Tabs[1].ID != created.Tab.ID || !tabs.Tabs[1].Active {
				t.Fatalf("getTabs: %+v", tabs)
			}

			mustCall(t, s.rc, "selectTab", map[string]any{"tabIndex": 0})
			unmarshal(t, mustCall(t, s.rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "location.href"})), &eval)
			if eval.Result.Value != "about:blank" {
				t.Fatalf("after selectTab 0: %+v", eval)
			}
			callErr(t, s.rc, "selectTab", map[string]any{"tabIndex": 9})

			for _, m := range []string{"Page.reload", "Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Emulation.setDeviceMetricsOverride"} {
				mustCall(t, s.rc, "forwardCDPCommand", cdp(m, nil))
			}
			unknown := callErr(t, s.rc, "forwardCDPCommand", cdp("DOM.resolveNode", nil))
			if d == V19 {
				wantStack(t, unknown, "Unsupported CDP method: DOM.resolveNode")
			} else {
				wantCode(t, unknown, -32000, "wasn't found")
			}
			if res := mustCall(t, s.rc, "getConsoleMessages", nil); !strings.Contains(string(res), `"messages":[]`) {
				t.Fatalf("getConsoleMessages: %s", res)
			}
		})
	}
}

func TestScreenshotDecodes(t *testing.T) {
	for _, tc := range []struct {
		d      Dialect
		format string
		want   string
	}{{V15, "", "png"}, {V19, "", "jpeg"}, {V19, "png", "png"}} {
		t.Run(tc.d.String()+"/"+tc.want, func(t *testing.T) {
			s := newSession(t, tc.d, nil)
			mustCall(t, s.rc, "createTab", map[string]any{"url": "https://example.test/"})
			params := map[string]any{}
			if tc.format != "" {
				params["format"] = tc.format
			}
			var shot struct{ Data string }
			unmarshal(t, mustCall(t, s.rc, "forwardCDPCommand", cdp("Page.captureScreenshot", params)), &shot)
			b, err := base64.StdEncoding.DecodeString(shot.Data)
			if err != nil {
				t.Fatal(err)
			}
			if _, format, err := image.Decode(bytes.NewReader(b)); err != nil || format != tc.want {
				t.Fatalf("decode: %q, %v", format, err)
			}
		})
	}
}

func TestHandleErrorShapes(t *testing.T) {
	s := newSession(t, V15, nil)
	cases := []struct {
		err  error
		want string
	}{
		{CodeMessage.Errorf("Tab creation failed: %s", "Permission denied"), `{"code":-32000,"message":"Tab creation failed: Permission denied"}`},
		{&Error{Shape: CodeMessage, Code: -32602, Message: "bad"}, `{"code":-32602,"message":"bad"}`},
		{&Error{Shape: MessageStack, Message: "boom", Stack: "Error: boom"}, `{"message":"boom","stack":"Error: boom"}`},
		{BareString.Errorf("plain"), `"plain"`},
		{errors.New("any error"), `{"code":-32000,"message":"any error"}`}, // the dialect's shape
	}
	for _, tc := range cases {
		s.ext.Handle("createTab", func(context.Context, json.RawMessage) (any, error) { return nil, tc.err })
		if got := callErr(t, s.rc, "createTab", nil); string(got) != tc.want {
			t.Errorf("error %s, want %s", got, tc.want)
		}
	}
}

func TestHandleOverrides(t *testing.T) {
	s := newSession(t, V19, nil)
	s.ext.Handle("forwardCDPCommand:Runtime.evaluate", func(_ context.Context, params json.RawMessage) (any, error) {
		var p struct{ Expression string }
		_ = json.Unmarshal(params, &p)
		return json.RawMessage(`{"result":{"type":"number","value":` + p.Expression + `}}`), nil
	})
	s.ext.Handle("getBuildInfo", func(context.Context, json.RawMessage) (any, error) {
		return map[string]any{"buildTimestamp": "now"}, nil
	})
	mustCall(t, s.rc, "createTab", nil)
	if res := mustCall(t, s.rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "42"})); string(res) != `{"result":{"type":"number","value":42}}` {
		t.Fatalf("override: %s", res)
	}
	if res := mustCall(t, s.rc, "getBuildInfo", nil); string(res) != `{"buildTimestamp":"now"}` {
		t.Fatalf("added method: %s", res)
	}
	s.ext.Handle("forwardCDPCommand:Runtime.evaluate", nil) // back to the built-in
	if res := mustCall(t, s.rc, "forwardCDPCommand", cdp("Runtime.evaluate", map[string]any{"expression": "42"})); string(res) != `{"result":{"type":"undefined"}}` {
		t.Fatalf("built-in: %s", res)
	}
}

func TestV15MergesCurrentTab(t *testing.T) {
	s := newSession(t, V15, nil)
	var created struct{ Tab struct{ ID int } }
	unmarshal(t, mustCall(t, s.rc, "createTab", map[string]any{"url": "http://x.test/"}), &created)
	var res struct {
		CurrentTab struct{ ID int } `json:"currentTab"`
	}
	unmarshal(t, mustCall(t, s.rc, "forwardCDPCommand", cdp("Page.navigate", map[string]any{"url": "http://y.test/"})), &res)
	if res.CurrentTab.ID != created.Tab.ID {
		t.Fatalf("currentTab %+v, want tab %d", res, created.Tab.ID)
	}
}
