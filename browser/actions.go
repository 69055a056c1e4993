package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

type runFunc func(ctx context.Context, t *Tools, args json.RawMessage) (*result, error)

const loadTimeout = 15 * time.Second

func runTabs(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		Action   string `json:"action"`
		Index    *int   `json:"index"`
		URL      string `json:"url"`
		Activate *bool  `json:"activate"`
		Stealth  bool   `json:"stealth"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	c := t.c
	switch a.Action {
	case "list":
		return tabList(ctx, c)
	case "new":
		url := a.URL
		if url == "" {
			url = "about:blank" // v1.5 refuses it: the error says to give a URL
		}
		res, err := c.createTab(ctx, url, map[string]any{"url": url, "activate": a.Activate == nil || *a.Activate, "stealth": a.Stealth})
		if err != nil {
			return nil, err
		}
		if url != "about:blank" {
			_ = c.waitLoaded(ctx, loadTimeout)
		}
		return textResult("Opened a new tab at %s and made it current.\n%s", url, tabSummary(res)), nil
	case "select":
		if a.Index == nil {
			return nil, errors.New("select needs index (from browser_tabs list)")
		}
		ext, res, err := c.call(ctx, "selectTab", map[string]any{"tabIndex": *a.Index, "activate": a.Activate != nil && *a.Activate, "stealth": a.Stealth})
		if err != nil {
			return nil, fmt.Errorf("selectTab %d: %w", *a.Index, err)
		}
		c.attach(ext, res)
		return textResult("Tab %d is now current.\n%s", *a.Index, tabSummary(res)), nil
	case "close":
		return closeTab(ctx, c, a.Index)
	default:
		return nil, fmt.Errorf("action %q: want list, new, select or close", a.Action)
	}
}

func tabSummary(res json.RawMessage) string {
	var r struct {
		Tab *Tab `json:"tab"`
	}
	if json.Unmarshal(res, &r) != nil || r.Tab == nil {
		return ""
	}
	return fmt.Sprintf("Title: %s\nURL: %s", r.Tab.Title, r.Tab.URL)
}

func getTabs(ctx context.Context, c *Client) ([]Tab, error) {
	res, err := c.Call(ctx, "getTabs", struct{}{})
	if err != nil {
		return nil, fmt.Errorf("getTabs: %w", err)
	}
	var r struct {
		Tabs []Tab `json:"tabs"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("getTabs: unexpected answer: %s", truncate(string(res), 200))
	}
	return r.Tabs, nil
}

func tabList(ctx context.Context, c *Client) (*result, error) {
	tabs, err := getTabs(ctx, c)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for i, tb := range tabs {
		idx := i
		if tb.Index != nil {
			idx = *tb.Index
		}
		fmt.Fprintf(&b, "%d. %s (%s)", idx, tb.Title, tb.URL)
		if tb.Active {
			b.WriteString(" [active]")
		}
		if tb.Automatable != nil && !*tb.Automatable {
			b.WriteString(" [not automatable]")
		}
		b.WriteByte('\n')
	}
	if len(tabs) == 0 {
		b.WriteString("No tabs.")
	}
	return textResult("%s", strings.TrimRight(b.String(), "\n")), nil
}

// closeTab asks the extension to close a tab and checks that it did: the
// v1.5 extension answers success without closing anything, so a tab still
// listed afterwards is closed through CDP (Page.close) instead.
func closeTab(ctx context.Context, c *Client, index *int) (*result, error) {
	before, err := getTabs(ctx, c)
	if err != nil {
		return nil, err
	}
	params := map[string]any{}
	if index != nil {
		params["index"] = *index
	}
	ext, _, err := c.call(ctx, "closeTab", params)
	if err != nil && !isUnknownCommand(err) {
		return nil, fmt.Errorf("closeTab: %w", err)
	}
	after, err := getTabs(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(after) < len(before) {
		if index == nil && ext != nil {
			c.detach(ext)
		}
		return textResult("Closed the tab. %d tab(s) left.", len(after)), nil
	}
	if index != nil {
		// Page.close acts on the attached tab: attach the one asked for.
		var res json.RawMessage
		if ext, res, err = c.call(ctx, "selectTab", map[string]any{"tabIndex": *index}); err != nil {
			return nil, fmt.Errorf("closeTab %d: %w", *index, err)
		}
		c.attach(ext, res)
	}
	if _, err := c.CDP(ctx, "Page.close", nil); err != nil {
		return nil, fmt.Errorf("close the tab: %w", err)
	}
	if ext != nil {
		c.detach(ext)
	}
	return textResult("Closed the tab."), nil
}

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command")
}

