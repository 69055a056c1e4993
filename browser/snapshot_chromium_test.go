package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
)

// corpus is testdata/a11y: pages by class of problem, and pages built
// like ordinary sites. wait names text to wait for (browser_wait_for)
// before the snapshot, for pages that reveal content late.
var corpus = []struct {
	page, wait string
}{
	{page: "ordinary.html"},  // landmarks, a table of plans, a contact form
	{page: "shop.html"},      // a product page: icon buttons, visually hidden radios, steppers, reviews
	{page: "dashboard.html"}, // a web app: disclosure nav, data table, tabs, validation
	{page: "docs.html"},      // documentation: nested <details> nav, anchors, code copy, an embedded frame
	{page: "choices.html"},   // <select>, optgroups, ARIA listbox, menu, menubar, tree, tabs, datalist
	{page: "names.html"},     // accessible names: labelledby, label, title, placeholder, alt, defaults
	{page: "content.html"},   // names from contents: spacing, generated content, embedded controls
	{page: "shadow.html"},    // open shadow roots and slots
	{page: "reach.html"},     // inert, aria-hidden, disabled fieldsets, aria-disabled, hidden, clipped
	{page: "modal.html"},     // behind a showModal() <dialog>
	{page: "ariamodal.html"}, // behind an aria-modal dialog
	{page: "shadowmodal.html"},
	{page: "widgets.html"},                      // contenteditable, details, switch/slider/spinbutton values, inputs
	{page: "frames.html"},                       // same-origin, srcdoc and cross-origin frames
	{page: "mixed.html"},                        // patterns from ordinary sites: skip links, image maps, grids, popovers
	{page: "dynamic.html", wait: "Late button"}, // revealed after a delay, and on hover
}

// tally counts one measure as hits over a total.
type tally struct{ hit, total int }

func (t *tally) add(ok bool) {
	t.total++
	if ok {
		t.hit++
	}
}

func (t tally) ratio() float64 {
	if t.total == 0 {
		return 1
	}
	return float64(t.hit) / float64(t.total)
}

func (t tally) String() string { return fmt.Sprintf("%d/%d = %.1f%%", t.hit, t.total, 100*t.ratio()) }

