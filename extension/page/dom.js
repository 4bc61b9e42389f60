// page/dom.js — what the page-side element code knows about the DOM: tag and type, visibility,
// role, accessible name, the value a tool may show, what a click or Enter would do, and the one
// error type the page side throws (PageError, a table code plus a message). Runs in the page's
// isolated world (injected by executeScript({files}) after page/redact.js; worker/elements.js lists
// the order) and under Node's tests with tests/extension/helpers/fake-dom.mjs. It must never
// return a password field's value (shownValue), never pass a card-like number through a name or
// value (page/redact.js is the one masking rule), and never change the page.
//
// Loading: a classic script that is also an ES module, defining only `tabwardenDom` on
// globalThis (page/redact.js's header says why and how). Nothing here touches the document
// until a function is called.

var tabwardenDom = (() => {
  const { maskCards } = globalThis.tabwardenRedact;
  /** Tags page_snapshot lists without a role. */
  const INTERACTIVE = new Set(["A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "SUMMARY", "H1", "H2", "H3", "H4", "H5", "H6"]);
  const NO_ROLE = new Set(["", "none", "presentation", "generic"]);
  const TEXTLIKE = new Set(["", "text", "search", "email", "url", "tel", "number", "password", "date", "datetime-local", "month", "time", "week"]);
  const BUTTONLIKE = new Set(["submit", "button", "reset", "image"]);

  /** An error the page side reports as {error: {code, message}}; `code` is a table code. */
  class PageError extends Error {
    /** @param {string} code @param {string} message */
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

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

  /**
   * Elements under `root` in document order, entering open shadow roots; with `texts`, their
   * text nodes too, each where it stands among its siblings (page_snapshot's text runs).
   * @param {any} root @param {boolean} [texts]
   */
  function* walk(root, texts = false) {
    /** @type {any[]} */
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop();
      if (node.nodeType === 1 || (texts && node.nodeType === 3)) yield node;
      const kids = [];
      if (node.shadowRoot) for (const c of texts ? node.shadowRoot.childNodes : node.shadowRoot.children) kids.push(c);
      for (const c of (texts ? node.childNodes : node.children) || []) kids.push(c);
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
    if (tag === "TEXTAREA" || tag === "SELECT") return maskCards(String(el.value ?? ""));
    if (tag === "INPUT") {
      const t = typeOf(el);
      if (t === "password" || t === "hidden" || t === "file" || t === "checkbox" || t === "radio" || BUTTONLIKE.has(t)) return undefined;
      return maskCards(String(el.value ?? ""));
    }
    return undefined;
  }

  /** @param {any} el */
  function describe(el) {
    const role = roleOf(el) || tagOf(el).toLowerCase();
    return `${role} "${cap(maskCards(nameOf(el)), 80)}"`;
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


  /** @param {any} el */
  function editable(el) {
    const tag = tagOf(el);
    if (tag === "TEXTAREA") return true;
    if (tag === "INPUT") return TEXTLIKE.has(typeOf(el));
    return !!el.isContentEditable;
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

  return Object.freeze({
    INTERACTIVE, NO_ROLE, TEXTLIKE, BUTTONLIKE, PageError,
    collapse, cap, tagOf, typeOf, isPassword, walk, deepActive, visible, textOf, roleOf, nameOf, shownValue,
    describe, classify, editable, enterKind, maskCards,
  });
})();
globalThis.tabwardenDom = tabwardenDom;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
