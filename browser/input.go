package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// mouseClick sends a trusted click (moved, pressed, released) at x, y.
func mouseClick(ctx context.Context, c *Client, x, y float64, button string, double bool) error {
	if button == "" {
		button = "left"
	}
	if _, err := c.CDP(ctx, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": x, "y": y}); err != nil {
		return err
	}
	clicks := 1
	if double {
		clicks = 2
	}
	for n := 1; n <= clicks; n++ {
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			if _, err := c.CDP(ctx, "Input.dispatchMouseEvent", map[string]any{
				"type": typ, "x": x, "y": y, "button": button, "clickCount": n,
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeInto replaces an editable element's text. By default it sets the
// value the way a framework expects (native setter, then input and change
// events); slowly types each character as key events.
func typeInto(ctx context.Context, c *Client, tg target, text string, slowly bool) error {
	txt, _ := json.Marshal(text)
	fill := "true"
	if slowly {
		fill = "false"
	}
	var r struct{ Error string }
	expr := fmt.Sprintf(`(() => { const el = %s; if (el.error) return el; const text = %s, fill = %s;
  const W = el.ownerDocument.defaultView; // the element's frame: its own HTMLInputElement
  for (let n = el; n; n = n.parentNode || n.host) if (n.inert) return {error: "the element is inert (behind a modal dialog or blocked by the page)"};
  if (el.matches(":disabled") || el.getAttribute("aria-disabled") === "true") return {error: "the element (" + el.localName + ") is disabled"};
  el.scrollIntoView({block: "center"}); el.focus();
  if (el.isContentEditable) { if (fill) { el.innerText = text; el.dispatchEvent(new W.InputEvent("input", {bubbles: true, inputType: "insertText", data: text})); } else { el.innerText = ""; } return {}; }
  if (!("value" in el) || !/^(input|textarea|select)$/.test(el.localName)) return {error: "the element (" + el.localName + ") is not an editable field"};
  if (el.readOnly) return {error: "the field is read-only"};
  const proto = el instanceof W.HTMLTextAreaElement ? W.HTMLTextAreaElement.prototype : el instanceof W.HTMLSelectElement ? W.HTMLSelectElement.prototype : W.HTMLInputElement.prototype;
  const set = Object.getOwnPropertyDescriptor(proto, "value").set;
  set.call(el, fill ? text : "");
  el.dispatchEvent(new Event("input", {bubbles: true}));
  if (fill) el.dispatchEvent(new Event("change", {bubbles: true}));
  return {}; })()`, elementExpr(tg), txt, fill)
	if err := c.evalInto(ctx, expr, &r); err != nil {
		return err
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	if !slowly {
		return nil
	}
	for _, ch := range text {
		k := keyFor(string(ch))
		if err := sendKey(ctx, c, k, 0); err != nil {
			return err
		}
	}
	return nil
}

// key is what Input.dispatchKeyEvent needs for one key.
type key struct {
	key, code string
	vk        int
	text      string
}

var namedKeys = map[string]key{
	"enter":      {"Enter", "Enter", 13, "\r"},
	"tab":        {"Tab", "Tab", 9, ""},
	"escape":     {"Escape", "Escape", 27, ""},
	"esc":        {"Escape", "Escape", 27, ""},
	"backspace":  {"Backspace", "Backspace", 8, ""},
	"delete":     {"Delete", "Delete", 46, ""},
	"space":      {" ", "Space", 32, " "},
	"arrowup":    {"ArrowUp", "ArrowUp", 38, ""},
	"arrowdown":  {"ArrowDown", "ArrowDown", 40, ""},
	"arrowleft":  {"ArrowLeft", "ArrowLeft", 37, ""},
	"arrowright": {"ArrowRight", "ArrowRight", 39, ""},
	"home":       {"Home", "Home", 36, ""},
	"end":        {"End", "End", 35, ""},
	"pageup":     {"PageUp", "PageUp", 33, ""},
	"pagedown":   {"PageDown", "PageDown", 34, ""},
	"insert":     {"Insert", "Insert", 45, ""},
}

// modifier bits of Input.dispatchKeyEvent.
var modifiers = map[string]int{"alt": 1, "control": 2, "ctrl": 2, "meta": 4, "cmd": 4, "command": 4, "shift": 8}

// keyFor maps a key name or a single character.
func keyFor(name string) key {
	if k, ok := namedKeys[strings.ToLower(name)]; ok {
		return k
	}
	if len(name) >= 2 && (name[0] == 'F' || name[0] == 'f') {
		var n int
		if _, err := fmt.Sscanf(name[1:], "%d", &n); err == nil && n >= 1 && n <= 12 {
			return key{key: "F" + name[1:], code: "F" + name[1:], vk: 111 + n}
		}
	}
	k := key{key: name, text: name}
	if utf8.RuneCountInString(name) == 1 {
		r, _ := utf8.DecodeRuneInString(name)
		switch {
		case r >= 'a' && r <= 'z':
			k.code, k.vk = "Key"+strings.ToUpper(name), int(r-'a'+'A')
		case r >= 'A' && r <= 'Z':
			k.code, k.vk = "Key"+name, int(r)
		case r >= '0' && r <= '9':
			k.code, k.vk = "Digit"+name, int(r)
		}
	}
	return k
}

// pressKey presses a key or a combination such as "Control+A".
func pressKey(ctx context.Context, c *Client, combo string) error {
	if combo == "" {
		return errors.New("key is required, e.g. Enter or Control+A")
	}
	parts := strings.Split(combo, "+")
	if combo != "+" && strings.HasSuffix(combo, "+") {
		parts = append(parts[:len(parts)-2], "+") // "Control++"
	}
	mods := 0
	for _, m := range parts[:len(parts)-1] {
		bit, ok := modifiers[strings.ToLower(strings.TrimSpace(m))]
		if !ok {
			return fmt.Errorf("unknown modifier %q in %q (want Control, Alt, Shift or Meta)", m, combo)
		}
		mods |= bit
	}
	name := parts[len(parts)-1]
	if name == "" {
		name = "+"
	}
	k := keyFor(name)
	if utf8.RuneCountInString(k.key) > 1 && k.code == "" {
		return fmt.Errorf("unknown key %q", name)
	}
	return sendKey(ctx, c, k, mods)
}

func sendKey(ctx context.Context, c *Client, k key, mods int) error {
	down := map[string]any{"type": "keyDown", "key": k.key, "code": k.code, "windowsVirtualKeyCode": k.vk, "modifiers": mods}
	// Text is typed only without Control/Alt/Meta: Control+A selects.
	if k.text != "" && mods&^8 == 0 {
		down["text"] = k.text
	}
	if _, err := c.CDP(ctx, "Input.dispatchKeyEvent", down); err != nil {
		return err
	}
	_, err := c.CDP(ctx, "Input.dispatchKeyEvent", map[string]any{
		"type": "keyUp", "key": k.key, "code": k.code, "windowsVirtualKeyCode": k.vk, "modifiers": mods,
	})
	return err
}