// TestSnapshotMatchesChromium measures browser_snapshot against Chromium's
// accessibility tree on the corpus, in one headless Chromium: recall and
// precision of the elements a user can act on, role and name equality,
// and a click or a typed text through every printed ref, checked in the
// page.
func TestSnapshotMatchesChromium(t *testing.T) {
	pages := httptest.NewServer(http.FileServer(http.Dir("../testdata/a11y")))
	defer pages.Close()
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	token := relay.Token("user-1", time.Hour)
	chrome := browsertest.StartChromium(t, relay.ExtensionURL(), token)
	c := browser.NewClient(browser.Options{Token: token})
	c.Start(context.Background())
	defer c.Close()
	tools := browser.NewTools(c, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	// try calls a tool and returns its text, or its error.
	try := func(name string, args any) (string, error) {
		b, _ := json.Marshal(args)
		var r struct {
			Content []struct{ Type, Text string }
			IsError bool
		}
		raw := tools.Call(ctx, name, b)
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
			return "", fmt.Errorf("%s: %s", name, raw)
		}
		if r.IsError {
			return "", fmt.Errorf("%s %s: %s", name, b, r.Content[0].Text)
		}
		return r.Content[len(r.Content)-1].Text, nil
	}
	call := func(name string, args any) string {
		t.Helper()
		text, err := try(name, args)
		if err != nil {
			t.Fatalf("%v\nchromium:\n%s", err, chrome.Output())
		}
		return text
	}

	var recall, precision, roles, names, acted tally
	for _, pg := range corpus {
		call("navigate", map[string]any{"url": pages.URL + "/" + pg.page})
		if pg.wait != "" {
			call("wait_for", map[string]any{"text": pg.wait})
		}
		snap := call("snapshot", map[string]any{})
		lines := parseOutline(snap)
		g, err := readGroundTruth(ctx, c)
		if err != nil {
			t.Fatalf("%s: ground truth: %v", pg.page, err)
		}
		pr, pp, pn, pl, misses := compare(lines, g)
		recall.addAll(pr)
		precision.addAll(pp)
		roles.addAll(pn)
		names.addAll(pl)
		pa, failures := actThroughRefs(t, ctx, c, try, lines)
		acted.addAll(pa)
		t.Logf("%s: recall %v, precision %v, acted %v (%d frames)", pg.page, pr, pp, pa, g.frames)
		for _, m := range append(misses, failures...) {
			t.Logf("  %s", m)
		}
		if os.Getenv("MCPX_AXDUMP") != "" {
			t.Logf("outline:\n%s\nChromium:\n%s", snap, dumpAX(g))
		}
		for _, l := range lines {
			if l.disabled && l.ref != "" {
				t.Errorf("%s: a disabled control offered as a target: %s", pg.page, l.text)
			}
		}
		switch pg.page {
		case "dynamic.html":
			checkHoverReveals(t, call, snap)
		case "frames.html":
			if !regexp.MustCompile(`iframe "Partner widget": cross-origin frame http://localhost:\d+/frame-inner.html`).MatchString(snap) ||
				!strings.Contains(snap, `iframe "Same-origin form"`) || !strings.Contains(snap, `button "Inner submit" [ref=`) {
				t.Errorf("frames: the same-origin frame's contents or the cross-origin frame's name are missing:\n%s", snap)
			}
		case "choices.html":
			checkChoices(t, ctx, c, call, lines)
		case "reach.html":
			if n := strings.Count(snap, "[disabled]"); n < 8 {
				t.Errorf("reach: %d controls marked disabled, want the 8 of the page:\n%s", n, snap)
			}
			// Named by a selector (no ref is offered), they are refused.
			for sel, want := range map[string]string{
				"button[disabled]":           "is disabled",
				"fieldset[disabled] input":   "is disabled",
				"[aria-disabled] button":     "is disabled (aria-disabled)",
				"[inert] button":             "is inert",
				"div[style*=opacity] button": "", // invisible, yet there: a click works
			} {
				_, err := try("click", map[string]any{"selector": sel})
				if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
					t.Errorf("click %s: %v, want %q", sel, err, want)
				}
			}
		case "modal.html":
			_, err := try("click", map[string]any{"selector": "body > button"})
			t.Logf("modal: clicking behind it: %v", err)
			if err == nil {
				t.Errorf("a click behind the modal dialog was not refused")
			}
		}
	}
	checkLongPage(t, call, try, pages.URL+"/long.html")
	checkFullPageScreenshot(t, ctx, tools)
	checkOverlay(t, call, try, pages.URL+"/overlay.html")
	t.Logf("recall %v, precision %v, role equal %v, name equal %v, refs acting on the right element %v",
		recall, precision, roles, names, acted)
	for _, m := range []struct {
		what string
		t    tally
		min  float64
	}{{"recall", recall, 0.95}, {"precision", precision, 0.95}, {"role equality", roles, 0.95}, {"name equality", names, 0.95}, {"refs acting on the right element", acted, 1}} {
		if m.t.total == 0 || m.t.ratio() < m.min {
			t.Errorf("%s %v, want at least %.0f%%", m.what, m.t, 100*m.min)
		}
	}
}

func (t *tally) addAll(o tally) {
	t.hit += o.hit
	t.total += o.total
}

