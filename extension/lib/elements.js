// elements.js — the one function chrome.scripting.executeScript runs in the page (isolated world)
// for the element tools: page_snapshot refs, element addressing and the actions on elements.
// Self-contained: `pageOp` is serialised and run in the page, so it must never reference
// anything outside its own body (arguments arrive through executeScript's `args`). It must
// never return a password field's value, never pass a card-like number through a name or value
// (the masking below is a copy of lib/redact.js; tests/extension/elements.test.mjs keeps the two
// in agreement), never resolve a ref of another document or another snapshot token, never
// fill (or type into) a password field unless the caller says the policy allows it, and never
// act when the document's origin is not the one the handler gated.

/** Operations pageOp understands. */
export const PAGE_OPS = Object.freeze([
  "snapshot", "describe", "click", "fill", "press", "select", "check", "hover", "scroll", "getState", "waitFor",
]);

/**
 * Runs in the page. `op` is one of PAGE_OPS; `a` is a plain JSON object:
 *   origin      the origin the handler gated; the op refuses to act anywhere else
 *   target      {ref|selector|text|xpath, index?} (element ops)
 *   docToken    the token of the tab's latest snapshot (ref addressing)
 *   ...         op-specific fields (value, key, checked, to, allowPassword, waitFor fields)
 * Returns a plain object: the op's result, or {error: {code, message}}.
 * @param {string} op
 * @param {Record<string, any>} a
 * @returns {unknown}
 */
