package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcpx/mcpx/browser"
)

// This file reads the ground truth the snapshot is measured against:
// Chromium's own accessibility tree (Accessibility.getFullAXTree over raw
// CDP, through the test extension's chrome.debugger), mapped to DOM
// elements by backend node id. Only the test calls these methods; the
// snapshot itself is one Runtime.evaluate.

// axNode is one node of Accessibility.getFullAXTree.
type axNode struct {
	NodeID  string `json:"nodeId"`
	Ignored bool   `json:"ignored"`
	Role    *struct {
		Value string `json:"value"`
	} `json:"role"`
	Name *struct {
		Value string `json:"value"`
	} `json:"name"`
	Properties []struct {
		Name  string `json:"name"`
		Value struct {
			Value json.RawMessage `json:"value"`
		} `json:"value"`
	} `json:"properties"`
	BackendDOMNodeID int    `json:"backendDOMNodeId"`
	FrameID          string `json:"frameId"`
	ParentID         string `json:"parentId"`
}

func (n axNode) role() string {
	if n.Role == nil {
		return ""
	}
	return n.Role.Value
}

func (n axNode) name() string {
	if n.Name == nil {
		return ""
	}
	return collapse(n.Name.Value)
}

func (n axNode) prop(name string) string {
	for _, p := range n.Properties {
		if p.Name == name {
			return strings.Trim(string(p.Value.Value), `"`)
		}
	}
	return ""
}

// axWidgetRoles are the roles of things a user acts on, as Chromium names
// them (its internal names where it has no ARIA one: MenuListOption is an
// option of a drop-down <select>, DisclosureTriangle a <summary>).
var axWidgetRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "MenuListOption": true, "slider": true,
	"spinbutton": true, "switch": true, "tab": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "treeitem": true, "DisclosureTriangle": true, "ColorWell": true,
	"Date": true, "DateTime": true, "InputTime": true, "gridcell": true,
}

// axRoleAlias maps Chromium's internal role names to the ARIA role the
// outline prints for the same thing.
var axRoleAlias = map[string]string{
	"MenuListOption":     "option",
	"DisclosureTriangle": "button",
	"ColorWell":          "button",
	"Date":               "textbox",
	"DateTime":           "textbox",
	"InputTime":          "textbox",
}

// outlineRole is the role the outline should print for n. Besides the
// aliases, Chromium exposes the root of a contenteditable region as the
// element's own role (generic, paragraph) with an "editable" property:
// the outline calls it a textbox, which is what a model needs to know.
func outlineRole(n axNode) string {
	if r, ok := axRoleAlias[n.role()]; ok {
		return r
	}
	if (n.role() == "generic" || n.role() == "paragraph") && n.prop("editable") != "" && n.prop("focusable") == "true" {
		return "textbox"
	}
	return n.role()
}

// actionable says whether a user can act on the node: a widget role or
// keyboard focus (tabindex="-1" on anything else is focus for scripts, a
// skip link's target, not a control), not ignored (inert, aria-hidden,
// behind a modal) and not disabled.
func (g *groundTruth) actionable(n axNode) bool {
	if n.Ignored || n.BackendDOMNodeID == 0 || n.prop("disabled") == "true" {
		return false
	}
	switch n.role() {
	case "RootWebArea", "WebArea", "Iframe", "IframePresentational", "none", "presentation", "",
		"dialog", "alertdialog": // focusable only to receive focus when shown, not targets
		return false
	}
	return axWidgetRoles[n.role()] || n.prop("focusable") == "true" && !g.scriptFocusOnly[n.BackendDOMNodeID]
}

// groundTruth is what Chromium says about one page.
type groundTruth struct {
	nodes []axNode       // every node of every frame in this renderer
	refOf map[int]string // backend node id -> the ref the outline gave it
	inUA  map[int]bool   // backend node ids inside user-agent shadow roots
	// scriptFocusOnly: backend node ids with tabindex="-1"
	scriptFocusOnly map[int]bool
	frames          int
}

