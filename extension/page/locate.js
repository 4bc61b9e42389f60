// page/locate.js — finds the element a call addresses: a ref from the document's latest
// page_snapshot, a CSS selector, visible text or an XPath (open shadow roots included), and keeps
// the per-document ref store that binds refs to this document. Refs are stable: within one
// document an element keeps the ref it was first given across snapshots, a new element gets the
// next unused number, and a number is never given to a second element — so an old ref names its
// own element or nothing (`bad_ref`), never whatever is "first" now. Runs in the page's isolated
// world after page/redact.js and page/dom.js (and under Node's tests). It must never resolve a ref
// of another document token, never hand out an element that left the page, and never keep a strong
// reference to an element (refs are WeakRefs; the element -> ref side is a WeakMap).
//
// Loading: a classic script that is also an ES module, defining only `tabwardenLocate` on
// globalThis (page/redact.js's header says why and how).

/**
 * One document's refs: `doc` is its random token (made at its first snapshot and kept for the
 * document's life); `map` every live ref -> element; `byElement` element -> its ref; `next` the
 * highest number ever handed out (never lowered, so never reused).
 * @typedef {{doc: string, map: Map<string, WeakRef<any>>, byElement: WeakMap<object, string>, next: number}} RefStore
 */

var tabwardenLocate = (() => {
  const { PageError, BUTTONLIKE, collapse, cap, tagOf, typeOf, walk, textOf, visible } = globalThis.tabwardenDom;
  /**
   * The isolated world's global holding the RefStore. A new document is a new world, so its
   * store starts empty; re-injecting the page files does not touch it.
   */
  const STORE = "__tabwardenRefs";
  /** Most candidates a text search looks at. */
  const MAX_MATCHES = 10_000;
  /** Highest ref number (interact.js accepts @e1..@e9999999); past it a document hands out no more. */
  const MAX_REF = 9_999_999;
  /** Live refs kept per document; past it the refs of elements no longer on the page are dropped. */
  const MAX_LIVE = 20_000;

  /** @returns {RefStore | undefined} */
  function currentRefs() {
    const store = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis))[STORE];
    if (store === null || typeof store !== "object") return undefined;
    const s = /** @type {RefStore} */ (store);
    return typeof s.doc === "string" && s.map instanceof Map && s.byElement instanceof WeakMap && Number.isInteger(s.next)
      ? s
      : undefined;
  }

  /**
   * This document's RefStore, made (with a fresh random token) on first use; its numbering
   * starts after `floor`, the highest ref an earlier document of the tab handed out.
   * @param {unknown} [floor]
   * @returns {RefStore}
   */
  function documentRefs(floor = 0) {
    const existing = currentRefs();
    if (existing !== undefined) {
      // Another frame of the tab may have handed out numbers since: new refs here go after them,
      // so one number never names elements in two frames.
      if (Number.isSafeInteger(floor) && /** @type {number} */ (floor) > existing.next) existing.next = Math.min(/** @type {number} */ (floor), MAX_REF);
      return existing;
    }
    const start = Number.isSafeInteger(floor) && /** @type {number} */ (floor) > 0 ? Math.min(/** @type {number} */ (floor), MAX_REF) : 0;
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    /** @type {RefStore} */
    const store = {
      doc: [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(""),
      map: new Map(),
      byElement: new WeakMap(),
      next: start,
    };
    Object.defineProperty(globalThis, STORE, { value: store, writable: true, configurable: true, enumerable: false });
    return store;
  }

  /**
   * The element's ref in this document: the one it was given before, else the next unused
   * number. Undefined once MAX_REF numbers are spent (the snapshot then says `truncated`).
   * @param {RefStore} store
   * @param {object} el
   * @returns {string | undefined}
   */
  function refFor(store, el) {
    const known = store.byElement.get(el);
    if (known !== undefined && store.map.get(known)?.deref() === el) return known;
    if (store.next >= MAX_REF) return undefined;
    if (store.map.size >= MAX_LIVE) prune(store);
    store.next += 1;
    const ref = `@e${store.next}`;
    store.map.set(ref, new WeakRef(el));
    store.byElement.set(el, ref);
    return ref;
  }

  /**
   * Forget the refs whose element is gone or off the page (they answer bad_ref either way;
   * their numbers stay spent).
   * @param {RefStore} store
   */
  function prune(store) {
    for (const [ref, weak] of store.map) {
      const el = weak.deref();
      if (!el || !el.isConnected) store.map.delete(ref);
    }
  }

  /** Every element matching a CSS selector, in the document and open shadow roots. @param {string} sel */
  function bySelector(sel) {
    /** @type {Element[]} */
    const out = [];
    /** @param {any} root */
    const scan = (root) => {
      for (const el of root.querySelectorAll(sel)) out.push(el);
    };
    try {
      scan(document);
      for (const el of walk(document.documentElement)) if (el.shadowRoot) scan(el.shadowRoot);
    } catch {
      throw new PageError("bad_request", "selector is not valid CSS");
    }
    return out;
  }
  /** Innermost visible elements whose text is `text` (exact after collapse, else substring). @param {string} text */
  function byText(text) {
    const want = collapse(text);
    const exact = [];
    const part = [];
    for (const el of walk(document.documentElement)) {
      const tag = tagOf(el);
      if (tag === "SCRIPT" || tag === "STYLE" || tag === "HEAD" || tag === "TEMPLATE") continue;
      const t = tag === "INPUT" && BUTTONLIKE.has(typeOf(el)) ? collapse(el.value) : textOf(el);
      if (t === want) exact.push(el);
      else if (t.includes(want)) part.push(el);
      if (exact.length + part.length > MAX_MATCHES) break;
    }
    /** @param {any[]} list */
    const innermost = (list) => list.filter((el) => visible(el) && !list.some((o) => o !== el && el.contains(o) && visible(o)));
    const e = innermost(exact);
    return e.length > 0 ? e : innermost(part);
  }
  /** @param {string} xp */
  function byXpath(xp) {
    let res;
    try {
      res = document.evaluate(xp, document, null, 7, null); // ORDERED_NODE_SNAPSHOT_TYPE
    } catch {
      throw new PageError("bad_request", "xpath is not valid");
    }
    const out = [];
    for (let i = 0; i < res.snapshotLength; i++) {
      const n = res.snapshotItem(i);
      if (n && n.nodeType === 1) out.push(n);
    }
    return out;
  }

  /**
   * The element `t` addresses, or a PageError. A ref resolves only when `docToken` is this
   * document's token (the one its latest snapshot returned) and its element is still on the page.
   * @param {any} t
   * @param {unknown} docToken
   */
  function resolve(t, docToken) {
    if (!t || typeof t !== "object") throw new PageError("bad_request", "no element given");
    const index = Number.isInteger(t.index) ? t.index : 0;
    if (typeof t.ref === "string") {
      const store = currentRefs();
      if (!store || typeof docToken !== "string" || store.doc !== docToken) {
        throw new PageError("bad_ref", `${t.ref} is from an earlier page; take a new page_snapshot`);
      }
      const weak = store.map.get(t.ref);
      const el = weak ? weak.deref() : undefined;
      if (!el || !el.isConnected) throw new PageError("bad_ref", `${t.ref} is not on the page any more; take a new page_snapshot`);
      return el;
    }
    let list;
    let what;
    if (typeof t.selector === "string") [list, what] = [bySelector(t.selector), `selector ${JSON.stringify(cap(t.selector, 100))}`];
    else if (typeof t.text === "string") [list, what] = [byText(t.text), `text ${JSON.stringify(cap(t.text, 100))}`];
    else if (typeof t.xpath === "string") [list, what] = [byXpath(t.xpath), `xpath ${JSON.stringify(cap(t.xpath, 100))}`];
    else throw new PageError("bad_request", "give exactly one of ref, selector, text, xpath");
    if (index >= list.length) {
      throw new PageError("element_not_found", `no element matches ${what}${index > 0 ? ` at index ${index}` : ""} (${list.length} found)`);
    }
    return list[index];
  }


  return Object.freeze({ MAX_REF, MAX_LIVE, documentRefs, refFor, bySelector, byText, byXpath, resolve });
})();
globalThis.tabwardenLocate = tabwardenLocate;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
