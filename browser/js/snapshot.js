// mcpx page walker: returns an ARIA outline of the page, one line per
// meaningful element, each element a user can act on with a ref
// ("[ref=e5]") that stays the same for the same element across snapshots
// of the document. Refs live in a page-global registry, not in DOM
// attributes.
//
// It follows what Chromium's accessibility tree shows: roles as Chromium
// computes them, accessible names per the accname spec (aria-labelledby,
// aria-label, <label>, alt, legend, contents, title, placeholder) across
// open shadow roots and slots; nothing inert, aria-hidden, hidden, or
// behind a modal dialog; disabled controls marked but given no ref. It
// walks the flat tree (shadow roots, slotted content) and same-origin
// frames; a cross-origin frame is named. It runs as one Runtime.evaluate:
// extensions that allow only a few CDP methods run it too.
//
// opts: {maxChars, offset, ref, selector}. The walk always covers the
// whole scope (so refs are stable); the text returned is the window of
// lines from offset that fits in maxChars.
(function (opts) {
  opts = opts || {};
  const KEY = Symbol.for("mcpx.refs");
  const reg = window[KEY] || (window[KEY] = { n: 0, byRef: new Map(), byEl: new WeakMap() });
  const refOf = (el) => {
    let r = reg.byEl.get(el);
    if (!r) {
      r = "e" + ++reg.n;
      reg.byEl.set(el, r);
      reg.byRef.set(r, new WeakRef(el));
    }
    return r;
  };

  const collapse = (s) => (s || "").replace(/[\s\u200b]+/g, " ").trim();
  const clip = (s, n) => {
    s = collapse(s);
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  };
  const quote = (s) => JSON.stringify(s);

  // ---- roles ----

  const WIDGET = new Set(["button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
    "option", "slider", "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio",
    "treeitem", "gridcell", "scrollbar"]);
  // Widgets whose contents are more widgets: walked into.
  const COMPOSITE = new Set(["listbox", "treeitem", "gridcell"]);
  const KNOWN = new Set([...WIDGET, "alert", "alertdialog", "application", "article", "banner", "blockquote",
    "caption", "cell", "code", "columnheader", "complementary", "contentinfo", "definition", "deletion",
    "dialog", "directory", "document", "emphasis", "feed", "figure", "form", "generic", "grid", "group",
    "heading", "img", "image", "insertion", "list", "listitem", "log", "main", "mark", "marquee", "math",
    "menu", "menubar", "meter", "navigation", "none", "note", "paragraph", "presentation", "progressbar",
    "radiogroup", "region", "row", "rowgroup", "rowheader", "search", "searchbox", "separator", "status",
    "strong", "subscript", "superscript", "table", "tablist", "tabpanel", "term", "time", "timer",
    "toolbar", "tooltip", "tree", "treegrid", "video", "audio"]);
  // Roles whose name comes from their contents when nothing else names them.
  const FROM_CONTENT = new Set(["button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link",
    "menuitem", "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch", "tab",
    "tooltip", "treeitem", "caption", "term", "code", "emphasis", "strong", "deletion", "insertion",
    "subscript", "superscript", "mark", "time"]);
  // Roles that are not printed as a line: their children are.
  const NOLINE = new Set(["generic", "none", "presentation", "rowgroup", "code", "emphasis", "strong",
    "deletion", "insertion", "subscript", "superscript", "mark", "time", "term", "definition", "caption"]);

  const LANDMARK_SCOPE = "article, aside, main, nav, section";
  const inputRole = (el) => {
    const t = (el.getAttribute("type") || "text").toLowerCase();
    switch (t) {
      case "button": case "submit": case "reset": case "image": case "color": case "file": return "button";
      case "checkbox": return "checkbox";
      case "radio": return "radio";
      case "range": return "slider";
      case "number": return "spinbutton";
      case "hidden": return "";
      case "search": return el.hasAttribute("list") ? "combobox" : "searchbox";
      case "date": case "time": case "datetime-local": case "month": case "week": return "textbox";
      default: return el.hasAttribute("list") ? "combobox" : "textbox";
    }
  };
  const implicitRole = (el) => {
    switch (el.localName) {
      case "a": case "area": return el.hasAttribute("href") ? "link" : "generic";
      case "button": return "button";
      case "input": return inputRole(el);
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "option": return "option";
      case "optgroup": return "group";
      case "img": return el.getAttribute("alt") === "" && !el.hasAttribute("title") && !el.hasAttribute("aria-label") ? "none" : "img";
      case "svg": return "img";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      case "ul": case "ol": case "menu": return "list";
      case "li": return el.parentElement && /^(ul|ol|menu)$/.test(el.parentElement.localName) ? "listitem" : "generic";
      case "nav": return "navigation";
      case "main": return "main";
      case "header": return el.parentElement && el.parentElement.closest(LANDMARK_SCOPE) ? "generic" : "banner";
      case "footer": return el.parentElement && el.parentElement.closest(LANDMARK_SCOPE) ? "generic" : "contentinfo";
      case "aside": return "complementary";
      case "form": return "form";
      case "search": return "search";
      case "section": return el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby") || el.hasAttribute("title") ? "region" : "generic";
      case "article": return "article";
      case "dialog": return "dialog";
      case "table": return "table";
      case "thead": case "tbody": case "tfoot": return "rowgroup";
      case "tr": return "row";
      case "th": return el.closest("thead") || el.getAttribute("scope") === "col" ? "columnheader" : (el.getAttribute("scope") === "row" ? "rowheader" : "columnheader");
      case "td": return el.closest("table") && /^(grid|treegrid)$/.test(el.closest("table").getAttribute("role") || "") ? "gridcell" : "cell";
      case "p": return "paragraph";
      case "summary": return summaryOf(el.parentElement) === el ? "button" : "generic";
      case "details": return "group";
      case "fieldset": return "group";
      case "figure": return "figure";
      case "blockquote": return "blockquote";
      case "hr": return "separator";
      case "progress": return "progressbar";
      case "meter": return "meter";
      case "output": return "status";
      case "dl": return "list";
      case "iframe": case "frame": return "iframe";
      case "strong": case "b": return "strong";
      case "em": case "i": return "emphasis";
      case "code": return "code";
      case "time": return "time";
      case "video": return "video";
      case "audio": return "audio";
    }
    return "generic";
  };
  const summaryOf = (details) => {
    if (!details || details.localName !== "details") return null;
    for (const c of details.children) if (c.localName === "summary") return c;
    return null;
  };
  // presentationalParent: the table or list whose role none/presentation
  // its rows, cells and items inherit.
  const PARTS = { tr: "table", td: "table", th: "table", thead: "table", tbody: "table", tfoot: "table", caption: "table", li: "ul, ol, menu" };
  const presentationalParent = (el) => {
    const owner = PARTS[el.localName] && el.parentElement && el.parentElement.closest(PARTS[el.localName]);
    if (!owner) return false;
    const r = (owner.getAttribute("role") || "").trim().toLowerCase().split(/\s+/)[0];
    return (r === "none" || r === "presentation") && !focusable(owner);
  };
  const roleOf = (el) => {
    if (!el.hasAttribute("role") && presentationalParent(el)) return "none";
    const explicit = (el.getAttribute("role") || "").trim().toLowerCase().split(/\s+/).find((r) => KNOWN.has(r));
    let role = explicit || implicitRole(el);
    // A focusable element, or one with a global ARIA attribute, keeps its
    // native role even when the page says presentation.
    if ((role === "none" || role === "presentation") && explicit && (focusable(el) || el.hasAttribute("aria-label"))) role = implicitRole(el);
    if (role === "image") role = "img";
    if ((role === "generic" || role === "paragraph") && editableRoot(el)) role = "textbox";
    return role;
  };
  const focusable = (el) => {
    if (el.localName === "iframe" || el.localName === "frame" || el === el.ownerDocument.body) return false;
    if (editableRoot(el)) return el.getAttribute("tabindex") !== "-1";
    return el.tabIndex >= 0 && (el.hasAttribute("tabindex") || nativelyFocusable(el));
  };
  // editableRoot: where a contenteditable region starts (its descendants
  // are part of it, not controls of their own).
  const editableRoot = (el) => el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable);
  const nativelyFocusable = (el) => {
    switch (el.localName) {
      case "a": case "area": return el.hasAttribute("href");
      case "button": case "input": case "select": case "textarea": return true;
      case "summary": return summaryOf(el.parentElement) === el;
    }
    return false;
  };

  // ---- the flat tree ----

  const kids = (node) => {
    if (node.nodeType === 1) {
      if (node.shadowRoot) return node.shadowRoot.childNodes;
      if (node.localName === "slot") {
        const a = node.assignedNodes();
        return a.length ? a : node.childNodes;
      }
    }
    return node.childNodes;
  };
  // byId looks an id up where aria-labelledby looks: the element's own
  // tree (its shadow root, or its document).
  const byId = (el, id) => {
    const root = el.getRootNode();
    return root.getElementById ? root.getElementById(id) : null;
  };
  // Computed styles, looked up once per element per snapshot.
  const styles = new Map();
  const style = (el) => {
    let st = styles.get(el);
    if (!st) styles.set(el, (st = el.ownerDocument.defaultView.getComputedStyle(el)));
    return st;
  };
  // rendered: not display:none (itself or an ancestor), not in a closed
  // <details>. visibility is checked per element: a visible child of a
  // hidden parent is shown.
  const rendered = (el) => {
    if (el.checkVisibility ? el.checkVisibility() : style(el).display !== "none") return true;
    // display:contents has no box of its own but shows its children.
    return style(el).display === "contents" && (!el.parentElement || rendered(el.parentElement));
  };
  const isHidden = (el) => !rendered(el) || style(el).visibility !== "visible" || el.getAttribute("aria-hidden") === "true";

  // ---- names ----

  // pseudoRules says whether a document's stylesheets mention ::before or
  // ::after (a cross-origin sheet cannot be read: assume it does), so that
  // most elements skip the pseudo-element lookup.
  const pseudoRules = new Map();
  const mayHavePseudo = (el) => {
    const root = el.getRootNode();
    if (root !== el.ownerDocument) return true; // a shadow tree's own styles
    let v = pseudoRules.get(root);
    if (v === undefined) {
      v = (root.adoptedStyleSheets || []).length > 0;
      for (const sh of root.styleSheets) {
        if (v) break;
        try {
          for (const r of sh.cssRules) if (/::?(before|after)\b/.test(r.cssText)) { v = true; break; }
        } catch (e) {
          v = true;
        }
      }
      pseudoRules.set(root, v);
    }
    return v;
  };
  // transformed applies CSS text-transform, as Chromium's names do: they
  // come from the rendered text.
  const transformed = (text, el) => {
    switch (style(el).textTransform) {
      case "uppercase": return text.toUpperCase();
      case "lowercase": return text.toLowerCase();
      case "capitalize": return text.replace(/(^|\s)(\S)/g, (m, a, b) => a + b.toUpperCase());
    }
    return text;
  };
  const generated = (el, which) => {
    // Most elements have no generated content: skip the pseudo-element
    // lookup unless a stylesheet could give it some.
    if (!mayHavePseudo(el)) return "";
    const c = el.ownerDocument.defaultView.getComputedStyle(el, which).content;
    if (!c || c === "none" || c === "normal") return "";
    let out = "";
    // A list of strings and quotes; counters and images add nothing.
    for (const m of c.matchAll(/"((?:[^"\\]|\\.)*)"|(open-quote)|(close-quote)/g)) {
      out += m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2] ? "\u201c" : "\u201d";
    }
    return out;
  };
  const embeddedValue = (el, role) => {
    if (role === "textbox" || role === "searchbox") return el.isContentEditable ? el.innerText : el.value || "";
    if (role === "combobox" || role === "listbox") {
      if (el.localName === "select") return [...el.selectedOptions].map((o) => o.textContent).join(" ");
      if ("value" in el) return el.value;
      return "";
    }
    if (role === "slider" || role === "spinbutton" || role === "scrollbar") {
      return el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow") || el.value || "";
    }
    return null;
  };
  const nameOf = (el, role) => collapse(computeName(el, { root: true, role, visited: new Set(), labelledBy: false, content: false }));
  const computeName = (node, st) => {
    if (node.nodeType === 3) return node.parentElement ? transformed(node.data, node.parentElement) : node.data;
    if (node.nodeType !== 1) return "";
    const el = node;
    if (st.visited.has(el)) return "";
    st.visited.add(el);
    const role = st.root ? st.role : roleOf(el);
    if (!st.includeHidden && !st.root && isHidden(el)) return "";
    // aria-labelledby
    if (!st.labelledBy) {
      const ids = (el.getAttribute("aria-labelledby") || "").trim();
      if (ids) {
        const parts = ids.split(/\s+/).map((id) => byId(el, id)).filter(Boolean).map((r) => {
          const sub = { root: false, visited: r === el ? new Set() : st.visited, labelledBy: true, content: true, includeHidden: isHidden(r) };
          return r === el ? collapse(nameSelf(el, role, sub)) : collapse(computeName(r, sub));
        });
        const t = parts.filter(Boolean).join(" ");
        if (t.trim()) return t;
      }
    }
    // a control embedded in a label or a name from content: its value
    if (!st.root && (st.content || st.labelledBy)) {
      const v = embeddedValue(el, role);
      if (v !== null && !(role === "textbox" && el.localName !== "input" && el.localName !== "textarea" && !el.isContentEditable)) return v;
    }
    return nameSelf(el, role, st);
  };
  // nameSelf is the name from aria-label onwards (not aria-labelledby).
  const nameSelf = (el, role, st) => {
    const al = el.getAttribute("aria-label");
    if (al && al.trim() && role !== "none" && role !== "presentation") return al;
    const nat = nativeName(el, role, st);
    if (nat) return nat;
    if (st.root ? FROM_CONTENT.has(role) : true) {
      const t = contentName(el, st);
      if (t.trim()) return t;
    }
    const tip = el.getAttribute("title");
    if (tip && tip.trim()) return tip;
    if (st.root && /^(input|textarea)$/.test(el.localName)) {
      const ph = el.getAttribute("placeholder") || el.getAttribute("aria-placeholder");
      if (ph) return ph;
    } else if (st.root) {
      const ph = el.getAttribute("aria-placeholder");
      if (ph) return ph;
    }
    return "";
  };
  const contentName = (el, st) => {
    const sub = { root: false, visited: st.visited, labelledBy: st.labelledBy, content: true, includeHidden: st.includeHidden };
    let out = generated(el, "::before");
    const skipGroups = (st.root && st.role === "treeitem") || el.getAttribute("role") === "treeitem";
    for (const c of kids(el)) {
      if (c.nodeType === 1) {
        if (skipGroups && /^(group|tree|list)$/.test(roleOf(c))) continue;
        if (c.localName === "br") {
          out += " ";
          continue;
        }
        const t = computeName(c, sub);
        // Only inline boxes run together; blocks, inline-blocks, flex
        // and grid items are separate words (as in Chromium).
        const block = !/^(inline|contents)$/.test(style(c).display);
        out += block ? " " + t + " " : t;
      } else if (c.nodeType === 3) {
        out += transformed(c.data, el);
      }
    }
    return out + generated(el, "::after");
  };
  const labelsText = (el, st) => {
    if (!el.labels || !el.labels.length) return "";
    return [...el.labels].map((l) => collapse(contentName(l, { ...st, root: false }))).filter(Boolean).join(" ");
  };
  const nativeName = (el, role, st) => {
    const tag = el.localName;
    if (tag === "input") {
      const t = (el.getAttribute("type") || "text").toLowerCase();
      const l = labelsText(el, st);
      if (l) return l;
      if (t === "button" || t === "submit" || t === "reset") {
        if (el.hasAttribute("value")) return el.value;
        return t === "submit" ? "Submit" : t === "reset" ? "Reset" : "";
      }
      if (t === "image") return el.getAttribute("alt") || el.getAttribute("value") || "Submit";
      return "";
    }
    if (tag === "textarea" || tag === "select" || tag === "meter" || tag === "progress" || tag === "output") return labelsText(el, st);
    if (tag === "button") {
      const l = labelsText(el, st);
      if (l) return l;
      return "";
    }
    if (tag === "img" || tag === "area") return el.getAttribute("alt") || "";
    if (tag === "fieldset") {
      const lg = [...el.children].find((c) => c.localName === "legend");
      return lg ? contentName(lg, st) : "";
    }
    if (tag === "figure") {
      const fc = [...el.children].find((c) => c.localName === "figcaption");
      return fc ? contentName(fc, st) : "";
    }
    if (tag === "table") {
      const cap = el.caption;
      return cap ? contentName(cap, st) : "";
    }
    if (tag === "svg") {
      const ti = [...el.children].find((c) => c.localName === "title");
      return ti ? ti.textContent : "";
    }
    if (tag === "optgroup") return el.getAttribute("label") || "";
    if (tag === "option" && el.hasAttribute("label")) return el.getAttribute("label");
    return "";
  };

  // ---- states and values ----

  const checkedState = (el, role) => {
    if (el.localName === "input" && (el.type === "checkbox" || el.type === "radio")) {
      return el.indeterminate ? "mixed" : el.checked ? "checked" : "unchecked";
    }
    const a = el.getAttribute("aria-checked");
    if (a === "mixed") return "mixed";
    return a === "true" ? "checked" : "unchecked";
  };
  const states = (el, role, disabled) => {
    const out = [];
    if (role === "heading") out.push("level=" + (el.getAttribute("aria-level") || (/^h[1-6]$/.test(el.localName) ? el.localName[1] : "2")));
    if (/^(checkbox|radio|switch|menuitemcheckbox|menuitemradio)$/.test(role)) out.push(checkedState(el, role));
    if (role === "option" && el.localName === "option" ? el.selected : el.getAttribute("aria-selected") === "true") out.push("selected");
    const pressed = el.getAttribute("aria-pressed");
    if (role === "button" && (pressed === "true" || pressed === "mixed")) out.push("pressed");
    const ex = el.getAttribute("aria-expanded");
    if (ex === "true" || ex === "false") out.push(ex === "true" ? "expanded" : "collapsed");
    else if (el.localName === "summary" && role === "button") out.push(el.parentElement.open ? "expanded" : "collapsed");
    if (disabled) out.push("disabled");
    if (el.readOnly || el.getAttribute("aria-readonly") === "true") out.push("readonly");
    if (role !== "textbox" && editableRoot(el)) out.push("editable");
    if (el.getAttribute("aria-invalid") && el.getAttribute("aria-invalid") !== "false") out.push("invalid");
    if (el.required || el.getAttribute("aria-required") === "true") out.push("required");
    if (el.getAttribute("aria-current") && el.getAttribute("aria-current") !== "false") out.push("current");
    const doc = el.ownerDocument;
    let active = doc.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement) active = active.shadowRoot.activeElement;
    if (active === el && el !== doc.body) out.push("focused");
    return out;
  };
  const valueOf = (el, role) => {
    switch (role) {
      case "textbox": case "searchbox": case "combobox":
        if (el.localName === "select") return [...el.selectedOptions].map((o) => o.textContent).join(", ");
        if (el.isContentEditable) return el.innerText;
        if (el.localName === "input" && el.type === "password") return "•".repeat(Math.min(el.value.length, 12));
        if ("value" in el && (el.localName === "input" || el.localName === "textarea")) return el.value;
        return "";
      case "slider": case "spinbutton": case "scrollbar": case "progressbar": case "meter":
        return el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow") || (el.value !== undefined && el.value !== "" ? String(el.value) : "");
      case "link":
        return el.getAttribute("href") || "";
    }
    if (el.localName === "input" && (el.type === "color" || el.type === "file")) return el.value;
    return "";
  };

  // ---- reachability ----

  // modalIn finds the modal that blocks the rest of doc: an open modal
  // <dialog> (top of the top layer), else a visible aria-modal dialog.
  const modalIn = (doc) => {
    // A modal <dialog> may sit in a shadow root: look through them all.
    const find = (root) => {
      let m = null;
      try {
        for (const d of root.querySelectorAll("dialog")) if (d.matches(":modal")) m = d; // the last opened is on top
      } catch (e) { /* :modal unsupported */ }
      if (m) return m;
      for (const e of root.querySelectorAll("*")) {
        if (e.shadowRoot && (m = find(e.shadowRoot))) return m;
      }
      return null;
    };
    let m = find(doc);
    if (m) return m;
    for (const d of doc.querySelectorAll('[aria-modal="true"]')) {
      const r = (d.getAttribute("role") || "").trim();
      if ((r === "dialog" || r === "alertdialog") && !isHidden(d) && !d.closest("[inert]")) m = d;
    }
    return m;
  };

  // ---- output ----

  const lines = [];
  const sections = []; // {line, depth, el}: containers a snapshot can be scoped to
  const emit = (depth, text) => {
    lastText = null;
    lines.push("  ".repeat(depth) + "- " + text);
  };
  // Text runs that follow each other at one depth (inline elements,
  // spans) make one text line, up to a length.
  let lastText = null; // {depth, parts, line}
  const emitText = (depth, t) => {
    if (lastText && lastText.depth === depth && lastText.parts.join(" ").length + t.length < 300) {
      lastText.parts.push(t);
      lines[lastText.line] = "  ".repeat(depth) + "- text: " + quote(lastText.parts.join(" "));
      return;
    }
    emit(depth, "text: " + quote(t));
    lastText = { depth, parts: [t], line: lines.length - 1 };
  };
  const SECTION = new Set(["main", "navigation", "region", "list", "table", "form", "article", "complementary",
    "banner", "contentinfo", "dialog", "group", "tree", "grid", "listbox", "menu", "tabpanel", "feed", "search"]);
  let blockedBehindModal = false;

  // walkKids walks the children of node; ctx carries what ancestors
  // imposed: invisible (visibility:hidden, whose visible children still
  // show), disabled (aria-disabled), noText (the text is the parent's name
  // already), onlyControls (inside a control or a heading: only the
  // controls in it get lines).
  const walkKids = (node, depth, ctx) => {
    for (const c of kids(node)) {
      if (c.nodeType === 3) {
        if (ctx.noText) continue;
        const t = clip(c.data, 200);
        if (t && !ctx.invisible) emitText(depth, t);
      } else if (c.nodeType === 1) {
        try {
          visit(c, depth, ctx);
        } catch (e) {
          // An element the walker trips on (an exotic custom element, a
          // page that patched DOM methods) costs its own line, not the
          // snapshot.
          emit(depth, "note: " + quote("could not read a <" + c.localName + ">: " + clip(String(e && e.message || e), 100)));
        }
      }
    }
  };

  // hasControls: el holds something a user acts on (looked for in its
  // light tree; a shadow root or a custom element may hold anything).
  const CONTROL = 'a[href], area[href], button, input, select, textarea, summary, [tabindex], [contenteditable], [onclick], [role], iframe';
  const hasControls = (el) => !!el.querySelector(CONTROL + ", :not(:defined)") || !!el.shadowRoot ||
    [...el.querySelectorAll("*")].some((d) => d.shadowRoot);
  const SKIP = new Set(["script", "style", "noscript", "template", "head", "meta", "link", "title", "base", "datalist"]);
  const visit = (el, depth, ctx) => {
    if (SKIP.has(el.localName)) return;
    if (el.inert) return;
    if (el.getAttribute("aria-hidden") === "true") return;
    if (!rendered(el)) return;
    if (el.localName === "details" && !el.open) {
      // Only the summary of a closed <details> is shown.
      const s = summaryOf(el);
      const role = roleOf(el);
      if (NOLINE.has(role)) { if (s) visit(s, depth, ctx); return; }
      emitEl(el, role, depth, ctx, () => { if (s) visit(s, depth + 1, ctx); });
      return;
    }
    const invisible = style(el).visibility !== "visible";
    const role = roleOf(el);
    // aria-disabled disables the whole subtree, as in Chromium.
    const off = !ctx.disabled && el.getAttribute("aria-disabled") === "true";
    const kctx = invisible === !!ctx.invisible && !off ? ctx : { ...ctx, invisible, disabled: ctx.disabled || off };
    if (invisible) {
      walkKids(el, depth, kctx);
      return;
    }
    if (el.localName === "iframe" || el.localName === "frame") return frame(el, depth, ctx);
    const clickable = !WIDGET.has(role) && (focusable(el) || el.hasAttribute("onclick"));
    if (ctx.onlyControls && !clickable && !WIDGET.has(role)) {
      walkKids(el, depth, kctx);
      return;
    }
    if (NOLINE.has(role) && !clickable) {
      // A label's text is its control's name already, a caption's,
      // legend's or figcaption's its table's, group's or figure's.
      const names = el.localName === "label" ? el.control && rendered(el.control) : /^(caption|legend|figcaption)$/.test(el.localName);
      walkKids(el, depth, names ? { ...kctx, noText: true } : kctx);
      return;
    }
    emitEl(el, clickable && NOLINE.has(role) ? "generic" : role, depth, kctx, null);
  };

  const emitEl = (el, role, depth, ctx, children) => {
    const disabled = ctx.disabled || el.getAttribute("aria-disabled") === "true" || el.matches(":disabled");
    const widget = WIDGET.has(role);
    const clickable = widget || focusable(el) || el.hasAttribute("onclick");
    let line = role;
    // Rows and cells with more than text: their contents say it (a row's
    // name is all its cells' text).
    const contentNamed = /^(row|cell|columnheader|rowheader)$/.test(role) && el.childElementCount > 0 &&
      !el.hasAttribute("aria-label") && !el.hasAttribute("aria-labelledby");
    const name = contentNamed ? "" : clip(nameOf(el, role), 100);
    if (name) line += " " + quote(name);
    const st = states(el, role, disabled && (widget || clickable));
    if (st.length) line += " [" + st.join("] [") + "]";
    if (clickable && !disabled) line += " [ref=" + refOf(el) + "]";
    const kctx = ctx;
    let v = valueOf(el, role);
    if (role === "iframe") v = "";
    if (children) {
      emit(depth, line);
      children();
      return;
    }
    if (el.localName === "select") {
      emit(depth, line + (v ? ": " + clip(v, 100) : ""));
      options(el, depth + 1, disabled);
      return;
    }
    const leaf = widget && !COMPOSITE.has(role) && role !== "combobox";
    if (leaf || role === "heading" || role === "img" || role === "separator" || role === "progressbar" || role === "meter") {
      if (!name && !v && role !== "img" && role !== "separator") {
        const t = clip(el.innerText || el.textContent, 100);
        if (t) v = t;
      }
      emit(depth, line + (v ? ": " + clip(v, 100) : ""));
      // Its text is its name; but a link in a heading, or a button in a
      // card-wide link, is a control of its own.
      if (hasControls(el)) walkKids(el, depth + 1, { ...kctx, noText: true, onlyControls: true });
      return;
    }
    // A container: its text on the same line when it has nothing else.
    const onlyText = [...kids(el)].every((c) => c.nodeType === 3 || c.nodeType === 8);
    if (onlyText && !el.shadowRoot) {
      const t = clip(el.textContent, 200);
      emit(depth, line + (t && t !== name ? ": " + t : v ? ": " + clip(v, 100) : ""));
      return;
    }
    if (SECTION.has(role)) sections.push({ line: lines.length, depth, el, text: line });
    emit(depth, line + (v ? ": " + clip(v, 100) : ""));
    walkKids(el, depth + 1, { ...kctx, noText: role === "treeitem" });
  };

  const options = (select, depth, disabled) => {
    for (const c of select.children) {
      if (c.localName === "optgroup") {
        if (c.hidden || !rendered(c) && style(c).display === "none") continue;
        const gd = disabled || c.disabled;
        emit(depth, "group " + quote(clip(c.label, 100)) + (c.disabled ? " [disabled]" : ""));
        for (const o of c.children) if (o.localName === "option") option(o, depth + 1, gd);
      } else if (c.localName === "option") {
        option(c, depth, disabled);
      }
    }
  };
  const option = (o, depth, disabled) => {
    if (o.hidden || style(o).display === "none") return;
    const off = disabled || o.disabled;
    let line = "option " + quote(clip(o.label || o.textContent, 100));
    if (o.selected) line += " [selected]";
    if (off) line += " [disabled]";
    else line += " [ref=" + refOf(o) + "]";
    emit(depth, line);
  };

  const frame = (el, depth, ctx) => {
    let line = "iframe";
    const name = clip(nameOf(el, "iframe"), 100);
    if (name) line += " " + quote(name);
    let doc = null;
    try {
      doc = el.contentDocument;
    } catch (e) { /* cross-origin */ }
    if (!doc || !doc.documentElement) {
      let src = el.src || el.getAttribute("src") || "";
      emit(depth, line + ": cross-origin frame " + clip(src, 200) + " (contents not shown: open it in a tab to act on it)");
      return;
    }
    emit(depth, line);
    walkDoc(doc, depth + 1, ctx);
  };

  const walkDoc = (doc, depth, ctx) => {
    const root = doc.body || doc.documentElement;
    if (!root) return;
    const m = modalIn(doc);
    if (m) {
      blockedBehindModal = true;
      visit(m, depth, ctx);
      return;
    }
    walkKids(root, depth, ctx);
  };

  // overlayOver finds a fixed element over most of the viewport's centre
  // that is no modal dialog (a cookie wall, a sign-up prompt): what lies
  // under it stays listed, as Chromium lists it, but cannot be clicked
  // until it is dealt with.
  const overlayOver = (doc) => {
    const w = doc.defaultView;
    const hit = doc.elementFromPoint(w.innerWidth / 2, w.innerHeight / 2);
    let found = null;
    for (let n = hit; n && n !== doc.body && n !== doc.documentElement; n = n.parentElement) {
      const st = style(n);
      if (st.position !== "fixed") continue;
      const r = n.getBoundingClientRect();
      if (r.width * r.height >= 0.5 * w.innerWidth * w.innerHeight) found = n;
    }
    if (!found || found.localName === "dialog") return "";
    const r = (found.getAttribute("role") || "").trim();
    if ((r === "dialog" || r === "alertdialog") && found.getAttribute("aria-modal") === "true") return "";
    const name = clip(nameOf(found, roleOf(found)) || found.innerText, 60);
    return found.localName + (found.id ? "#" + found.id : "") + (name ? " " + quote(name) : "");
  };

  // ---- scope ----

  let scope = null;
  if (opts.ref) {
    const w = reg.byRef.get(opts.ref);
    scope = w && w.deref();
    if (!scope || !scope.isConnected) return { error: "ref " + opts.ref + " not found: the page changed; take a new snapshot" };
  } else if (opts.selector) {
    try {
      scope = document.querySelector(opts.selector);
    } catch (e) {
      return { error: "invalid selector " + quote(opts.selector) + ": " + e.message };
    }
    if (!scope) return { error: "no element matches selector " + quote(opts.selector) };
  }
  if (scope) {
    if (scope.localName === "iframe") frame(scope, 0, {});
    else if (scope === document.body || scope === document.documentElement) walkDoc(document, 0, {});
    else visit(scope, 0, {});
  } else {
    walkDoc(document, 0, {});
  }

  // ---- the window of lines that fits ----

  const total = lines.length;
  const offset = Math.max(0, Math.min(opts.offset | 0, total));
  const budget = opts.maxChars > 0 ? opts.maxChars : Infinity;
  let used = 0, end = offset;
  for (; end < total; end++) {
    const n = lines[end].length + 1;
    if (used + n > budget) break;
    used += n;
  }
  if (end === offset && end < total) {
    // One line longer than the budget: cut the line itself.
    lines[end] = lines[end].slice(0, Math.max(0, budget - 2)) + "…";
    end++;
  }
  // Sections after the cut a model can scope a snapshot to: the
  // outermost ones, each with a CSS selector.
  const selectorOf = (el) => {
    if (el.getRootNode() !== document) return "";
    const parts = [];
    for (let n = el; n && n !== document.documentElement; n = n.parentElement) {
      if (n.id) {
        parts.unshift("#" + CSS.escape(n.id));
        break;
      }
      let i = 1;
      for (let p = n.previousElementSibling; p; p = p.previousElementSibling) if (p.localName === n.localName) i++;
      parts.unshift(n.localName + ":nth-of-type(" + i + ")");
    }
    return parts.join(" > ");
  };
  const after = [];
  const later = sections.filter((x) => x.line >= end);
  const top = later.reduce((m, x) => Math.min(m, x.depth), Infinity);
  for (const x of later) {
    if (x.depth > top || after.length >= 12) continue;
    const sel = selectorOf(x.el);
    if (sel && sel.length <= 160) after.push({ line: x.line, what: clip(x.text.replace(/ \[.*$/, ""), 80), selector: sel });
  }
  return {
    url: location.href,
    title: document.title,
    text: lines.slice(offset, end).join("\n"),
    offset,
    end,
    total,
    totalChars: lines.reduce((n, l) => n + l.length + 1, 0),
    modal: blockedBehindModal,
    overlay: blockedBehindModal || scope ? "" : overlayOver(document),
    after,
  };
})
