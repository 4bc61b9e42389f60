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
  const { PageError, BUTTONLIKE, collapse, cap, tagOf, typeOf, walk, textOf, visible, roleOf, nameOf, maskCards } = globalThis.tabwardenDom;
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
  /**
   * Innermost visible elements whose text is `text`. Both sides are whitespace-collapsed (runs of
   * whitespace are one space, trimmed); `opts.ignoreCase` compares them lower-cased. With
   * `opts.match` "exact" the text must be the element's whole text, with "substring" a part of
   * it. Without `opts` (waitFor, page_reveal): the exact matches, else the substring ones.
   * @param {string} text
   * @param {{match?: "exact" | "substring", ignoreCase?: boolean}} [opts]
   */
  function byText(text, opts) {
    const fold = opts?.ignoreCase === true ? (/** @type {string} */ s) => s.toLowerCase() : (/** @type {string} */ s) => s;
    const want = fold(collapse(text));
    const exact = [];
    const part = [];
    /** Every match, whole or part, in document order (walk's). */
    const any = [];
    for (const el of walk(document.documentElement)) {
      const tag = tagOf(el);
      if (tag === "SCRIPT" || tag === "STYLE" || tag === "HEAD" || tag === "TEMPLATE") continue;
      const t = fold(tag === "INPUT" && BUTTONLIKE.has(typeOf(el)) ? collapse(el.value) : textOf(el));
      if (t === want) exact.push(el);
      else if (t.includes(want)) part.push(el);
      else continue;
      any.push(el);
      if (any.length > MAX_MATCHES) break;
    }
    /** @param {any[]} list */
    const innermost = (list) => list.filter((el) => visible(el) && !list.some((o) => o !== el && el.contains(o) && visible(o)));
    if (opts?.match === "exact") return innermost(exact);
    if (opts?.match === "substring") return innermost(any);
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

  /** Most candidates an `ambiguous` answer lists. */
  const MAX_CANDIDATES = 10;
  /** Longest name a candidate shows (the answer must stay short). */
  const CANDIDATE_NAME = 24;
  /** Longest error message the worker keeps (shared/bridge-error.js MAX_ERROR_MESSAGE). */
  const MAX_MESSAGE = 480;

  /**
   * What an element is, as page_snapshot's DOM walk names it (page/dom.js roleOf / nameOf, card
   * numbers masked), with its ref in this document's RefStore (made after `floor` when it has
   * none yet; the ref is then usable in the next call, as a snapshot's).
   * @param {any} el
   * @param {unknown} [floor]
   * @returns {{ref?: string, role: string, name: string, docToken: string, lastRef: number}}
   */
  function targetOf(el, floor) {
    const store = documentRefs(floor);
    const ref = refFor(store, el);
    const role = roleOf(el) || (el.isContentEditable ? "textbox" : tagOf(el).toLowerCase());
    return { ...(ref !== undefined ? { ref } : {}), role, name: cap(maskCards(nameOf(el)), 200), docToken: store.doc, lastRef: store.next };
  }

  /**
   * More than one element matches and no index chose: `ambiguous`, listing the first candidates
   * (each with a ref of this document, usable in the next call) and how many there are. Nothing
   * is acted on.
   * @param {any[]} list
   * @param {string} what
   * @param {unknown} floor
   */
  function ambiguous(list, what, floor) {
    const shown = list.slice(0, MAX_CANDIDATES).map((el) => targetOf(el, floor));
    const parts = shown.map((c) => `${c.ref ?? "(no ref)"} ${c.role} ${JSON.stringify(cap(c.name, CANDIDATE_NAME))}`);
    const head = (/** @type {number} */ n) => `${list.length} elements match ${what}${n < list.length ? ` (the first ${n})` : ""}: `;
    const tail = "; pass one of these refs, or index to choose";
    let n = parts.length;
    while (n > 1 && head(n).length + parts.slice(0, n).join(", ").length + tail.length > MAX_MESSAGE) n -= 1;
    const err = /** @type {InstanceType<typeof PageError> & {refs?: unknown}} */ (new PageError("ambiguous", `${head(n)}${parts.slice(0, n).join(", ")}${tail}`));
    const last = shown[shown.length - 1];
    err.refs = { docToken: last.docToken, lastRef: last.lastRef };
    throw err;
  }

  /**
   * The element `t` addresses, or a PageError. A ref resolves only when `docToken` is this
   * document's token (the one its latest snapshot returned) and its element is still on the page.
   * A selector, text or xpath must match exactly one element, or `t.index` must choose one of its
   * matches (0-based, document order); several and no index answer `ambiguous` (candidates' refs
   * made after `t.refFloor`). Text is matched whole unless `t.match` is "substring", case-sensitively
   * unless `t.ignoreCase`.
   * @param {any} t
   * @param {unknown} docToken
   */
  function resolve(t, docToken) {
    if (!t || typeof t !== "object") throw new PageError("bad_request", "no element given");
    const index = Number.isInteger(t.index) && t.index >= 0 ? t.index : null;
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
    /** @type {{match: "exact" | "substring", ignoreCase: boolean}} */
    const how = { match: t.match === "substring" ? "substring" : "exact", ignoreCase: t.ignoreCase === true };
    let list;
    let what;
    if (typeof t.selector === "string") [list, what] = [bySelector(t.selector), `selector ${JSON.stringify(cap(t.selector, 60))}`];
    else if (typeof t.text === "string") {
      list = byText(t.text, how);
      what = `text ${JSON.stringify(cap(t.text, 60))}${how.match === "substring" ? " (substring)" : ""}${how.ignoreCase ? " (any case)" : ""}`;
    } else if (typeof t.xpath === "string") [list, what] = [byXpath(t.xpath), `xpath ${JSON.stringify(cap(t.xpath, 60))}`];
    else throw new PageError("bad_request", "give exactly one of ref, selector, text, xpath");
    if (index === null && list.length > 1) ambiguous(list, what, t.refFloor);
    const at = index ?? 0;
    if (at >= list.length) {
      const hint = typeof t.text === "string" && how.match === "exact" ? '; text is matched whole: pass match "substring" for a part of it' : "";
      throw new PageError("element_not_found", `no element matches ${what}${index !== null ? ` at index ${index}` : ""} (${list.length} found)${list.length === 0 ? hint : ""}`);
    }
    return list[at];
  }

  return Object.freeze({ MAX_REF, MAX_LIVE, MAX_CANDIDATES, documentRefs, refFor, bySelector, byText, byXpath, resolve, targetOf });
})();
globalThis.tabwardenLocate = tabwardenLocate;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