// compare measures an outline against Chromium's tree: recall (actionable
// nodes the outline gives a ref), precision (refs on actionable nodes),
// and for the nodes found, role and name equality.
func compare(lines []outlineLine, g *groundTruth) (recall, precision, roles, names tally, misses []string) {
	byRef := map[string]outlineLine{}
	for _, l := range lines {
		if l.ref != "" {
			byRef[l.ref] = l
		}
	}
	blocked := g.blockedByAriaModal()
	actionable := func(n axNode) bool { return g.actionable(n) && !blocked[n.NodeID] }
	axByRef := map[string]axNode{}
	for _, n := range g.nodes {
		if r := g.refOf[n.BackendDOMNodeID]; r != "" {
			if _, seen := axByRef[r]; !seen || !n.Ignored {
				axByRef[r] = n
			}
		}
	}
	for _, n := range g.nodes {
		if g.actionable(n) && blocked[n.NodeID] {
			misses = append(misses, fmt.Sprintf("(not counted: %s %q, behind an aria-modal dialog)", n.role(), n.name()))
		}
		// The parts of a native control's user-agent shadow tree (a date
		// field's day, month, year) are acted on through the control.
		if actionable(n) && g.inUA[n.BackendDOMNodeID] {
			misses = append(misses, fmt.Sprintf("(not counted: %s %q, inside a native control)", n.role(), n.name()))
		}
		if !actionable(n) || g.inUA[n.BackendDOMNodeID] {
			continue
		}
		l, ok := byRef[g.refOf[n.BackendDOMNodeID]]
		recall.add(ok)
		if !ok {
			misses = append(misses, fmt.Sprintf("missed %s %q", n.role(), n.name()))
			continue
		}
		roles.add(l.role == outlineRole(n))
		names.add(l.name == clipName(n.name()))
		if l.role != outlineRole(n) || l.name != clipName(n.name()) {
			misses = append(misses, fmt.Sprintf("%s: Chromium says %s %q", l.text, n.role(), n.name()))
		}
	}
	for _, l := range lines {
		if l.ref == "" {
			continue
		}
		n, ok := axByRef[l.ref]
		precision.add(ok && actionable(n))
		if !ok || !actionable(n) {
			misses = append(misses, fmt.Sprintf("not actionable in Chromium: %s (%s %q ignored=%v)", l.text, n.role(), n.name(), n.Ignored))
		}
	}
	return recall, precision, roles, names, misses
}

// recorderJS records, in every same-origin frame, the composed path of
// the last click and cancels it, so that links, submits and toggles leave
// the page as it is for the next ref.
const recorderJS = `(() => { const install = (w) => {
    if (w.__mcpxRecorder) return; w.__mcpxRecorder = true;
    w.addEventListener("click", (e) => { top.__mcpxLastClick = e.composedPath(); e.preventDefault(); }, true);
    for (let i = 0; i < w.frames.length; i++) { try { install(w.frames[i]); } catch (e) { /* cross-origin */ } }
  }; install(window); return true; })()`

// checkJS says whether the last action reached the element of ref:
// a click whose path holds it (or its label), a value typed into it, an
// option now selected.
const checkJS = `((ref, kind, want) => { const el = window[Symbol.for("mcpx.refs")].byRef.get(ref).deref();
  if (!el) return "the ref's element is gone";
  if (kind === "type") { const v = el.isContentEditable ? el.innerText.trim() : el.value; return v === want ? "" : "value " + JSON.stringify(v); }
  if (kind === "option") { return el.selected ? "" : "the option is not selected"; }
  const p = top.__mcpxLastClick || []; top.__mcpxLastClick = null;
  if (p.includes(el) || p.some((n) => n.localName === "label" && n.control === el)) return "";
  return p.length ? "the click reached " + p[0].localName + (p[0].id ? "#" + p[0].id : "") : "no click reached the page"; })`

