// page/snapshot.js — page_snapshot in the page. The DOM walk: the visible interactive elements
// and headings (open shadow roots included; under a scope element when given) as {ref, role,
// name, tag, value?, level?, states?}, and (text: true) the page's text runs as rows {role:
// "text", name} without a ref. The accessibility mode's page half: `describeElements`
// takes the elements handlers/interact.js resolved from Chrome's accessibility tree (CDP
// DOM.resolveNode into this isolated world) and gives each its stable ref, tag, shown value and
// (when asked) its text. `elementText` is page_text of one element. Every ref is bound in the
// document's RefStore (page/locate.js) to the element and to this document's token; an element
// listed before keeps its ref (refs are stable within a document, never reused). Runs in the
// page's isolated world after page/redact.js, page/dom.js and page/locate.js (and under Node's
// tests). It must never list a password field's value (dom.shownValue) or its text, never pass a
// card-like number through a name, value, text or the title, never give a ref to an element of a
// closed or user-agent shadow root, and never list more than maxNodes elements (it says
// `truncated` and `cut` instead, interactive elements listed first: page/pick.js).
//
// Loading: a classic script that is also an ES module, defining only `tabwardenSnapshot` on
// globalThis (page/redact.js's header says why and how).

var tabwardenSnapshot = (() => {
  const { INTERACTIVE, NO_ROLE, collapse, cap, tagOf, typeOf, isPassword, walk, visible, roleOf, nameOf, textOf, shownValue, maskCards, deepActive } = globalThis.tabwardenDom;
  const { documentRefs, refFor, resolve } = globalThis.tabwardenLocate;
  const { pick, MAX_NODES } = globalThis.tabwardenPick;
  /** Most elements one snapshot lists by default (at most: page/pick.js MAX_NODES). */
  const MAX_ITEMS = 1000;
  /** Form fields: their text nodes are their value, never a text run of the page. */
  const FIELDS = new Set(["INPUT", "TEXTAREA", "SELECT"]);
  /** Longest name or value shown per element. */
  const MAX_NAME = 200;
  /** Longest text elementText reads. */
  const MAX_TEXT = 5_000_000;
  /** Longest page text a snapshot with nothing to reference carries (page_text reads it all). */
  const MAX_PAGE_TEXT = 20_000;
  /** What reads a shortened field whole, with the row's ref. */
  const READ_WITH = Object.freeze({ name: "page_text", text: "page_text", value: "page_get_state" });
  /** What a snapshot with nothing to reference says beside the page's text. */
  const NO_ELEMENTS = "this document has no elements to reference (no links, controls or headings beyond what is listed): its text is given instead; page_text reads it all";

  /**
   * `s` capped at `max` into item[field]; when it was longer, the row says so:
   * `shortened[field] = {chars: its full length, readWith: the tool that reads it whole}`.
   * @param {Record<string, any>} item
   * @param {"name" | "value" | "text"} field
   * @param {string} s
   * @param {number} [max]
   */
  function shorten(item, field, s, max = MAX_NAME) {
    item[field] = cap(s, max);
    if (s.length > max) item.shortened = { ...(item.shortened ?? {}), [field]: { chars: s.length, readWith: READ_WITH[field] } };
  }

  /** The resolved absolute address a link goes to (a.href), or undefined. @param {any} el */
  function hrefOf(el) {
    const tag = tagOf(el);
    if ((tag !== "A" && tag !== "AREA") || !el.hasAttribute("href")) return undefined;
    const h = el.href;
    const s = typeof h === "string" ? h : h && typeof h.baseVal === "string" ? h.baseVal : "";
    return s === "" ? undefined : maskCards(s);
  }

  /** @param {unknown} n */
  const limitOf = (n) => (Number.isInteger(n) && /** @type {number} */ (n) > 0 ? Math.min(/** @type {number} */ (n), MAX_NODES) : MAX_ITEMS);

  /**
   * What the DOM says of an element's states and heading level (the a11y mode takes Chrome's).
   * @param {any} el
   * @returns {{level?: number, states?: Record<string, boolean | string>}}
   */
  function domStates(el) {
    const tag = tagOf(el);
    /** @type {Record<string, boolean | string>} */
    const states = {};
    /** @param {string} name */
    const aria = (name) => collapse(el.getAttribute(name)).toLowerCase();
    const t = typeOf(el);
    if (tag === "INPUT" && (t === "checkbox" || t === "radio")) states.checked = el.indeterminate ? "mixed" : !!el.checked;
    else if (aria("aria-checked") !== "") states.checked = aria("aria-checked") === "mixed" ? "mixed" : aria("aria-checked") === "true";
    if (aria("aria-pressed") !== "") states.pressed = aria("aria-pressed") === "mixed" ? "mixed" : aria("aria-pressed") === "true";
    if (aria("aria-expanded") !== "") states.expanded = aria("aria-expanded") === "true";
    else if (tag === "SUMMARY" && el.parentElement && tagOf(el.parentElement) === "DETAILS") states.expanded = !!el.parentElement.open;
    if (aria("aria-selected") !== "") states.selected = aria("aria-selected") === "true";
    if (el.disabled === true || aria("aria-disabled") === "true") states.disabled = true;
    if (el.required === true || aria("aria-required") === "true") states.required = true;
    if (deepActive() === el) states.focused = true;
    /** @type {number | undefined} */
    let level;
    const m = /^H([1-6])$/.exec(tag);
    if (Number.isInteger(Number(aria("aria-level"))) && Number(aria("aria-level")) > 0) level = Number(aria("aria-level"));
    else if (m) level = Number(m[1]);
    return { ...(level !== undefined && roleOf(el) === "heading" ? { level } : {}), ...(Object.keys(states).length > 0 ? { states } : {}) };
  }

  /** The element `node` (an element or a text node) stands in, across an open shadow root's edge. @param {any} node */
  const holderOf = (node) => node.parentElement ?? node.parentNode?.host ?? null;

  /** A row the walk found: an element, or (text: true) a run of text. @typedef {{el?: any, role: string, tag?: string, text?: string}} Found */

  /**
   * The DOM walk. `a`: refFloor (where a new document's numbering starts, page/locate.js),
   * target + docToken (the scope element), compact (interactive only: no headings), maxNodes,
   * skip (start at this row of the walk), text (also the text runs, as worker/a11y.js lists
   * StaticText: each visible text node not inside a row whose name or value already says it; not
   * with compact). When more rows than maxNodes are found, interactive ones are listed first and
   * headings and text after them while room is left (page/pick.js, the rule the accessibility
   * mode applies too): `cut` says how many rows and interactive ones were left out, and how to
   * list the rest.
   * @param {Record<string, any>} [a]
   */
  function snapshot(a = {}) {
    const opts = a !== null && typeof a === "object" ? a : { refFloor: a };
    const store = documentRefs(opts.refFloor);
    const root = opts.target ? resolve(opts.target, opts.docToken) : document.documentElement;
    const max = limitOf(opts.maxNodes);
    const skip = Number.isSafeInteger(opts.skip) && opts.skip > 0 ? opts.skip : 0;
    const texts = opts.text === true && opts.compact !== true;
    /** @type {Found[]} */
    const found = [];
    /** Elements whose text a listed row says (its name, a field's value): no text runs under them. */
    const said = new Set();
    for (const node of walk(root, texts)) {
      if (node.nodeType === 3) {
        const holder = holderOf(node);
        const words = collapse(node.textContent);
        if (words !== "" && holder !== null && !said.has(holder) && visible(holder)) found.push({ role: "text", text: words });
        continue;
      }
      const el = node;
      if (texts && said.has(holderOf(el))) said.add(el);
      const tag = tagOf(el);
      const hasRole = el.hasAttribute("role") && !NO_ROLE.has(collapse(el.getAttribute("role")).toLowerCase());
      if (!INTERACTIVE.has(tag) && !hasRole && !el.isContentEditable) continue;
      if (tag === "A" && !el.hasAttribute("href") && !hasRole) continue;
      if (tag === "INPUT" && typeOf(el) === "hidden") continue;
      if (!visible(el)) continue;
      const role = roleOf(el) || (el.isContentEditable ? "textbox" : "");
      if (opts.compact === true && role === "heading") continue;
      found.push({ el, role, tag });
      if (texts && (FIELDS.has(tag) || nameOf(el) !== "")) said.add(el);
    }
    const { kept, cut } = pick(found, (row) => row.role !== "heading" && row.role !== "text", max, skip);
    /** @type {Array<Record<string, unknown>>} */
    const items = [];
    let truncated = cut !== null;
    for (const { el, role, tag, text } of kept) {
      if (el === undefined) { // a run of text: no element, no ref
        /** @type {Record<string, unknown>} */
        const run = { role, name: "" };
        shorten(run, "name", maskCards(String(text)));
        items.push(run);
        continue;
      }
      const ref = refFor(store, el);
      if (ref === undefined) {
        truncated = true;
        break;
      }
      /** @type {Record<string, unknown>} */
      const item = { ref, role, name: "", tag: String(tag).toLowerCase() };
      shorten(item, "name", maskCards(nameOf(el)));
      const href = hrefOf(el);
      if (href !== undefined) item.href = href;
      const v = shownValue(el);
      if (v !== undefined) shorten(item, "value", v);
      Object.assign(item, domStates(el));
      items.push(item);
    }
    /** @type {Record<string, unknown>} */
    const out = { url: String(location.href), title: maskCards(String(document.title || "")), snapshot: items, truncated, docToken: store.doc, lastRef: store.next };
    if (cut !== null) out.cut = cut;
    // Nothing to act on (no rows, or headings only) and no scope: the document's text, so a
    // text-only page or frame is read, never answered with a silent empty list.
    if (!opts.target && !truncated && skip === 0 && items.every((i) => i.role === "heading")) Object.assign(out, pageText());
    return out;
  }

  /** A document's text for a snapshot with nothing to reference: {text, note, shortened?}. */
  function pageText() {
    const body = document.body ?? document.documentElement;
    const raw = body && typeof body.innerText === "string" ? body.innerText : String(body?.textContent ?? "");
    const whole = maskCards(raw.length > MAX_TEXT ? raw.slice(0, MAX_TEXT) : raw).trim();
    /** @type {Record<string, any>} */
    const out = { text: "", note: NO_ELEMENTS };
    shorten(out, "text", whole, MAX_PAGE_TEXT);
    return out;
  }

  /** An element a ref may name: in the document or an open shadow root (not a closed or UA one). @param {any} el */
  function addressable(el) {
    if (!el || el.nodeType !== 1 || !el.isConnected) return false;
    for (let root = el.getRootNode(); root !== document; root = root.host.getRootNode()) {
      if (!root || !root.host || root.host.shadowRoot !== root) return false;
    }
    return true;
  }
  /** The part of `el`'s box inside the viewport is not empty. @param {any} el */
  function inViewport(el) {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left + r.width > 0 && r.top + r.height > 0 && r.left < innerWidth && r.top < innerHeight;
  }

  /**
   * The accessibility mode's page half: for each element (null where the tree's node was not
   * one), its ref, tag, shown value, whether it shows, and — when `needText[i]` — its text;
   * null for one that cannot carry a ref. Refuses when the document left `origin` or is not the
   * one whose token the DOM walk just gave (`doc`).
   * @param {string} origin
   * @param {unknown} floor
   * @param {string} doc
   * @param {boolean[]} needText
   * @param {any[]} els
   */
  function describeElements(origin, floor, doc, needText, els) {
    if (location.origin !== origin) return { error: { code: "origin_not_approved", message: "the page left the approved origin" } };
    const store = documentRefs(floor);
    if (store.doc !== doc) return { error: { code: "internal_error", message: "the page changed documents during the snapshot" } };
    const items = els.map((el, i) => {
      if (!addressable(el)) return null;
      const ref = refFor(store, el);
      if (ref === undefined) return null;
      /** @type {Record<string, unknown>} */
      const item = { ref, tag: tagOf(el).toLowerCase(), visible: visible(el), inViewport: inViewport(el) };
      const v = shownValue(el);
      if (v !== undefined) shorten(item, "value", v);
      const href = hrefOf(el);
      if (href !== undefined) item.href = href;
      if (Array.isArray(needText) && needText[i] === true && !isPassword(el)) shorten(item, "text", maskCards(textOf(el)));
      return item;
    });
    return { items, lastRef: store.next };
  }

  /**
   * page_text of one element: its rendered text (innerText: form field values are not in it;
   * nothing of a password field), card-like numbers masked.
   * @param {any} el
   */
  function elementText(el) {
    if (isPassword(el)) return { text: "", url: String(location.href) };
    const raw = typeof el.innerText === "string" ? el.innerText : String(el.textContent ?? "");
    const text = maskCards(raw.length > MAX_TEXT ? raw.slice(0, MAX_TEXT) : raw);
    return { text, url: String(location.href) };
  }

  /**
   * page_get_state's box and inViewport: the element's border box in viewport CSS pixels.
   * @param {any} el
   */
  function boxOf(el) {
    const r = el.getBoundingClientRect();
    const round = (/** @type {number} */ n) => Math.round(n * 100) / 100;
    return { box: { x: round(r.left), y: round(r.top), width: round(r.width), height: round(r.height) }, inViewport: inViewport(el) };
  }

  return Object.freeze({ MAX_ITEMS, MAX_NODES, snapshot, describeElements, elementText, boxOf });
})();
globalThis.tabwardenSnapshot = tabwardenSnapshot;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
