// mcpx element resolver: finds an element by snapshot ref or CSS
// selector, scrolls it into view and returns its centre in viewport CSS
// pixels, or an error a model can act on.
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
  el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return { error: "the element is not visible (zero size)" };
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  const covered = hit && hit !== el && !el.contains(hit) && !hit.contains(el);
  return { x, y, tag: el.tagName.toLowerCase(), covered: !!covered, coveredBy: covered ? hit.tagName.toLowerCase() : "" };
})
