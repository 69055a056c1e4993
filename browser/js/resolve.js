// mcpx element resolver: finds an element by snapshot ref or CSS
// selector, checks that a user could act on it (not disabled, inert,
// aria-hidden, behind a modal or covered), scrolls it into view and
// returns a point on it in the top page's viewport CSS pixels (through
// same-origin frames), or an error a model can act on. The point hit-tests
// to the element itself, not to another target inside it (an expanded
// tree item's box holds its children): when there is none, it is the
// centre, and lands names what lies there. An <option> of a
// <select> has no place a mouse can reach: it answers {option: true} and
// the caller selects it instead. An element no mouse can reach (no area,
// off-screen, clipped away) answers {noArea: true}: the caller focuses and
// activates it through the page, as a keyboard user would.
(function (ref, selector) {
  let el = null;
  if (ref) {
    const reg = window[Symbol.for("mcpx.refs")];
    const w = reg && reg.byRef.get(ref);
    el = w && w.deref();
    if (!el || !el.isConnected) return { error: "ref " + ref + " not found: the page changed; take a new snapshot" };
  } else {
    try {
      el = document.querySelector(selector);
    } catch (e) {
      return { error: "invalid selector " + JSON.stringify(selector) + ": " + e.message };
    }
    if (!el) return { error: "no element matches selector " + JSON.stringify(selector) };
  }
  const what = ref ? "ref " + ref : "the element matching " + JSON.stringify(selector);
  const tag = el.localName;
  // parentOf walks the flat tree up: out of shadow roots and frames.
  const parentOf = (n) => {
    if (n.assignedSlot) return n.assignedSlot;
    if (n.parentNode && n.parentNode.nodeType === 11) return n.parentNode.host;
    if (n.parentNode && n.parentNode.nodeType === 9) return n.parentNode.defaultView.frameElement;
    return n.parentNode;
  };
  for (let n = el; n; n = parentOf(n)) {
    if (n.nodeType !== 1) continue;
    if (n.inert) return { error: what + " is inert (the page blocks it, e.g. behind a modal dialog): take a new snapshot" };
    // A ref is never given to aria-hidden content; one that became so
    // since the snapshot is stale. (A selector may still name it: a mouse
    // reaches what assistive technology is told to skip.)
    if (ref && n.getAttribute("aria-hidden") === "true") return { error: what + " is now hidden from users (aria-hidden): take a new snapshot" };
  }
  if (el.matches(":disabled")) return { error: what + " is disabled" };
  for (let n = el; n; n = parentOf(n)) {
    if (n.nodeType === 1 && n.getAttribute("aria-disabled") === "true") return { error: what + " is disabled (aria-disabled)" };
  }
  if (tag === "option" && el.closest("select")) return { option: true, tag };

  // Scroll it into view, then each frame it is in.
  el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  for (let w = el.ownerDocument.defaultView; w.frameElement; w = w.parent) {
    w.frameElement.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
  }
  const r = el.getBoundingClientRect();
  // clippedAway: an ancestor that clips its overflow shows none of it.
  const clippedAway = () => {
    let left = r.left, top = r.top, right = r.right, bottom = r.bottom;
    for (let n = parentOf(el); n && n.nodeType === 1 && n.ownerDocument === el.ownerDocument; n = parentOf(n)) {
      const cs = n.ownerDocument.defaultView.getComputedStyle(n);
      if (cs.overflowX === "visible" && cs.overflowY === "visible") continue;
      const a = n.getBoundingClientRect();
      left = Math.max(left, a.left); top = Math.max(top, a.top); right = Math.min(right, a.right); bottom = Math.min(bottom, a.bottom);
      if (right <= left || bottom <= top) return true;
    }
    return false;
  };
  if (r.width === 0 || r.height === 0 || clippedAway()) {
    // An empty link, a collapsed control, one its container clips away:
    // no mouse can hit it, but it still takes focus and activation
    // (keyboard users reach it).
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return { error: what + " is not visible" };
    return { noArea: true, tag };
  }
  const doc = el.ownerDocument;
  // hitAt finds the element under a point, through open shadow roots.
  const hitAt = (x, y) => {
    let hit = doc.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  // reaches: the hit is the element, inside it, its label, or an
  // ancestor (a shadow host or slot the hit test stopped at): nothing of
  // another element lies over the point.
  const reaches = (hit) => {
    for (let n = hit; n; n = parentOf(n)) {
      if (n === el) return true;
      if (n.localName === "label" && n.control === el) return true;
    }
    for (let n = parentOf(el); n; n = parentOf(n)) if (n === hit) return true;
    return false;
  };
  // A target of its own: an element the snapshot gave a ref, or a
  // control. A click that lands on one inside el (a child of an expanded
  // tree item, a button in a row) is that one's, not el's.
  const reg = window[Symbol.for("mcpx.refs")];
  const WIDGET = /^(button|link|textbox|searchbox|checkbox|radio|combobox|listbox|option|slider|spinbutton|switch|tab|menuitem|menuitemcheckbox|menuitemradio|treeitem|gridcell)$/;
  const isTarget = (n) => n.nodeType === 1 && ((reg && reg.byEl.has(n)) ||
    n.matches("a[href], button, input, select, textarea, summary") ||
    WIDGET.test((n.getAttribute("role") || "").trim().toLowerCase().split(/\s+/)[0]));
  // another: the target of its own inside el that hit belongs to, or null
  // when hit is el's (or el's label, or an ancestor the hit test stopped at).
  // The options of a native <select> are parts of it: clicking the list
  // clicks one, as a user would.
  const native = el.matches("select, textarea, input");
  const another = (hit) => {
    if (native) return null;
    let first = null;
    for (let n = hit; n; n = parentOf(n)) {
      if (n === el) return first;
      if (!first && isTarget(n)) first = n;
    }
    return null;
  };
  // ownText: el's first text that is not inside another target (a tree
  // item's own label, not its children's).
  const ownText = (n) => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3 && c.data.trim()) return c;
      if (c.nodeType === 1 && !isTarget(c)) {
        const t = ownText(c);
        if (t) return t;
      }
    }
    return null;
  };
  const describe = (n) => {
    const role = n.getAttribute("role");
    const name = (n.getAttribute("aria-label") || n.textContent || "").replace(/\s+/g, " ").trim();
    const ref = reg && reg.byEl.get(n);
    return n.localName + (role ? "[role=" + role + "]" : "") + (name ? " " + JSON.stringify(name.length > 40 ? name.slice(0, 39) + "…" : name) : "") +
      (ref ? " [ref=" + ref + "]" : "");
  };
  // Candidate points, as a careful driver tries them: the centre of each
  // box the element is laid out in (a link that wraps has one per line,
  // and the centre of their union may be blank); the centre of each line
  // of its own text; then a grid over its box, which finds the free parts
  // between its children, and a part a badge or a sticky bar leaves.
  const points = [];
  const centres = (boxes) => {
    for (const b of [...boxes].slice(0, 4)) {
      if (b.width > 0 && b.height > 0) points.push([b.left + b.width / 2, b.top + b.height / 2]);
    }
  };
  centres(el.getClientRects());
  const text = ownText(el);
  if (text) {
    const range = doc.createRange();
    range.selectNodeContents(text);
    centres(range.getClientRects());
  }
  const grid = [0.5, 0.25, 0.75, 0.1, 0.9];
  for (const fy of grid) for (const fx of grid) points.push([r.left + r.width * fx, r.top + r.height * fy]);
  const view = doc.defaultView;
  // A point is taken when its hit test finds el itself, something of its
  // own inside it, or its label. onto keeps the first point that found el
  // only through another target inside it.
  let x = 0, y = 0, hit = null, ok = false, seen = false, onto = null;
  for (const [px, py] of points) {
    if (px < 0 || py < 0 || px >= view.innerWidth || py >= view.innerHeight) continue;
    seen = true;
    hit = hitAt(px, py);
    if (!hit || !reaches(hit)) continue;
    const other = another(hit);
    if (!other) {
      x = px;
      y = py;
      ok = true;
      break;
    }
    if (!onto) onto = { x: px, y: py, other };
  }
  // No point of its own is free (its children cover it all): click its
  // centre, or where it was found, and say what lies there.
  let lands = "";
  if (!ok && onto) {
    x = Math.min(Math.max(r.left + r.width / 2, 0), view.innerWidth - 1);
    y = Math.min(Math.max(r.top + r.height / 2, 0), view.innerHeight - 1);
    hit = hitAt(x, y);
    let other = hit && reaches(hit) ? another(hit) : null;
    if (!hit || !reaches(hit)) {
      ({ x, y, other } = onto);
    }
    ok = true;
    lands = other ? describe(other) : "";
  }
  // Off-screen (a skip link at left: -9999px) or clipped to nothing (a
  // screen-reader-only control): no mouse reaches it, but it takes focus
  // and activation.
  const clipped = () => {
    let n = el;
    for (let i = 0; i < 4 && n && n.nodeType === 1; i++, n = parentOf(n)) {
      const cs = view.getComputedStyle(n);
      if ((cs.clip && cs.clip !== "auto") || (cs.clipPath && cs.clipPath !== "none")) return true;
    }
    return r.width * r.height <= 4;
  };
  if (!ok && (!seen || clipped())) return { noArea: true, tag };
  if (!ok && el.ownerDocument.defaultView.getComputedStyle(el).pointerEvents === "none") {
    return { error: what + " ignores the mouse (pointer-events: none): the page treats it as disabled" };
  }
  if (!ok) {
    x = Math.min(Math.max(r.left + r.width / 2, 0), view.innerWidth - 1);
    y = Math.min(Math.max(r.top + r.height / 2, 0), view.innerHeight - 1);
    hit = hitAt(x, y) || doc.documentElement;
    const by = hit.localName + (hit.id ? "#" + hit.id : "") + (hit.getAttribute("role") ? "[role=" + hit.getAttribute("role") + "]" : "");
    return { error: what + " is covered by " + by + " (a dialog, overlay or banner is in the way): close it or take a new snapshot" };
  }
  // Into the top page's coordinates.
  for (let w = doc.defaultView; w.frameElement; w = w.parent) {
    const f = w.frameElement;
    const fr = f.getBoundingClientRect();
    const cs = w.parent.getComputedStyle(f);
    x += fr.left + f.clientLeft + parseFloat(cs.paddingLeft);
    y += fr.top + f.clientTop + parseFloat(cs.paddingTop);
  }
  return { x, y, tag, lands };
})