// pageState is the header most tools end with.
func pageState(ctx context.Context, c *Client) string {
	var s struct{ URL, Title string }
	if c.evalInto(ctx, `({URL: location.href, Title: document.title})`, &s) != nil {
		return ""
	}
	return fmt.Sprintf("- Page URL: %s\n- Page Title: %s", s.URL, s.Title)
}

func runNavigate(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		URL string `json:"url"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.URL == "" {
		return nil, errors.New("url is required")
	}
	res, err := t.c.CDP(ctx, "Page.navigate", map[string]any{"url": a.URL})
	switch {
	case errors.Is(err, ErrNoTab):
		// No tab to drive: open one at the URL itself. Never a blank one
		// first: the v1.5 extension refuses to automate about:blank.
		if _, err := t.c.CreateTab(ctx, a.URL, true); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		var nav struct {
			ErrorText string `json:"errorText"`
		}
		_ = json.Unmarshal(res, &nav)
		if nav.ErrorText != "" {
			return nil, fmt.Errorf("navigate to %s: %s", a.URL, nav.ErrorText)
		}
	}
	if err := t.c.waitLoaded(ctx, loadTimeout); err != nil {
		return nil, err
	}
	return textResult("Navigated to %s\n%s", a.URL, pageState(ctx, t.c)), nil
}

func runHistory(expr string) runFunc {
	return func(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
		if err := decodeArgs(raw, &struct{}{}); err != nil {
			return nil, err
		}
		if _, err := t.c.Eval(ctx, expr+"; 0"); err != nil {
			return nil, err
		}
		time.Sleep(100 * time.Millisecond) // let the navigation start
		if err := t.c.waitLoaded(ctx, loadTimeout); err != nil {
			return nil, err
		}
		return textResult("%s", pageState(ctx, t.c)), nil
	}
}

func runReload(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	if err := decodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	if _, err := t.c.CDP(ctx, "Page.reload", map[string]any{}); err != nil {
		return nil, err
	}
	time.Sleep(100 * time.Millisecond)
	if err := t.c.waitLoaded(ctx, loadTimeout); err != nil {
		return nil, err
	}
	return textResult("Reloaded.\n%s", pageState(ctx, t.c)), nil
}

// errOption is what locate answers for an <option> of a <select>: no
// mouse reaches it, so callers select it instead.
var errOption = errors.New("the target is an option of a select")

// errNoArea is what locate answers for an element with no area (an empty
// link): no mouse reaches it, but focus and activation do.
var errNoArea = errors.New("the target has no area a mouse can reach")

// spot is where a mouse action goes: a point that hit-tests to the
// element itself. When none does (other targets inside it cover it all),
// it is the element's centre and Lands names what lies there, for the
// result to say.
type spot struct {
	X, Y  float64
	Lands string
}

// locate finds the point for a mouse action on an element.
func locate(ctx context.Context, c *Client, tg target) (spot, error) {
	if err := tg.check(); err != nil {
		return spot{}, err
	}
	ref, _ := json.Marshal(tg.Ref)
	sel, _ := json.Marshal(tg.Selector)
	var r struct {
		X, Y   float64
		Lands  string
		Option bool
		NoArea bool
		Error  string
	}
	if err := c.evalInto(ctx, fmt.Sprintf("(%s)(%s, %s)", resolveJS, ref, sel), &r); err != nil {
		return spot{}, err
	}
	if r.Error != "" {
		return spot{}, errors.New(r.Error)
	}
	if r.Option {
		return spot{}, errOption
	}
	if r.NoArea {
		return spot{}, errNoArea
	}
	return spot{X: r.X, Y: r.Y, Lands: r.Lands}, nil
}

// landsNote is what a result adds when the point is not the element's
// own: the model should know the action may have gone to another element.
func (s spot) landsNote() string {
	if s.Lands == "" {
		return ""
	}
	return fmt.Sprintf(" No point of its own was free (other targets inside it cover it), so mcpx used its centre, which lies on %s: that element may have taken the action.", s.Lands)
}

func describeTarget(tg target) string {
	switch {
	case tg.Element != "":
		return tg.Element
	case tg.Ref != "":
		return "ref " + tg.Ref
	default:
		return tg.Selector
	}
}

func runClick(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		target
		Button      string `json:"button"`
		DoubleClick bool   `json:"doubleClick"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	at, err := locate(ctx, t.c, a.target)
	if errors.Is(err, errOption) {
		// Clicking an option of a <select> picks it.
		picked, err := selectOptions(ctx, t.c, a.target, nil)
		if err != nil {
			return nil, err
		}
		return textResult("Clicked %s: selected %s.", describeTarget(a.target), strings.Join(picked, ", ")), nil
	}
	if errors.Is(err, errNoArea) {
		if _, err := t.c.Eval(ctx, fmt.Sprintf(`(() => { const el = %s; if (el.error) throw new Error(el.error); el.focus(); el.click(); })()`, elementExpr(a.target))); err != nil {
			return nil, err
		}
		return textResult("Clicked %s (it has no area on screen: focused and activated it through the page).", describeTarget(a.target)), nil
	}
	if err != nil {
		return nil, err
	}
	if err := mouseClick(ctx, t.c, at.X, at.Y, a.Button, a.DoubleClick); err != nil {
		return nil, err
	}
	return textResult("Clicked %s.%s", describeTarget(a.target), at.landsNote()), nil
}

