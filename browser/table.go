package browser

// spec is one browser tool: its MCP description and its implementation.
type spec struct {
	name, title, desc string
	props             map[string]any
	required          []string
	readOnly          bool
	run               runFunc
}

func (s spec) schema() map[string]any {
	props := s.props
	if props == nil {
		props = map[string]any{}
	}
	m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(s.required) > 0 {
		m["required"] = s.required
	}
	return m
}

func (s spec) annotations() map[string]any {
	return map[string]any{"title": s.title, "readOnlyHint": s.readOnly, "destructiveHint": false, "openWorldHint": true}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func num(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }
func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

var targetProps = map[string]any{
	"ref":      str("Element ref from the last browser_snapshot, e.g. \"e5\""),
	"selector": str("CSS selector, when there is no ref"),
	"element":  str("Human-readable description of the element, for the record"),
}

func with(base map[string]any, more map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

var toolTable = []spec{
	{name: "tabs", title: "Browser tabs", desc: "List, open, select or close tabs. A new or selected tab becomes the one the other browser tools act on.",
		props: map[string]any{
			"action":   map[string]any{"type": "string", "enum": []string{"list", "new", "select", "close"}, "description": "What to do"},
			"index":    num("Tab index from the list (select, close)"),
			"url":      str("URL to open (new); without one the tab is blank, which some extensions refuse to drive"),
			"activate": boolean("Bring the tab to the front (new, select)"),
			"stealth":  boolean("Ask the extension not to show automation UI"),
		}, required: []string{"action"}, run: runTabs},
	{name: "navigate", title: "Navigate", desc: "Open a URL in the current tab (in a new tab when there is none yet) and wait for it to load.",
		props: map[string]any{"url": str("The URL to open")}, required: []string{"url"}, run: runNavigate},
	{name: "navigate_back", title: "Go back", desc: "Go back in the current tab's history.", run: runHistory("history.back()")},
	{name: "navigate_forward", title: "Go forward", desc: "Go forward in the current tab's history.", run: runHistory("history.forward()")},
	{name: "reload", title: "Reload", desc: "Reload the current tab.", run: runReload},
	{name: "snapshot", title: "Page snapshot", readOnly: true,
		desc: "Capture an outline of the current page (roles, names, values) with a [ref=eN] on each element you can act on: disabled, inert, hidden and modal-blocked elements get none. Options of selects, listboxes, menus and trees are listed under their control. Use the refs with browser_click, browser_type, browser_hover, browser_select_option. Prefer this to a screenshot for deciding what to do. A long outline is cut; the note at its end says how to get the rest (offset, or ref/selector to scope it to part of the page).",
		props: map[string]any{
			"ref":      str("Outline only this element and its contents: a ref from an earlier snapshot"),
			"selector": str("Outline only the element this CSS selector matches and its contents"),
			"offset":   map[string]any{"type": "integer", "minimum": 0, "description": "Start at this line of the outline (the note on a cut outline gives it)"},
		},
		run: runSnapshot},
	{name: "click", title: "Click", desc: "Click an element, by ref from browser_snapshot or by CSS selector.",
		props: with(targetProps, map[string]any{
			"button":      map[string]any{"type": "string", "enum": []string{"left", "right", "middle"}},
			"doubleClick": boolean("Double-click"),
		}), run: runClick},
	{name: "hover", title: "Hover", desc: "Move the mouse over an element, by ref or CSS selector.", props: targetProps, run: runHover},
	{name: "type", title: "Type text", desc: "Type text into an editable element (by ref or CSS selector), replacing its value. submit presses Enter afterwards; slowly types key by key (for pages that listen to keys).",
		props: with(targetProps, map[string]any{
			"text": str("Text to type"), "submit": boolean("Press Enter after typing"), "slowly": boolean("Type one key at a time"),
		}), required: []string{"text"}, run: runType},
	{name: "press_key", title: "Press a key", desc: "Press a key or combination in the page, e.g. \"Enter\", \"ArrowDown\", \"Control+A\".",
		props: map[string]any{"key": str("Key name or character, with modifiers joined by +")}, required: []string{"key"}, run: runPressKey},
	{name: "select_option", title: "Select option", desc: "Select options in a <select> or an ARIA listbox, by value or visible text; the ref may be the control's or one of its options'.",
		props:    with(targetProps, map[string]any{"values": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}),
		required: []string{"values"}, run: runSelectOption},
	{name: "wait_for", title: "Wait", desc: "Wait until text appears or disappears on the page, or for a number of seconds.",
		props: map[string]any{"text": str("Text to wait for"), "textGone": str("Text to wait to disappear"), "time": num("Seconds to wait (at most 60)")},
		run:   runWaitFor},
	{name: "evaluate", title: "Evaluate JavaScript", desc: "Run a JavaScript function in the page and return its result as JSON, e.g. \"() => document.title\". With ref or selector, the function receives the element.",
		props:    with(targetProps, map[string]any{"function": str("A JavaScript function, e.g. () => document.title or (el) => el.textContent")}),
		required: []string{"function"}, run: runEvaluate},
	{name: "take_screenshot", title: "Screenshot", readOnly: true, desc: "Take a screenshot of the current tab (the viewport, an element, or the full page). Images over 2000 px a side or over the size limit are scaled down and sent as JPEG; a very tall full page is cut. The text part says what was done.",
		props: with(targetProps, map[string]any{
			"type":     map[string]any{"type": "string", "enum": []string{"png", "jpeg"}, "description": "Image format (default png)"},
			"fullPage": boolean("Capture the whole scrollable page"),
		}), run: runScreenshot},
	{name: "resize", title: "Resize", desc: "Resize the page's viewport.",
		props: map[string]any{"width": num("Width in CSS pixels"), "height": num("Height in CSS pixels")}, required: []string{"width", "height"}, run: runResize},
	{name: "console_messages", title: "Console messages", readOnly: true, desc: "Return the console messages the extension collected for the current tab (the most recent ones when there are too many to show; the total is given).", run: runConsole},
	{name: "list", title: "List browsers", readOnly: true, desc: "List the browsers connected to the relay (right after start, waiting a few seconds for one to connect).", run: runList},
	{name: "connect", title: "Connect browser", desc: "Switch to another connected browser, by id or name from browser_list.",
		props: map[string]any{"id": str("Extension id or name")}, required: []string{"id"}, run: runConnect},
	{name: "cdp", title: "Raw CDP command", desc: "Send a raw Chrome DevTools Protocol command to the current tab and return its JSON result.",
		props:    map[string]any{"method": str("CDP method, e.g. Page.getLayoutMetrics"), "params": map[string]any{"type": "object"}},
		required: []string{"method"}, run: runCDP},
}
