package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

func runSelectOption(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		target
		Values []string `json:"values"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := a.target.check(); err != nil {
		return nil, err
	}
	if len(a.Values) == 0 {
		return nil, errors.New("values is required: the options' values or visible texts")
	}
	picked, err := selectOptions(ctx, t.c, a.target, a.Values)
	if err != nil {
		return nil, err
	}
	return textResult("Selected %s.", strings.Join(picked, ", ")), nil
}

// selectOptions picks options of the target: a <select> (the options
// whose value or text is in values), one of its <option>s (that option,
// values nil), or an ARIA listbox, combobox, menu or tree (a real click on
// each matching option, as a user would). It returns what was picked.
func selectOptions(ctx context.Context, c *Client, tg target, values []string) ([]string, error) {
	vals, _ := json.Marshal(values)
	var r struct {
		Selected []string
		Click    []string // refs of ARIA options to click
		Error    string
	}
	expr := fmt.Sprintf(`(() => { const el = %s; if (el.error) return el; const vals = %s;
  const text = (n) => (n.label || n.textContent || "").replace(/\s+/g, " ").trim();
  const wants = (o) => vals.includes(o.value) || vals.includes(text(o)) || vals.includes(o.getAttribute("data-value") || "\u0000");
  const fire = (s) => { s.dispatchEvent(new Event("input", {bubbles: true})); s.dispatchEvent(new Event("change", {bubbles: true})); };
  if (el.localName === "option" && el.closest("select")) {
    const s = el.closest("select");
    if (el.disabled || s.disabled || s.matches(":disabled")) return {error: "the option is disabled"};
    if (s.multiple) for (const o of s.options) o.selected = o === el; else el.selected = true; // a plain click in a list selects only that option
    fire(s); return {Selected: [text(el)]};
  }
  if (el.localName === "select") {
    if (el.matches(":disabled")) return {error: "the select is disabled"};
    const picked = [];
    for (const o of el.options) { const on = wants(o) && !o.disabled && (el.multiple || picked.length === 0); o.selected = on; if (on) picked.push(text(o)); }
    if (picked.length) fire(el);
    return {Selected: picked};
  }
  // An ARIA widget: its options, or those of the popup it controls.
  const reg = window[Symbol.for("mcpx.refs")] || (window[Symbol.for("mcpx.refs")] = {n: 0, byRef: new Map(), byEl: new WeakMap()});
  const refOf = (n) => { let r = reg.byEl.get(n); if (!r) { r = "e" + ++reg.n; reg.byEl.set(n, r); reg.byRef.set(r, new WeakRef(n)); } return r; };
  const roots = [el];
  for (const id of ((el.getAttribute("aria-controls") || "") + " " + (el.getAttribute("aria-owns") || "")).split(/\s+/)) {
    const n = id && el.getRootNode().getElementById(id); if (n) roots.push(n);
  }
  const opts = [];
  for (const root of roots) for (const o of root.querySelectorAll('[role=option], [role=menuitem], [role=menuitemcheckbox], [role=menuitemradio], [role=treeitem], [role=tab]')) opts.push(o);
  if (!opts.length) return {error: "the element (" + el.localName + (el.getAttribute("role") ? " role=" + el.getAttribute("role") : "") + ") is not a select and has no options"};
  const hit = opts.filter((o) => vals.includes(text(o)) || vals.includes(o.getAttribute("data-value") || "\u0000") || vals.includes(o.id));
  return {Click: hit.map(refOf), Selected: hit.map(text)}; })()`, elementExpr(tg), vals)
	if err := c.evalInto(ctx, expr, &r); err != nil {
		return nil, err
	}
	if r.Error != "" {
		return nil, errors.New(r.Error)
	}
	for _, ref := range r.Click {
		at, err := locate(ctx, c, target{Ref: ref})
		if err != nil {
			return nil, err
		}
		if err := mouseClick(ctx, c, at.X, at.Y, "left", false); err != nil {
			return nil, err
		}
	}
	if len(r.Selected) == 0 {
		return nil, fmt.Errorf("no option matches %q", values)
	}
	return r.Selected, nil
}