// actThroughRefs types into every text field and clicks every other ref
// of the outline through the browser tools, and checks in the page that
// each reached the element the line describes.
func actThroughRefs(t *testing.T, ctx context.Context, c *browser.Client, try func(string, any) (string, error), lines []outlineLine) (acted tally, failures []string) {
	t.Helper()
	if _, err := c.Eval(ctx, recorderJS); err != nil {
		t.Fatalf("install the click recorder: %v", err)
	}
	for _, l := range lines {
		if l.ref == "" {
			continue
		}
		kind, want := "click", ""
		readOnly := strings.Contains(l.text, "[readonly]")
		switch {
		case readOnly:
		case l.role == "option" && strings.Contains(l.text, "[ref=") && isNativeOption(ctx, c, l.ref):
			kind = "option"
		case (l.role == "textbox" || l.role == "searchbox" || l.role == "combobox" && !strings.Contains(l.text, "option")) && isTypeable(ctx, c, l.ref):
			kind, want = "type", "typed by mcpx"
		case l.role == "spinbutton" && isTypeable(ctx, c, l.ref):
			kind, want = "type", "7"
		}
		var err error
		if kind == "type" {
			_, err = try("type", map[string]any{"ref": l.ref, "text": want})
		} else {
			_, err = try("click", map[string]any{"ref": l.ref})
		}
		var problem string
		if err == nil {
			var raw json.RawMessage
			if raw, err = c.Eval(ctx, fmt.Sprintf("(%s)(%q, %q, %q)", checkJS, l.ref, kind, want)); err == nil {
				err = json.Unmarshal(raw, &problem)
			}
		}
		if err != nil {
			problem = err.Error()
		}
		acted.add(problem == "")
		if problem != "" {
			failures = append(failures, fmt.Sprintf("%s %s: %s", kind, l.text, problem))
		}
	}
	return acted, failures
}

func evalBool(ctx context.Context, c *browser.Client, expr string) bool {
	raw, err := c.Eval(ctx, expr)
	return err == nil && string(raw) == "true"
}

func isNativeOption(ctx context.Context, c *browser.Client, ref string) bool {
	return evalBool(ctx, c, fmt.Sprintf(`window[Symbol.for("mcpx.refs")].byRef.get(%q).deref().localName === "option"`, ref))
}

// isTypeable: a text field a user types into (not a date or a colour).
func isTypeable(ctx context.Context, c *browser.Client, ref string) bool {
	return evalBool(ctx, c, fmt.Sprintf(`(() => { const el = window[Symbol.for("mcpx.refs")].byRef.get(%q).deref();
  return el.isContentEditable || el.localName === "textarea" || (el.localName === "input" && /^(text|search|email|tel|url|password|number|)$/.test(el.getAttribute("type") || "")); })()`, ref))
}

// checkHoverReveals: an element shown only while the mouse is over its
// menu is in the snapshot after browser_hover, with a ref that works.
func checkHoverReveals(t *testing.T, call func(string, any) string, before string) {
	t.Helper()
	if strings.Contains(before, "Hover action") {
		t.Errorf("the hover-only button is in the snapshot before any hover:\n%s", before)
	}
	if !strings.Contains(before, `button "Late button"`) {
		t.Errorf("the snapshot after browser_wait_for lacks the late button:\n%s", before)
	}
	call("hover", map[string]any{"selector": "#hover-menu"})
	after := call("snapshot", map[string]any{})
	var ref string
	for _, l := range parseOutline(after) {
		if l.role == "button" && l.name == "Hover action" {
			ref = l.ref
		}
	}
	if ref == "" {
		t.Errorf("after browser_hover the snapshot lacks the hover-only button with a ref:\n%s", after)
		return
	}
	call("click", map[string]any{"ref": ref})
}