// blockedByAriaModal lists the nodes outside an open aria-modal dialog.
// Chromium leaves them in its tree; the rule (and the user, who
// cannot reach them past the dialog) says they are not actionable, so the
// measure counts them as such.
func (g *groundTruth) blockedByAriaModal() map[string]bool {
	byID := map[string]axNode{}
	var modals []string
	for _, n := range g.nodes {
		byID[n.NodeID] = n
		if !n.Ignored && (n.role() == "dialog" || n.role() == "alertdialog") && n.prop("modal") == "true" {
			modals = append(modals, n.NodeID)
		}
	}
	blocked := map[string]bool{}
	if len(modals) == 0 {
		return blocked
	}
	for _, n := range g.nodes {
		inside := false
		for p := n; ; {
			if slicesContains(modals, p.NodeID) {
				inside = true
				break
			}
			next, ok := byID[p.ParentID]
			if !ok {
				break
			}
			p = next
		}
		if !inside {
			blocked[n.NodeID] = true
		}
	}
	return blocked
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readGroundTruth stamps every element the snapshot gave a ref with a
// data-mcpx-ref attribute (so that DOM.getDocument maps backend node ids to
// refs), then reads the AX tree of every frame it can.
func readGroundTruth(ctx context.Context, c *browser.Client) (*groundTruth, error) {
	const stamp = `(() => { const reg = window[Symbol.for("mcpx.refs")]; let n = 0;
  if (reg) for (const [r, w] of reg.byRef) { const el = w.deref(); if (el && el.isConnected) { el.setAttribute("data-mcpx-ref", r); n++; } }
  return n; })()`
	if _, err := c.Eval(ctx, stamp); err != nil {
		return nil, fmt.Errorf("stamp refs: %w", err)
	}
	g := &groundTruth{refOf: map[int]string{}, inUA: map[int]bool{}, scriptFocusOnly: map[int]bool{}}
	raw, err := c.CDP(ctx, "DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
	if err != nil {
		return nil, err
	}
	var doc struct{ Root domNode }
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var visit func(n *domNode, ua bool)
	visit = func(n *domNode, ua bool) {
		ua = ua || n.ShadowRootType == "user-agent"
		if ua {
			g.inUA[n.BackendNodeID] = true
		}
		for i := 0; i+1 < len(n.Attributes); i += 2 {
			switch n.Attributes[i] {
			case "data-mcpx-ref":
				g.refOf[n.BackendNodeID] = n.Attributes[i+1]
			case "tabindex":
				g.scriptFocusOnly[n.BackendNodeID] = strings.TrimSpace(n.Attributes[i+1]) == "-1"
			}
		}
		for i := range n.Children {
			visit(&n.Children[i], ua)
		}
		for i := range n.ShadowRoots {
			visit(&n.ShadowRoots[i], ua)
		}
		if n.ContentDocument != nil {
			visit(n.ContentDocument, false)
		}
	}
	visit(&doc.Root, false)

	raw, err = c.CDP(ctx, "Page.getFrameTree", nil)
	if err != nil {
		return nil, err
	}
	var ft struct{ FrameTree frameTree }
	if err := json.Unmarshal(raw, &ft); err != nil {
		return nil, err
	}
	var frames []string
	var collect func(f frameTree)
	collect = func(f frameTree) {
		frames = append(frames, f.Frame.ID)
		for _, ch := range f.ChildFrames {
			collect(ch)
		}
	}
	collect(ft.FrameTree)
	for _, id := range frames {
		raw, err := c.CDP(ctx, "Accessibility.getFullAXTree", map[string]any{"frameId": id})
		if err != nil {
			continue // an out-of-process (cross-site) frame: not this renderer's
		}
		var r struct{ Nodes []axNode }
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		g.frames++
		g.nodes = append(g.nodes, r.Nodes...)
	}
	return g, nil
}

type domNode struct {
	BackendNodeID   int       `json:"backendNodeId"`
	ShadowRootType  string    `json:"shadowRootType"`
	Attributes      []string  `json:"attributes"`
	Children        []domNode `json:"children"`
	ShadowRoots     []domNode `json:"shadowRoots"`
	ContentDocument *domNode  `json:"contentDocument"`
}

type frameTree struct {
	Frame struct {
		ID string `json:"id"`
	} `json:"frame"`
	ChildFrames []frameTree `json:"childFrames"`
}

// outlineLine is one line of a snapshot that carries a ref.
type outlineLine struct {
	role, name, ref string
	disabled        bool
	text            string
}

var lineRE = regexp.MustCompile(`^\s*- ([A-Za-z]+)(?: ("(?:[^"\\]|\\.)*"))?((?: \[[^\]]+\])*)`)
var refRE = regexp.MustCompile(`\[ref=(e\d+)\]`)

// parseOutline returns the lines of a snapshot's outline that describe an
// element, refs or not.
func parseOutline(text string) []outlineLine {
	var out []outlineLine
	for _, l := range strings.Split(text, "\n") {
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ol := outlineLine{role: m[1], text: strings.TrimSpace(l)}
		if m[2] != "" {
			_ = json.Unmarshal([]byte(m[2]), &ol.name)
		}
		if r := refRE.FindStringSubmatch(m[3]); r != nil {
			ol.ref = r[1]
		}
		ol.disabled = strings.Contains(m[3], "[disabled]")
		out = append(out, ol)
	}
	return out
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// dumpAX renders the non-ignored AX nodes, for a failure message.
func dumpAX(g *groundTruth) string {
	var b strings.Builder
	for _, n := range g.nodes {
		if n.Ignored || n.role() == "StaticText" || n.role() == "InlineTextBox" {
			continue
		}
		fmt.Fprintf(&b, "%s %q", n.role(), n.name())
		if g.actionable(n) {
			b.WriteString(" *")
		}
		if r := g.refOf[n.BackendDOMNodeID]; r != "" {
			b.WriteString(" ref=" + r)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