func runHover(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a target
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	at, err := locate(ctx, t.c, a)
	if errors.Is(err, errOption) {
		return nil, errors.New("an option of a select cannot be hovered: use browser_select_option or browser_click")
	}
	if errors.Is(err, errNoArea) {
		return nil, fmt.Errorf("%s has no area on screen to hover", describeTarget(a))
	}
	if err != nil {
		return nil, err
	}
	if _, err := t.c.CDP(ctx, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": at.X, "y": at.Y}); err != nil {
		return nil, err
	}
	return textResult("Hovered over %s.%s", describeTarget(a), at.landsNote()), nil
}

func runType(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		target
		Text   string `json:"text"`
		Submit bool   `json:"submit"`
		Slowly bool   `json:"slowly"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := a.target.check(); err != nil {
		return nil, err
	}
	if err := typeInto(ctx, t.c, a.target, a.Text, a.Slowly); err != nil {
		return nil, err
	}
	if a.Submit {
		if err := pressKey(ctx, t.c, "Enter"); err != nil {
			return nil, err
		}
	}
	return textResult("Typed %d characters into %s.", len([]rune(a.Text)), describeTarget(a.target)), nil
}

func runPressKey(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		Key string `json:"key"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := pressKey(ctx, t.c, a.Key); err != nil {
		return nil, err
	}
	return textResult("Pressed %s.", a.Key), nil
}

// elementExpr is a JS expression for the target element, or an object
// {error} when it cannot be found.
func elementExpr(tg target) string {
	ref, _ := json.Marshal(tg.Ref)
	sel, _ := json.Marshal(tg.Selector)
	return fmt.Sprintf(`((ref, sel) => { let el;
  if (ref) { const reg = window[Symbol.for("mcpx.refs")]; const w = reg && reg.byRef.get(ref); el = w && w.deref();
    if (!el || !el.isConnected) return {error: "ref " + ref + " not found: the page changed; take a new snapshot"}; }
  else { try { el = document.querySelector(sel); } catch (e) { return {error: "invalid selector " + JSON.stringify(sel) + ": " + e.message}; }
    if (!el) return {error: "no element matches selector " + JSON.stringify(sel)}; }
  return el; })(%s, %s)`, ref, sel)
}