// clipName is a name as the outline prints it: at most 100 characters.
func clipName(s string) string {
	s = collapse(s)
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

// checkLongPage: an outline longer than browser.maxSnapshotChars is cut
// within it, with a note that says how to get the rest, and the offset
// and the scopes it offers work.
func checkLongPage(t *testing.T, call func(string, any) string, try func(string, any) (string, error), url string) {
	t.Helper()
	call("navigate", map[string]any{"url": url})
	start := time.Now()
	first := call("snapshot", map[string]any{})
	took := time.Since(start)
	if n := utf8.RuneCountInString(first); n > browser.DefaultMaxSnapshotChars {
		t.Errorf("the snapshot has %d characters, over the limit", n)
	}
	m := regexp.MustCompile(`cut after line (\d+)\. For the rest call browser_snapshot with offset=(\d+)`).FindStringSubmatch(first)
	if m == nil || m[1] != m[2] {
		t.Fatalf("a long snapshot without a note on the cut:\n...%s", first[max(0, len(first)-800):])
	}
	_, note, _ := strings.Cut(first, "\n```\n")
	t.Logf("long page: the first snapshot took %v and has %d characters; it ends: %s", took.Round(time.Millisecond), utf8.RuneCountInString(first), note)
	lastShown := lastOutlineLine(first)
	next := call("snapshot", map[string]any{"offset": json.Number(m[2])})
	if !strings.Contains(next, "Showing lines "+m[2]) && !strings.Contains(next, fmt.Sprintf("Showing lines %s-", plusOne(m[2]))) {
		t.Errorf("the second page does not say where it starts:\n...%s", next[max(0, len(next)-400):])
	}
	if firstOutlineLine(next) == lastShown || !strings.Contains(first+next, `button "Add 4.0 to cart"`) {
		t.Errorf("offset %s does not continue where the first page stopped (last shown %q, next starts %q)", m[2], lastShown, firstOutlineLine(next))
	}
	// Scoped to one section: short, whole, the same refs.
	sec := call("snapshot", map[string]any{"selector": "#s9"})
	if strings.Contains(sec, "cut after line") || !strings.Contains(sec, `button "Add 9.199 to cart"`) || strings.Contains(sec, "Section 8") {
		t.Errorf("the snapshot scoped to #s9:\n%.1000s", sec)
	}
	var ref string
	for _, l := range parseOutline(first) {
		if l.role == "link" && l.name == "Item 0.5" {
			ref = l.ref
		}
	}
	if ref == "" {
		t.Fatalf("no ref for Item 0.5 in the first page")
	}
	byRef := call("snapshot", map[string]any{"ref": ref})
	if !strings.Contains(byRef, `link "Item 0.5" [ref=`+ref+`]`) || strings.Count(byRef, "[ref=") != 1 {
		t.Errorf("the snapshot scoped to %s:\n%s", ref, byRef)
	}
	if _, err := try("snapshot", map[string]any{"selector": "#nope"}); err == nil || !strings.Contains(err.Error(), "no element matches") {
		t.Errorf("a selector that matches nothing: %v", err)
	}
	if _, err := try("snapshot", map[string]any{"offset": 1000000}); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("an offset past the end: %v", err)
	}
}

func plusOne(s string) string {
	var n int
	fmt.Sscan(s, &n)
	return fmt.Sprint(n + 1)
}

func outlineOf(snapshot string) []string {
	_, body, _ := strings.Cut(snapshot, "```yaml\n")
	body, _, _ = strings.Cut(body, "\n```")
	return strings.Split(body, "\n")
}

func firstOutlineLine(snapshot string) string { return strings.TrimSpace(outlineOf(snapshot)[0]) }

func lastOutlineLine(snapshot string) string {
	l := outlineOf(snapshot)
	return strings.TrimSpace(l[len(l)-1])
}

