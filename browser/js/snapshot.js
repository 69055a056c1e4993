// mcpx page walker: returns an ARIA-like outline of the page, one line per
// meaningful element, each actionable one with a ref ("[ref=e5]") that
// stays the same for the same element across snapshots of the document.
// Refs live in a page-global registry, not in DOM attributes.
(function (maxLines) {
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
  const lines = [];
  let truncated = false;
  const clip = (s, n) => {
    s = (s || "").replace(/\s+/g, " ").trim();
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  };
  const hidden = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return true;
    const st = getComputedStyle(el);
    if (st.display === "none" || st.visibility === "hidden") return true;
    const r = el.getBoundingClientRect();
    return r.width === 0 && r.height === 0 && st.overflow !== "visible";
  };
  const inputRole = (el) => {
    const t = (el.getAttribute("type") || "text").toLowerCase();
    return { button: "button", submit: "button", reset: "button", image: "button", checkbox: "checkbox",
      radio: "radio", range: "slider", number: "spinbutton", search: "searchbox", hidden: "" }[t] ?? "textbox";
  };
  const implicitRole = (el) => {
    const tag = el.tagName.toLowerCase();
    switch (tag) {
      case "a": return el.hasAttribute("href") ? "link" : "";
      case "button": return "button";
      case "input": return inputRole(el);
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "option": return "option";
      case "img": return el.getAttribute("alt") === "" ? "" : "img";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      case "ul": case "ol": return "list";
      case "li": return "listitem";
      case "nav": return "navigation";
      case "main": return "main";
      case "header": return "banner";
      case "footer": return "contentinfo";
      case "aside": return "complementary";
      case "form": return "form";
      case "dialog": return "dialog";
      case "table": return "table";
      case "tr": return "row";
      case "th": return "columnheader";
      case "td": return "cell";
      case "label": return "label";
      case "p": return "paragraph";
      case "summary": return "button";
      case "details": return "group";
      case "fieldset": return "group";
      case "iframe": return "iframe";
    }
    if (el.isContentEditable && el.parentElement && !el.parentElement.isContentEditable) return "textbox";
    return "";
  };
  const interactive = new Set(["link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox",
    "listbox", "option", "slider", "spinbutton", "switch", "tab", "menuitem", "treeitem"]);
  const labelText = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const t = by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(" ");
      if (t.trim()) return t;
    }
    const al = el.getAttribute("aria-label");
    if (al && al.trim()) return al;
    if (el.id) {
      const l = document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
      if (l && l.textContent.trim()) return l.textContent;
    }
    const wrap = el.closest && el.closest("label");
    if (wrap && wrap !== el && wrap.textContent.trim()) return wrap.textContent;
    return "";
  };
  const nameOf = (el, role) => {
    const l = labelText(el);
    if (l) return l;
    const tag = el.tagName.toLowerCase();
    if (tag === "img" || (tag === "input" && el.type === "image")) return el.getAttribute("alt") || el.getAttribute("title") || "";
    if (tag === "input" && ["button", "submit", "reset"].includes(el.type)) return el.value || (el.type === "submit" ? "Submit" : "");
    if (["textbox", "searchbox", "combobox", "listbox", "spinbutton", "slider", "checkbox", "radio"].includes(role)) {
      return el.getAttribute("placeholder") || el.getAttribute("title") || "";
    }
    if (["list", "table", "form", "navigation", "main", "banner", "contentinfo", "group", "row", "dialog", "complementary"].includes(role)) {
      return el.getAttribute("title") || "";
    }
    return el.innerText || el.textContent || el.getAttribute("title") || "";
  };
  const attrs = (el, role) => {
    const out = [];
    if (role === "heading") out.push("level=" + el.tagName.slice(1));
    if ("checked" in el && (role === "checkbox" || role === "radio")) out.push(el.checked ? "checked" : "unchecked");
    if (el.disabled || el.getAttribute("aria-disabled") === "true") out.push("disabled");
    const ex = el.getAttribute("aria-expanded");
    if (ex) out.push(ex === "true" ? "expanded" : "collapsed");
    if (role === "option" && el.selected) out.push("selected");
    if (document.activeElement === el && el !== document.body) out.push("active");
    return out;
  };
  const valueOf = (el, role) => {
    if (role === "textbox" || role === "searchbox" || role === "spinbutton" || role === "slider") {
      return el.isContentEditable ? el.innerText : el.value;
    }
    if (role === "combobox" && el.tagName === "SELECT") {
      const o = el.selectedOptions && el.selectedOptions[0];
      return o ? o.textContent : "";
    }
    if (role === "link") return el.getAttribute("href");
    return "";
  };
  const emit = (depth, text) => {
    if (lines.length >= maxLines) {
      truncated = true;
      return false;
    }
    lines.push("  ".repeat(depth) + "- " + text);
    return true;
  };
  const quote = (s) => JSON.stringify(s);
  const named = new Set([...interactive, "heading", "img", "label", "dialog", "navigation", "form", "group",
    "table", "region", "generic", "main", "complementary"]);
  const walk = (node, depth) => {
    for (let child = node.firstChild; child && !truncated; child = child.nextSibling) {
      if (child.nodeType === Node.TEXT_NODE) {
        const t = clip(child.textContent, 200);
        if (t) emit(depth, "text: " + quote(t));
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE) continue;
      const el = child;
      const tag = el.tagName.toLowerCase();
      if (["script", "style", "noscript", "template", "head", "meta", "link"].includes(tag)) continue;
      if (hidden(el)) continue;
      const clickable = el.hasAttribute("onclick") || (el.tabIndex >= 0 && el !== document.body);
      let role = (el.getAttribute("role") || implicitRole(el)).split(" ")[0];
      if (!role && clickable) role = "generic";
      if (!role) {
        walk(el, depth);
        if (el.shadowRoot) walk(el.shadowRoot, depth);
        continue;
      }
      const leaf = interactive.has(role) || role === "heading" || role === "img";
      let line = role;
      if (named.has(role)) {
        const name = clip(nameOf(el, role), 100);
        if (name) line += " " + quote(name);
      }
      const a = attrs(el, role);
      if (a.length) line += " [" + a.join("] [") + "]";
      if (interactive.has(role) || clickable || role === "heading") line += " [ref=" + refOf(el) + "]";
      const v = valueOf(el, role);
      if (!leaf && !v && el.childElementCount === 0 && !el.shadowRoot) {
        const t = clip(el.textContent, 200);
        if (t && !named.has(role)) line += ": " + t;
        emit(depth, line);
        continue;
      }
      if (v) line += ": " + clip(v, 100);
      if (!emit(depth, line)) return;
      if (!leaf) walk(el, depth + 1);
      if (el.shadowRoot) walk(el.shadowRoot, depth + 1);
    }
  };
  if (document.body) walk(document.body, 0);
  return { url: location.href, title: document.title, text: lines.join("\n"), truncated, lines: lines.length };
})