func runWaitFor(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		Text     string   `json:"text"`
		TextGone string   `json:"textGone"`
		Time     *float64 `json:"time"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Text == "" && a.TextGone == "" {
		if a.Time == nil {
			return nil, errors.New("give text, textGone or time")
		}
		d := time.Duration(min(max(*a.Time, 0), 60) * float64(time.Second))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
		return textResult("Waited %s.", d), nil
	}
	limit := 30 * time.Second
	if a.Time != nil {
		limit = time.Duration(min(max(*a.Time, 0), 60) * float64(time.Second))
	}
	want, _ := json.Marshal(a.Text)
	gone, _ := json.Marshal(a.TextGone)
	expr := fmt.Sprintf(`(() => { const t = document.body ? document.body.innerText : ""; const w = %s, g = %s;
  return (!w || t.includes(w)) && (!g || !t.includes(g)); })()`, want, gone)
	deadline := time.Now().Add(limit)
	for {
		var ok bool
		if err := t.c.evalInto(ctx, expr, &ok); err == nil && ok {
			return textResult("Done waiting.\n%s", pageState(ctx, t.c)), nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("still waiting after %s", limit)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func runEvaluate(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		target
		Function string `json:"function"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Function) == "" {
		return nil, errors.New("function is required, e.g. () => document.title")
	}
	expr := fmt.Sprintf("(%s)()", a.Function)
	if a.Ref != "" || a.Selector != "" {
		expr = fmt.Sprintf(`(() => { const el = %s; if (el && el.error && !(el instanceof Node)) throw new Error(el.error); return (%s)(el); })()`, elementExpr(a.target), a.Function)
	}
	v, err := t.c.Eval(ctx, expr)
	if err != nil {
		var pe *PageError
		if errors.As(err, &pe) {
			pe.Message = clipRunes(pe.Message, t.opts.MaxSnapshotChars/2)
		}
		return nil, err
	}
	return textResult("%s", capEvaluate(v, t.opts.MaxSnapshotChars)), nil
}

func runResize(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Width < 1 || a.Height < 1 || a.Width > 10000 || a.Height > 10000 {
		return nil, fmt.Errorf("width and height must be between 1 and 10000, got %gx%g", a.Width, a.Height)
	}
	if _, err := t.c.CDP(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": int(a.Width), "height": int(a.Height), "deviceScaleFactor": 1, "mobile": false,
	}); err != nil {
		return nil, err
	}
	return textResult("Resized the viewport to %dx%d.", int(a.Width), int(a.Height)), nil
}

func runConsole(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	if err := decodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	res, err := t.c.Call(ctx, "getConsoleMessages", struct{}{})
	if err != nil {
		if isUnknownCommand(err) {
			return nil, errors.New("this browser extension does not collect console messages (unsupported)")
		}
		return nil, err
	}
	var r struct {
		Messages *[]consoleMessage `json:"messages"`
	}
	if json.Unmarshal(res, &r) != nil || r.Messages == nil {
		return nil, errors.New("this browser extension does not collect console messages (unsupported)")
	}
	if len(*r.Messages) == 0 {
		return textResult("No console messages."), nil
	}
	return textResult("%s", capConsole(*r.Messages, t.opts.MaxSnapshotChars)), nil
}

func runList(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	if err := decodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	exts, err := t.c.ListExtensions(ctx)
	if err != nil {
		return nil, err
	}
	if len(exts) == 0 {
		return textResult("No browser is connected to the relay: none came within %s of mcpx reaching it. Open Chrome with the browser extension (signed in, for a remote relay; it finds a local one by itself), then call browser_list again.", t.c.opts.ExtensionWait), nil
	}
	current := t.c.Status().Extension
	var b strings.Builder
	for _, e := range exts {
		fmt.Fprintf(&b, "- %s (id %s)", e.Name, e.ID)
		if e.Name == current {
			b.WriteString(" [current]")
		}
		b.WriteByte('\n')
	}
	return textResult("%s", strings.TrimRight(b.String(), "\n")), nil
}

func runConnect(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		ID string `json:"id"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	ext, err := t.c.Connect(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	return textResult("Connected to %s.", ext.Name), nil
}

func runCDP(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	var params any = a.Params
	if len(a.Params) == 0 {
		params = struct{}{}
	}
	res, err := t.c.CDP(ctx, a.Method, params)
	if err != nil {
		return nil, err
	}
	return textResult("%s", res), nil
}
