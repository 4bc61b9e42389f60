// fake-dom.mjs — a tiny DOM, just enough for extension/page/'s element code (pageOp) to run in Node: elements
// with attributes, text, open shadow roots, focus, events, click activation (links navigate,
// submit buttons submit their form, checkboxes toggle) and simple CSS selectors. Test-only.

const SIMPLE = /^([a-z][a-z0-9-]*|\*)?(#[\w-]+)?((?:\.[\w-]+)*)((?:\[[\w-]+(?:=(?:"[^"]*"|'[^']*'|[\w-]+))?\])*)$/i;

/** @param {string} sel */
function compile(sel) {
  const m = SIMPLE.exec(sel.trim());
  if (!m || sel.trim() === "") throw new SyntaxError(`unsupported selector ${sel}`);
  const [, tag, id, classes, attrs] = m;
  const attrList = [...(attrs || "").matchAll(/\[([\w-]+)(?:=(?:"([^"]*)"|'([^']*)'|([\w-]+)))?\]/g)].map((x) => [x[1], x[2] ?? x[3] ?? x[4]]);
  return (el) => (!tag || tag === "*" || el.tagName === tag.toUpperCase())
    && (!id || el.getAttribute("id") === id.slice(1))
    && (classes || "").split(".").filter(Boolean).every((c) => (el.getAttribute("class") || "").split(/\s+/).includes(c))
    && attrList.every(([k, v]) => (v === undefined ? el.hasAttribute(k) : el.getAttribute(k) === v));
}

function* descendants(node) {
  for (const c of node.children) {
    yield c;
    yield* descendants(c);
  }
}

/** @param {string | null} value */
function reflectMethod(value) {
  const m = String(value ?? "").toLowerCase();
  return m === "post" || m === "dialog" ? m : "get";
}

export class FakeElement {
  constructor(doc, tag, attrs = {}) {
    this.ownerDocument = doc;
    this.nodeType = 1;
    this.tagName = tag.toUpperCase();
    this.attrs = new Map(Object.entries(attrs).filter(([k]) => !k.startsWith("_")));
    this.childNodes = [];
    this.parentElement = null;
    this.parentRoot = null; // the shadow root this element is a direct child of
    this.shadowRoot = null;
    this.events = [];
    this.listeners = new Map();
    this.hidden = attrs._hidden === true;
    this._value = attrs.value ?? "";
    this._checked = "checked" in attrs;
    this.selected = "selected" in attrs;
    this.labels = [];
    this.isContentEditable = attrs.contenteditable === "true";
  }
  get children() { return this.childNodes.filter((n) => n.nodeType === 1); }
  get textContent() { return this.childNodes.map((n) => n.textContent).join(""); }
  /** Rendered text: hidden subtrees are left out, like a browser's innerText. */
  get innerText() { return this.hidden ? "" : this.childNodes.map((n) => (n.nodeType === 1 ? n.innerText : n.textContent)).join(""); }
  remove() {
    const parent = this.parentElement ?? this.parentRoot;
    if (parent) parent.childNodes = parent.childNodes.filter((n) => n !== this);
    this.parentElement = null;
    this.parentRoot = null;
  }
  set textContent(v) { this.childNodes = [{ nodeType: 3, textContent: String(v), parentElement: this }]; }
  getAttribute(k) { return this.attrs.has(k) ? this.attrs.get(k) : null; }
  hasAttribute(k) { return this.attrs.has(k); }
  setAttribute(k, v) { this.attrs.set(k, String(v)); }
  removeAttribute(k) { this.attrs.delete(k); }
  get type() {
    const t = (this.getAttribute("type") || "").toLowerCase();
    if (this.tagName === "BUTTON") return t || "submit";
    return t || "text";
  }
  get value() {
    if (this.tagName === "SELECT") return (this.options.find((o) => o.selected) ?? this.options[0])?.value ?? "";
    if (this.tagName === "OPTION") return this.getAttribute("value") ?? this.textContent;
    return this._value;
  }
  set value(v) { this._value = String(v); this.ownerDocument.log.push(["set", this.getAttribute("id"), String(v)]); }
  get checked() { return this._checked; }
  set checked(v) { this._checked = !!v; }
  get disabled() { return this.hasAttribute("disabled"); }
  get readOnly() { return this.hasAttribute("readonly"); }
  get multiple() { return this.hasAttribute("multiple"); }
  get size() { return Number(this.getAttribute("size") || 0); }
  get options() { return [...descendants(this)].filter((e) => e.tagName === "OPTION"); }
  get label() { return this.getAttribute("label") ?? this.textContent; }
  get form() {
    for (let n = this.parentElement; n; n = n.parentElement) if (n.tagName === "FORM") return n;
    return null;
  }
  /** As the DOM reflects them: "get" (also for a missing or unknown value), "post" or "dialog". */
  get method() { return reflectMethod(this.getAttribute("method")); }
  get formMethod() { return this.hasAttribute("formmethod") ? reflectMethod(this.getAttribute("formmethod")) : ""; }
  get elements() { return [...descendants(this)].filter((e) => ["INPUT", "BUTTON", "SELECT", "TEXTAREA"].includes(e.tagName)); }
  get isConnected() {
    let n = this;
    for (;;) {
      if (n === this.ownerDocument.documentElement) return true;
      if (n.parentElement) n = n.parentElement;
      else if (n.parentRoot) n = n.parentRoot.host;
      else return false;
    }
  }
  getRootNode() {
    let n = this;
    while (n.parentElement) n = n.parentElement;
    return n.parentRoot ?? this.ownerDocument;
  }
  contains(o) {
    for (let n = o; n; n = n.parentElement) if (n === this) return true;
    return false;
  }
  checkVisibility() {
    for (let n = this; n; n = n.parentElement ?? n.parentRoot?.host) if (n.hidden) return false;
    return this.isConnected;
  }
  getBoundingClientRect() {
    this.ownerDocument.lastMeasured = this;
    // `moves`: a box that shifts one pixel at every measure (an element being animated).
    // `movesAtFrames`: a box that shifts only when a frame is drawn (a CSS animation: its time
    // advances at animation frames, so between two frames every measure is the same).
    let left = this.moves === true ? 10 + (this.measured = (this.measured ?? 0) + 1) : 10;
    if (this.movesAtFrames === true) left = 10 + (this.ownerDocument.framesDrawn ?? 0);
    return { left, top: 20, width: 100, height: 20, right: left + 100, bottom: 40 };
  }
  scrollIntoView() { this.ownerDocument.log.push(["scrollIntoView", this.getAttribute("id")]); }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(fn);
  }
  dispatchEvent(e) {
    this.events.push(e.type);
    for (const fn of this.listeners.get(e.type) ?? []) fn(e);
    return !e.defaultPrevented;
  }
  focus() { this.ownerDocument.setFocus(this); }
  attachShadow() {
    const root = new FakeShadowRoot(this);
    this.shadowRoot = root;
    return root;
  }
  querySelectorAll(sel) { const f = compile(sel); return [...descendants(this)].filter(f); }
  /**
   * Activation like a browser's el.click(); `trusted`: a person's (or CDP input's) click, which
   * the window's capture listeners see first (isTrusted true) and may stop.
   */
  click({ trusted = false } = {}) {
    if (this.disabled) return;
    const ev = new Event("click", { bubbles: true, cancelable: true });
    if (trusted) {
      let stopped = false;
      Object.defineProperty(ev, "isTrusted", { value: true });
      ev.composedPath = () => [this];
      ev.stopImmediatePropagation = () => { stopped = true; };
      for (const fn of this.ownerDocument.defaultView.listeners.get("click") ?? []) {
        fn(ev);
        if (stopped) return;
      }
      if (ev.defaultPrevented) return;
    }
    if (!this.dispatchEvent(ev)) return;
    const doc = this.ownerDocument;
    for (let n = this; n; n = n.parentElement) {
      if (n.tagName === "A" && n.hasAttribute("href")) {
        const href = n.getAttribute("href");
        if (!href.startsWith("javascript:") && !doc.navigated(new URL(href, doc.url).href, href.startsWith("#"))) return undefined;
        return doc.log.push(["navigate", href]);
      }
      if (n.tagName === "INPUT" && (n.type === "checkbox" || n.type === "radio")) {
        n._checked = n.type === "radio" ? true : !n._checked;
        return n.dispatchEvent(new Event("change"));
      }
      if ((n.tagName === "BUTTON" || n.tagName === "INPUT") && n.type === "submit") {
        if (!n.form) return undefined;
        if (!doc.navigated(new URL(n.form.getAttribute("action") ?? "", doc.url).href, false)) return undefined;
        return doc.log.push(["submit", n.form.getAttribute("id")]);
      }
    }
  }
  requestSubmit() {
    this.ownerDocument.navigated(new URL(this.getAttribute("action") ?? "", this.ownerDocument.url).href, false);
    this.ownerDocument.log.push(["submit", this.getAttribute("id")]);
  }
  /** Insert element `k` as this element's first child (moving it if it is elsewhere). */
  prepend(k) {
    k.remove();
    k.parentElement = this;
    this.childNodes.unshift(k);
    return this;
  }
  append(...kids) {
    for (const k of kids) {
      if (typeof k === "string") this.childNodes.push({ nodeType: 3, textContent: k, parentElement: this });
      else {
        k.parentElement = this;
        this.childNodes.push(k);
      }
    }
    return this;
  }
}

class FakeShadowRoot {
  constructor(host) {
    this.host = host;
    this.nodeType = 11;
    this.childNodes = [];
    this.activeElement = null;
  }
  get children() { return this.childNodes; }
  append(...kids) {
    for (const k of kids) {
      k.parentRoot = this;
      this.childNodes.push(k);
    }
    return this;
  }
  querySelectorAll(sel) {
    const f = compile(sel);
    return this.childNodes.flatMap((c) => [c, ...descendants(c)]).filter(f);
  }
  getElementById(id) { return this.querySelectorAll(`#${id}`)[0] ?? null; }
}

export class FakeDocument {
  constructor(url, title = "") {
    this.log = [];
    this.url = url;
    this.title = title;
    this.world = undefined; // the isolated world's __tabwardenRefs for this document
    this.documentElement = new FakeElement(this, "html");
    this.body = new FakeElement(this, "body");
    this.documentElement.append(this.body);
    this.activeElement = this.body;
    /** The window's Navigation API object: a navigate event for every navigation activation starts. */
    this.navigation = new EventTarget();
    /** The window: its capture listeners (only trusted clicks go through them). */
    const listeners = new Map();
    this.defaultView = {
      listeners,
      addEventListener: (type, fn) => listeners.set(type, [...(listeners.get(type) ?? []), fn]),
      removeEventListener: (type, fn) => listeners.set(type, (listeners.get(type) ?? []).filter((f) => f !== fn)),
    };
    /** The element last measured (getBoundingClientRect), which is at any point unless `cover` is set. */
    this.lastMeasured = null;
    /** An element that is on top of everything (a banner over the page). */
    this.cover = null;
  }
  elementFromPoint() { return this.cover ?? this.lastMeasured; }
  /** A trusted click at (x, y), as CDP input makes one: on whatever is there. */
  clickAt(x, y) { this.elementFromPoint(x, y)?.click({ trusted: true }); }
  get baseURI() { return this.url; }
  /**
   * Fire the navigate event a browser fires when a link or form starts navigating to `url`;
   * false when a listener cancelled it (nothing navigates then).
   */
  navigated(url, sameDocument) {
    const ev = new Event("navigate", { cancelable: true });
    Object.assign(ev, { destination: { url, sameDocument }, downloadRequest: null });
    return this.navigation.dispatchEvent(ev);
  }
  /** h("button", {id: "b"}, "Sign in") */
  h(tag, attrs = {}, ...kids) { return new FakeElement(this, tag, attrs).append(...kids); }
  setFocus(el) {
    // Focus inside a shadow tree: the document sees the host, the root the element.
    let top = el;
    while (top.getRootNode() !== this) {
      const root = top.getRootNode();
      root.activeElement = top;
      top = root.host;
    }
    this.activeElement = top;
  }
  getElementById(id) { return this.querySelectorAll(`#${id}`)[0] ?? null; }
  querySelectorAll(sel) { return this.documentElement.querySelectorAll(sel); }
  evaluate() { throw new Error("xpath unsupported in the fake"); }
}

const STORE = "__tabwardenRefs";

/**
 * Run `func(...args)` as if in `doc`'s isolated world: document/location/scroll globals point at
 * the fake, and the world's refs store is swapped in and out.
 */
export async function runIn(doc, func, args) {
  const g = globalThis;
  const u = new URL(doc.url);
  g.document = doc;
  g.location = { href: doc.url, origin: u.origin };
  g.navigation = doc.navigation;
  g.scrollX = 0;
  g.scrollY = 0;
  g.innerWidth = 1280;
  g.innerHeight = 720;
  g.scrollTo = (x, y) => { g.scrollX = x; g.scrollY = y; };
  // Animation frames every 16 ms (`doc.frameMs` on a machine too busy to draw on time), or none
  // at all in a document whose rendering is throttled (`doc.noFrames`: a cross-origin frame
  // Chrome draws no frames for). A document no longer the one shown draws none: a frame asked
  // for in an earlier test does not come in a later one's.
  g.requestAnimationFrame = (cb) => (doc.noFrames === true ? 0 : setTimeout(() => {
    if (g.document !== doc) return;
    doc.framesDrawn = (doc.framesDrawn ?? 0) + 1;
    cb(Date.now());
  }, doc.frameMs ?? 16));
  if (doc.world === undefined) delete g[STORE];
  else Object.defineProperty(g, STORE, { value: doc.world, writable: true, configurable: true });
  try {
    return await func(...args);
  } finally {
    doc.world = g[STORE];
    delete g[STORE];
    delete g.navigation;
  }
}