export function pageOp(op, a) {
  const STORE = "__tabwardenRefs";
  const MAX_ITEMS = 1000;
  const MAX_NAME = 200;
  const MAX_TEXT = 1000;
  const MAX_MATCHES = 10_000;
  const MAX_WAIT_MS = 120_000;
  const POLL_MS = 100;
  const INTERACTIVE = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "H1", "H2", "H3", "H4", "H5", "H6"]);
  const NO_ROLE = new Set(["", "none", "presentation", "generic"]);
  const TEXTLIKE = new Set(["", "text", "search", "email", "url", "tel", "number", "password", "date", "datetime-local", "month", "time", "week"]);
  const BUTTONLIKE = new Set(["submit", "button", "reset", "image"]);

  class PageError extends Error {
    /** @param {string} code @param {string} message */
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  // ---- masking: a minimal copy of lib/redact.js (keep in agreement; tested) ----
  /** @param {string} digits */
  function luhn(digits) {
    let sum = 0;
    let dbl = false;
    for (let i = digits.length - 1; i >= 0; i--) {
      let d = digits.charCodeAt(i) - 48;
      if (dbl) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
      dbl = !dbl;
    }
    return sum % 10 === 0;
  }
  /** @param {unknown} text */
  function mask(text) {
    if (typeof text !== "string") return "";
    return text.replace(/(?<![0-9])[0-9]+(?:[ \u00a0-][0-9]+)*(?![0-9])/g, (run) => {
      const groups = run.split(/[ \u00a0-]/);
      for (let i = 0; i < groups.length; i++) {
        let digits = "";
        for (let j = i; j < groups.length; j++) {
          digits += groups[j];
          if (digits.length > 19) break;
          if (digits.length >= 13 && luhn(digits)) return "[card]";
        }
      }
      return run;
    });
  }

  // ---- DOM helpers ----
  /** @param {unknown} s */
  const collapse = (s) => (typeof s === "string" ? s.replace(/\s+/g, " ").trim() : "");
  /** @param {string} s @param {number} n */
  const cap = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  /** @param {any} el */
  const tagOf = (el) => String(el.tagName || "").toUpperCase();
  /** @param {any} el */
  const typeOf = (el) => (tagOf(el) === "INPUT" ? String(el.type || "text").toLowerCase() : tagOf(el) === "BUTTON" ? String(el.type || "submit").toLowerCase() : "");
  /** @param {any} el */
  const isPassword = (el) => !!el && tagOf(el) === "INPUT" && typeOf(el) === "password";

  /** Elements under `root` in document order, entering open shadow roots. @param {any} root */
  function* walk(root) {
    /** @type {any[]} */
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop();
      if (node.nodeType === 1) yield node;
      const kids = [];
      if (node.shadowRoot) for (const c of node.shadowRoot.children) kids.push(c);
      for (const c of node.children || []) kids.push(c);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
  }

  /** The focused element, entering open shadow roots. */
  function deepActive() {
    let el = document.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    return el;
  }

  /** @param {any} el */
  function visible(el) {
    if (!el || !el.isConnected) return false;
    if (typeof el.checkVisibility === "function") return el.checkVisibility({ visibilityProperty: true, opacityProperty: true });
    const rects = typeof el.getClientRects === "function" ? el.getClientRects() : [];
    return rects.length > 0;
  }

  /** @param {any} el */
  function textOf(el) {
    const t = typeof el.innerText === "string" ? el.innerText : el.textContent;
    return collapse(t);
  }

  /** @param {any} el */
  function roleOf(el) {
    const explicit = collapse(el.getAttribute && el.getAttribute("role")).split(" ")[0].toLowerCase();
    if (!NO_ROLE.has(explicit)) return explicit;
    const tag = tagOf(el);
    if (tag === "A") return el.hasAttribute("href") ? "link" : "";
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (/^H[1-6]$/.test(tag)) return "heading";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "SELECT") return el.multiple || Number(el.size) > 1 ? "listbox" : "combobox";
    if (tag === "INPUT") {
      const t = typeOf(el);
      if (t === "hidden") return "";
      if (BUTTONLIKE.has(t)) return "button";
      if (t === "checkbox" || t === "radio") return t;
      if (t === "range") return "slider";
      if (t === "number") return "spinbutton";
      if (t === "search") return "searchbox";
      if (t === "file") return "button";
      return "textbox";
    }
    return "";
  }

  /** Accessible-ish name: aria-label, aria-labelledby, labels, alt/title/placeholder, text. @param {any} el */
  function nameOf(el) {
    const aria = collapse(el.getAttribute("aria-label"));
    if (aria) return aria;
    const by = collapse(el.getAttribute("aria-labelledby"));
    if (by) {
      const root = typeof el.getRootNode === "function" ? el.getRootNode() : document;
      const parts = by.split(" ").map((id) => {
        const n = typeof root.getElementById === "function" ? root.getElementById(id) : document.getElementById(id);
        return n ? textOf(n) : "";
      });
      const joined = collapse(parts.join(" "));
      if (joined) return joined;
    }
    const tag = tagOf(el);
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") {
      const t = typeOf(el);
      if (tag === "INPUT" && BUTTONLIKE.has(t) && t !== "image") return collapse(el.value) || (t === "submit" ? "Submit" : t === "reset" ? "Reset" : "");
      const labels = el.labels ? [...el.labels].map(textOf).join(" ") : "";
      if (collapse(labels)) return collapse(labels);
      return collapse(el.getAttribute("placeholder")) || collapse(el.getAttribute("title")) || collapse(el.getAttribute("alt")) || collapse(el.getAttribute("name"));
    }
    return textOf(el) || collapse(el.getAttribute("title")) || collapse(el.getAttribute("alt"));
  }

  /** The value a snapshot/state may show: never a password's, card numbers masked. @param {any} el */
  function shownValue(el) {
    const tag = tagOf(el);
    if (tag === "TEXTAREA" || tag === "SELECT") return mask(String(el.value ?? ""));
    if (tag === "INPUT") {
      const t = typeOf(el);
      if (t === "password" || t === "hidden" || t === "file" || t === "checkbox" || t === "radio" || BUTTONLIKE.has(t)) return undefined;
      return mask(String(el.value ?? ""));
    }
    return undefined;
  }

  /** @param {any} el */
  function describe(el) {
    const role = roleOf(el) || tagOf(el).toLowerCase();
    return `${role} "${cap(mask(nameOf(el)), 80)}"`;
  }

  /** "submit", "link" or "plain": what a click on `el` would do. @param {any} el */
  function classify(el) {
    /** @type {any} */
    let n = el;
    while (n && n.nodeType === 1) {
      const tag = tagOf(n);
      if ((tag === "A" || tag === "AREA") && n.hasAttribute("href")) return linkKind(n);
      if (tag === "BUTTON" || tag === "INPUT") {
        const t = typeOf(n);
        if (t === "submit" || t === "image") return tag === "BUTTON" && !n.form && !n.hasAttribute("type") ? "plain" : "submit";
        return "plain";
      }
      if (collapse(n.getAttribute("type")).toLowerCase() === "submit") return "submit";
      n = n.parentElement || (typeof n.getRootNode === "function" ? n.getRootNode().host : null);
    }
    return "plain";
  }
  /** @param {any} link */
  function linkKind(link) {
    let url;
    try {
      url = new URL(link.getAttribute("href"), document.baseURI);
    } catch {
      return "plain";
    }
    if (url.protocol === "javascript:") return "plain";
    const here = new URL(location.href);
    const strip = (/** @type {URL} */ u) => `${u.origin}${u.pathname}${u.search}`;
    if (strip(url) === strip(here) && url.hash !== "" && !link.hasAttribute("download")) return "plain";
    return "link";
  }

  /** Every element matching a CSS selector, in the document and open shadow roots. @param {string} sel */
  function bySelector(sel) {
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

  /** The element `t` addresses, or a PageError. @param {any} t */
  function resolve(t) {
    if (!t || typeof t !== "object") throw new PageError("bad_request", "no element given");
    const index = Number.isInteger(t.index) ? t.index : 0;
    if (typeof t.ref === "string") {
      const store = globalThis[STORE];
      if (!store || typeof a.docToken !== "string" || store.doc !== a.docToken) {
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

  /** @param {string} type @param {any} init */
  function event(type, init) {
    const C = /^key/.test(type) ? globalThis.KeyboardEvent
      : /^(pointer)/.test(type) ? globalThis.PointerEvent || globalThis.MouseEvent
        : /^(mouse|click)/.test(type) ? globalThis.MouseEvent
          : type === "input" ? globalThis.InputEvent : undefined;
    return typeof C === "function" ? new C(type, init) : new Event(type, init);
  }
  /** @param {any} el */
  function center(el) {
    const r = typeof el.getBoundingClientRect === "function" ? el.getBoundingClientRect() : { left: 0, top: 0, width: 0, height: 0 };
    return { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  }
  /** @param {any} el */
  function usable(el) {
    if (el.disabled || (el.getAttribute && el.getAttribute("aria-disabled") === "true")) {
      throw new PageError("bad_request", `${describe(el)} is disabled`);
    }
  }
  /** @param {any} el */
  function editable(el) {
    const tag = tagOf(el);
    if (tag === "TEXTAREA") return true;
    if (tag === "INPUT") return TEXTLIKE.has(typeOf(el));
    return !!el.isContentEditable;
  }
  /** @param {any} el @param {string} what */
  function refusePassword(el, what) {
    if (isPassword(el) && a.allowPassword !== true) {
      throw new PageError("policy_denied", `refused to ${what} a password field (the policy's passwordFill is off)`);
    }
  }
  /** @param {any} el @param {string} value */
  function setValue(el, value) {
    if (el.isContentEditable && tagOf(el) !== "INPUT" && tagOf(el) !== "TEXTAREA") el.textContent = value;
    else el.value = value;
    el.dispatchEvent(event("input", { bubbles: true, composed: true, inputType: "insertText", data: value }));
    el.dispatchEvent(event("change", { bubbles: true }));
  }
  /** @param {any} form */
  function implicitSubmit(form) {
    const buttons = [...form.elements].filter((b) => (tagOf(b) === "BUTTON" || tagOf(b) === "INPUT") && (typeOf(b) === "submit" || typeOf(b) === "image"));
    const first = buttons[0];
    if (first) {
      if (!first.disabled) first.click();
      return;
    }
    if (typeof form.requestSubmit === "function") form.requestSubmit();
  }
  /** What Enter on `el` would do. @param {any} el */
  function enterKind(el) {
    if (!el || el.nodeType !== 1) return "plain";
    const tag = tagOf(el);
    if (tag === "INPUT" && TEXTLIKE.has(typeOf(el)) && el.form) return "submit";
    if (tag === "INPUT" && BUTTONLIKE.has(typeOf(el))) return classify(el);
    if (tag === "BUTTON" || ((tag === "A" || tag === "AREA") && el.hasAttribute("href"))) return classify(el);
    return "plain";
  }
  /** @param {any} w waitFor spec */
  function condition(w) {
    const list = typeof w.selector === "string" ? bySelector(w.selector) : byText(String(w.text));
    const any = list.some(visible);
    return w.state === "absent" ? !any : any;
  }

  function snapshot() {
    let store = globalThis[STORE];
    if (!store || typeof store.doc !== "string") {
      const bytes = new Uint8Array(16);
      crypto.getRandomValues(bytes);
      store = { doc: [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(""), map: new Map() };
      Object.defineProperty(globalThis, STORE, { value: store, writable: true, configurable: true, enumerable: false });
    }
    const map = new Map();
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
      const ref = `@e${items.length + 1}`;
      map.set(ref, new WeakRef(el));
      /** @type {Record<string, string>} */
      const item = { ref, role: roleOf(el) || (el.isContentEditable ? "textbox" : ""), name: cap(mask(nameOf(el)), MAX_NAME), tag: tag.toLowerCase() };
      const v = shownValue(el);
      if (v !== undefined) item.value = cap(v, MAX_NAME);
      items.push(item);
    }
    store.map = map;
    return { url: String(location.href), title: mask(String(document.title || "")), snapshot: items, truncated, docToken: store.doc };
  }

  async function run() {
    if (typeof a.origin !== "string" || location.origin !== a.origin) {
      throw new PageError("origin_not_approved", "the page left the approved origin");
    }
    if (op === "snapshot") return snapshot();
    if (op === "waitFor") {
      const timeout = Math.min(MAX_WAIT_MS, Math.max(0, Number(a.timeoutMs) || 0));
      const start = Date.now();
      for (;;) {
        if (condition(a)) return { matched: true };
        if (Date.now() - start >= timeout) return { matched: false };
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    }
    if (op === "scroll" && !a.target) {
      const se = document.scrollingElement || document.documentElement;
      if (a.to === "top") scrollTo(0, 0);
      else if (a.to === "bottom") scrollTo(scrollX, se.scrollHeight);
      else scrollTo(Number(a.to.x) || 0, Number(a.to.y) || 0);
      return { scrollX: Math.round(scrollX), scrollY: Math.round(scrollY) };
    }
    const el = !a.target && (op === "press" || op === "describe") ? deepActive() || document.body : resolve(a.target);
    switch (op) {
      case "describe":
        return { kind: a.forKey === undefined ? classify(el) : a.forKey === "Enter" ? enterKind(el) : "plain", desc: describe(el), password: isPassword(el) };
      case "click": {
        usable(el);
        const kind = classify(el);
        if (kind !== "plain" && kind !== a.expectKind) throw new PageError("policy_denied", "the element changed after it was confirmed; try again");
        if (typeof el.scrollIntoView === "function") el.scrollIntoView({ block: "center", inline: "center" });
        const at = center(el);
        for (const type of ["pointerdown", "mousedown", "pointerup", "mouseup"]) {
          el.dispatchEvent(event(type, { bubbles: true, cancelable: true, composed: true, button: 0, ...at }));
        }
        if (typeof el.focus === "function") el.focus();
        el.click();
        return { clicked: true, url: String(location.href) };
      }
      case "fill": {
        if (!editable(el)) throw new PageError("bad_request", `${describe(el)} is not a text field`);
        usable(el);
        if (el.readOnly) throw new PageError("bad_request", `${describe(el)} is read-only`);
        refusePassword(el, "fill");
        if (typeof el.focus === "function") el.focus();
        refusePassword(deepActive(), "fill");
        setValue(el, String(a.value));
        return { filled: true };
      }
      case "press":
        if (a.target && typeof el.focus === "function") el.focus();
        return press(el);
      case "select": {
        if (tagOf(el) !== "SELECT") throw new PageError("bad_request", `${describe(el)} is not a select`);
        usable(el);
        const wanted = Array.isArray(a.value) ? a.value.map(String) : [String(a.value)];
        if (!el.multiple && wanted.length !== 1) throw new PageError("bad_request", "this select takes one value");
        const options = [...el.options];
        const picked = wanted.map((w) => options.find((o) => o.value === w) || options.find((o) => collapse(o.label || o.textContent) === collapse(w)));
        const missing = wanted.filter((_, i) => !picked[i]);
        if (missing.length > 0) throw new PageError("element_not_found", `no option with value or label ${JSON.stringify(cap(missing[0], 100))}`);
        for (const o of options) o.selected = picked.includes(o);
        el.dispatchEvent(event("input", { bubbles: true, composed: true }));
        el.dispatchEvent(event("change", { bubbles: true }));
        return { selected: options.filter((o) => o.selected).map((o) => mask(String(o.value))) };
      }
      case "check": {
        usable(el);
        const want = a.checked === true;
        const native = tagOf(el) === "INPUT" && (typeOf(el) === "checkbox" || typeOf(el) === "radio");
        const state = () => (native ? !!el.checked : el.getAttribute("aria-checked") === "true");
        if (!native && !["checkbox", "switch", "radio", "menuitemcheckbox", "menuitemradio"].includes(roleOf(el))) {
          throw new PageError("bad_request", `${describe(el)} is not a checkbox, radio or switch`);
        }
        if (!want && (native ? typeOf(el) === "radio" : roleOf(el) === "radio") && state()) {
          throw new PageError("bad_request", "a radio button cannot be unchecked; check another one");
        }
        if (state() !== want) el.click();
        return { checked: state() };
      }
      case "hover": {
        if (typeof el.scrollIntoView === "function") el.scrollIntoView({ block: "center", inline: "center" });
        const at = center(el);
        for (const [type, bubbles] of [["pointerover", true], ["pointerenter", false], ["mouseover", true], ["mouseenter", false], ["pointermove", true], ["mousemove", true]]) {
          el.dispatchEvent(event(/** @type {string} */ (type), { bubbles, composed: true, ...at }));
        }
        return { hovered: true };
      }
      case "scroll":
        if (typeof el.scrollIntoView === "function") el.scrollIntoView({ block: "center", inline: "center" });
        return { scrollX: Math.round(scrollX), scrollY: Math.round(scrollY) };
      case "getState": {
        const tag = tagOf(el);
        /** @type {Record<string, unknown>} */
        const out = { tag: tag.toLowerCase(), type: typeOf(el) };
        const v = shownValue(el);
        if (v !== undefined) out.value = cap(v, MAX_TEXT);
        if (tag === "INPUT" && (typeOf(el) === "checkbox" || typeOf(el) === "radio")) out.checked = !!el.checked;
        else if (el.hasAttribute("aria-checked")) out.checked = el.getAttribute("aria-checked") === "true";
        out.disabled = !!el.disabled || el.getAttribute("aria-disabled") === "true";
        out.visible = visible(el);
        out.text = isPassword(el) ? "" : cap(mask(textOf(el)), MAX_TEXT);
        return out;
      }
      default:
        throw new PageError("bad_request", `unknown page operation ${String(op).slice(0, 40)}`);
    }
  }

  /** @param {any} el */
  function press(el) {
    const key = String(a.key);
    const printable = [...key].length === 1;
    if (printable) {
      refusePassword(el, "type into");
      refusePassword(deepActive(), "type into");
    }
    const init = { key, code: printable ? "" : key, bubbles: true, cancelable: true, composed: true };
    const go = el.dispatchEvent(event("keydown", init));
    if (go && (printable || key === "Enter")) el.dispatchEvent(event("keypress", { ...init, charCode: printable ? key.charCodeAt(0) : 13 }));
    if (go && printable && editable(el) && !el.readOnly && !el.disabled && !el.isContentEditable) setValue(el, `${el.value ?? ""}${key}`);
    if (go && key === "Enter") {
      const kind = enterKind(el);
      if (kind !== "plain" && kind !== a.expectKind) throw new PageError("policy_denied", "the element changed after it was confirmed; try again");
      const tag = tagOf(el);
      if (tag === "INPUT" && TEXTLIKE.has(typeOf(el)) && el.form) implicitSubmit(el.form);
      else if (tag === "BUTTON" || tag === "A" || tag === "AREA" || (tag === "INPUT" && BUTTONLIKE.has(typeOf(el)))) el.click();
    }
    el.dispatchEvent(event("keyup", init));
    return { pressed: true };
  }

  return run().catch((err) => ({
    error: err instanceof PageError
      ? { code: err.code, message: err.message }
      : { code: "internal_error", message: "the page operation failed" },
  }));
}
