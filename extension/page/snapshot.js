// page/snapshot.js — page_snapshot in the page: the visible interactive elements (open shadow
// roots included) as {ref, role, name, tag, value?}, each ref bound in the document's RefStore
// (page/locate.js) to the element and to this document's token; an element listed before keeps
// its ref (refs are stable within a document, never reused). Runs in the page's isolated world
// after page/redact.js, page/dom.js and page/locate.js (and under Node's tests). It must never
// list a password field's value (dom.shownValue), never pass a card-like number through a name,
// value or the title, and never list more than MAX_ITEMS elements (it says `truncated` instead).
//
// Loading: a classic script that is also an ES module, defining only `tabwardenSnapshot` on
// globalThis (page/redact.js's header says why and how).

var tabwardenSnapshot = (() => {
  const { INTERACTIVE, NO_ROLE, collapse, cap, tagOf, typeOf, walk, visible, roleOf, nameOf, shownValue, maskCards } = globalThis.tabwardenDom;
  const { documentRefs, refFor } = globalThis.tabwardenLocate;
  /** Most elements one snapshot lists. */
  const MAX_ITEMS = 1000;
  /** Longest name or value shown per element. */
  const MAX_NAME = 200;

  /** @param {unknown} [refFloor] where a new document's numbering starts (page/locate.js) */
  function snapshot(refFloor) {
    const store = documentRefs(refFloor);
    /** @type {Array<Record<string, string>>} */
    const items = [];
    let truncated = false;
    for (const el of walk(document.documentElement)) {
      const tag = tagOf(el);
      const hasRole = el.hasAttribute("role") && !NO_ROLE.has(collapse(el.getAttribute("role")).toLowerCase());
      if (!INTERACTIVE.has(tag) && !hasRole && !el.isContentEditable) continue;
      if (tag === "A" && !el.hasAttribute("href") && !hasRole) continue;
      if (tag === "INPUT" && typeOf(el) === "hidden") continue;
      if (!visible(el)) continue;
      if (items.length >= MAX_ITEMS) {
        truncated = true;
        break;
      }
      const ref = refFor(store, el);
      if (ref === undefined) {
        truncated = true;
        break;
      }
      /** @type {Record<string, string>} */
      const item = { ref, role: roleOf(el) || (el.isContentEditable ? "textbox" : ""), name: cap(maskCards(nameOf(el)), MAX_NAME), tag: tag.toLowerCase() };
      const v = shownValue(el);
      if (v !== undefined) item.value = cap(v, MAX_NAME);
      items.push(item);
    }
    return { url: String(location.href), title: maskCards(String(document.title || "")), snapshot: items, truncated, docToken: store.doc, lastRef: store.next };
  }

  return Object.freeze({ MAX_ITEMS, snapshot });
})();
globalThis.tabwardenSnapshot = tabwardenSnapshot;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