// checkFullPageScreenshot: a full-page capture of a page much taller than
// 4000 px stops there, fits 2000 px a side and browser.maxImageBytes, and
// says so.
func checkFullPageScreenshot(t *testing.T, ctx context.Context, tools *browser.Tools) {
	t.Helper()
	var r struct {
		Content []struct{ Type, Text, Data, MimeType string }
		IsError bool
	}
	raw := tools.Call(ctx, "take_screenshot", json.RawMessage(`{"fullPage": true}`))
	if err := json.Unmarshal(raw, &r); err != nil || r.IsError || len(r.Content) != 2 {
		t.Fatalf("full-page screenshot: %.500s", raw)
	}
	img, err := base64.StdEncoding.DecodeString(r.Content[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil || len(img) > browser.DefaultMaxImageBytes || cfg.Width > 2000 || cfg.Height > 2000 {
		t.Errorf("full-page screenshot %s %dx%d, %d bytes (%v)", r.Content[0].MimeType, cfg.Width, cfg.Height, len(img), err)
	}
	if note := r.Content[1].Text; !strings.Contains(note, "captured its top 4000 px") || !strings.Contains(note, fmt.Sprintf("%dx%d", cfg.Width, cfg.Height)) {
		t.Errorf("the full-page screenshot's note: %q", note)
	}
	t.Logf("full-page screenshot of the long page: %s", r.Content[1].Text)
}

// checkChoices: browser_select_option takes the ref of a <select>, of one
// of its options, or of an ARIA listbox (whose option it clicks).
func checkChoices(t *testing.T, ctx context.Context, c *browser.Client, call func(string, any) string, lines []outlineLine) {
	t.Helper()
	refOf := func(role, name string) string {
		for _, l := range lines {
			if l.role == role && l.name == name && l.ref != "" {
				return l.ref
			}
		}
		t.Fatalf("choices: no %s %q with a ref", role, name)
		return ""
	}
	call("select_option", map[string]any{"ref": refOf("combobox", "Size"), "values": []string{"Large"}})
	call("select_option", map[string]any{"ref": refOf("option", "Japan"), "values": []string{"Japan"}})
	call("select_option", map[string]any{"ref": refOf("listbox", "Toppings"), "values": []string{"Olives", "Peppers"}})
	call("select_option", map[string]any{"ref": refOf("listbox", "Fruit"), "values": []string{"Banana"}})
	raw, err := c.Eval(ctx, `(() => { const p = top.__mcpxLastClick || [];
  return [size.value, country.value, [...toppings.selectedOptions].map((o) => o.value).join("+"), p[0] ? p[0].textContent : ""].join(); })()`)
	if err != nil || string(raw) != `"l,jp,Olives+Peppers,Banana"` {
		t.Errorf("after select_option the choices are %s (%v), want l,jp,Olives+Peppers,Banana", raw, err)
	}
	if _, err := c.Eval(ctx, "top.__mcpxLastClick = null"); err != nil {
		t.Fatal(err)
	}
}

// checkOverlay: a page under a cookie wall (a fixed overlay, no modal
// semantics, so Chromium still lists what is under it) says so at the top
// of the snapshot; a click under it is refused naming the overlay, and
// works once the overlay is accepted.
func checkOverlay(t *testing.T, call func(string, any) string, try func(string, any) (string, error), url string) {
	t.Helper()
	call("navigate", map[string]any{"url": url})
	snap := call("snapshot", map[string]any{})
	if !strings.Contains(snap, `An overlay covers the page (div#consent "Cookie consent")`) {
		t.Errorf("no note about the overlay:\n%s", snap)
	}
	ref := func(snap, name string) string {
		for _, l := range parseOutline(snap) {
			if l.role == "button" && l.name == name && l.ref != "" {
				return l.ref
			}
		}
		t.Fatalf("no button %q with a ref in:\n%s", name, snap)
		return ""
	}
	behind, accept := ref(snap, "Read more"), ref(snap, "Accept all")
	if _, err := try("click", map[string]any{"ref": behind}); err == nil || !strings.Contains(err.Error(), "covered by div#consent") {
		t.Errorf("a click under the overlay: %v", err)
	}
	call("click", map[string]any{"ref": accept})
	snap = call("snapshot", map[string]any{})
	if strings.Contains(snap, "An overlay covers") {
		t.Errorf("the overlay is gone, yet:\n%s", snap)
	}
	call("click", map[string]any{"ref": behind})
	if got := call("evaluate", map[string]any{"function": "() => behind.textContent"}); got != `"Clicked behind"` {
		t.Errorf("after accepting, the click under it left %s", got)
	}
}
