// page/actions.js — the element operations in the page: describe, fill, press, select, check,
// clear, scroll, getState and focus, each `(el, a)` on an element page/locate.js resolved, plus
// the page-wide waitFor, scroll, settle, reveal, pointAt (where trusted input lands; with
// `armClick`, page_click's watch of the click it is about to receive), clickResult (what that
// click did) and inputResult (whether trusted typing took; worker/keyboard.js). Runs in the
// page's isolated world after page/redact.js, page/dom.js and page/locate.js (and under Node's
// tests). It must never fill or type into a password field (the resolved element or the one that
// has focus) unless `a.allowPassword` is true, never return a password's value or text, never
// pass a card-like number through a value or text, never arm a click on a submit button or link
// whose kind differs from the one the person confirmed (`a.armClick.expectKind`), nor on an
// element something else covers, and never let page_click's click go through on another element.
//
// Loading: a classic script that is also an ES module, defining only `tabwardenActions` on
// globalThis (page/redact.js's header says why and how). Between "focus" and "inputResult" one
// pending input, and between "point" (armClick) and "clickResult" one armed click, are kept under
// symbols of this isolated world's globalThis (the page never sees them), since every call
// injects this file afresh.

var tabwardenActions = (() => {
  const { TEXTLIKE, BUTTONLIKE, PageError, collapse, cap, tagOf, typeOf, isPassword, visible, textOf, roleOf,
    shownValue, describe, classify, editable, enterKind, maskCards } = globalThis.tabwardenDom;
  const { bySelector, byText } = globalThis.tabwardenLocate;
  /** Longest value or text getState returns (a snapshot row's shortened value is read whole here:
   * as long as page_fill may type); a longer one says so in `shortened`. */
  const MAX_TEXT = 100_000;
  /** Longest waitFor, and how often it looks. */
  const MAX_WAIT_MS = 120_000;
  const POLL_MS = 100;
  /**
   * How long a click that submitted a form waits for the navigate event of the navigation the
   * submission planned (Chrome starts it in a later task). Normally one task; the bound only
   * matters when the submission goes nowhere.
   */
  const SUBMIT_NAVIGATE_MS = 1000;

  /** @param {string} type @param {any} init */
  function event(type, init) {
    const C = /^key/.test(type) ? globalThis.KeyboardEvent
      : /^(pointer)/.test(type) ? globalThis.PointerEvent || globalThis.MouseEvent
        : /^(mouse|click)/.test(type) ? globalThis.MouseEvent
          : type === "input" ? globalThis.InputEvent : undefined;
    return typeof C === "function" ? new C(type, init) : new Event(type, init);
  }
  /** @param {any} el */
  function usable(el) {
    if (el.disabled || (el.getAttribute && el.getAttribute("aria-disabled") === "true")) {
      throw new PageError("bad_request", `${describe(el)} is disabled`);
    }
  }
  /** @param {any} el @param {string} what @param {Record<string, any>} a */
  function refusePassword(el, what, a) {
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
  /** @param {any} w waitFor spec: {ref (with w.docToken) | selector | text, state} */
  function condition(w) {
    if (typeof w.ref === "string") {
      /** @type {any} */
      let el = null;
      try {
        el = globalThis.tabwardenLocate.resolve({ ref: w.ref }, w.docToken);
      } catch (err) {
        if (!(err instanceof PageError) || err.code !== "bad_ref") throw err;
      }
      const shown = el !== null && visible(el);
      return w.state === "absent" ? !shown : shown;
    }
    const list = typeof w.selector === "string" ? bySelector(w.selector) : byText(String(w.text));
    const any = list.some(visible);
    return w.state === "absent" ? !any : any;
  }
  /** @param {any} el */
  function scrollIn(el) {
    if (typeof el.scrollIntoView === "function") el.scrollIntoView({ block: "center", inline: "center" });
  }

  /** A form submission that navigates this document: not method=dialog, not aimed at another window. @param {any} e */
  function submitsHere(e) {
    const form = e.target;
    const target = e.submitter?.getAttribute?.("formtarget") ?? form?.getAttribute?.("target") ?? "";
    return String(form?.method ?? "").toLowerCase() !== "dialog" && ["", "_self", "_top", "_parent"].includes(String(target).toLowerCase());
  }

  /**
   * Start watching whether this document starts a navigation, from the Navigation API's navigate
   * event (neither cancelled nor a download); `finish()` stops and says: {sameDocument, url}, or
   * null. A form submission fires its navigate event in a later task, so after a submit event
   * nobody cancelled `finish` waits for it (at most SUBMIT_NAVIGATE_MS); otherwise it answers at once.
   * @returns {{finish: () => Promise<{sameDocument: boolean, url: string} | null>}}
   */
  function watchNavigation() {
    const nav = /** @type {any} */ (globalThis).navigation;
    /** @type {any} */
    let seen = null;
    /** @type {any} */
    let submitted = null;
    let wake = () => {};
    /** @param {any} e */
    const onNavigate = (e) => {
      if (seen === null) seen = e;
      wake();
    };
    /** @param {any} e */
    const onSubmit = (e) => {
      submitted = e;
    };
    nav?.addEventListener?.("navigate", onNavigate);
    globalThis.addEventListener?.("submit", onSubmit, true);
    async function finish() {
      try {
        if (seen === null && submitted !== null && !submitted.defaultPrevented && submitsHere(submitted)) {
          /** @type {ReturnType<typeof setTimeout> | undefined} */
          let timer;
          await new Promise((resolve) => {
            wake = () => resolve(undefined);
            timer = setTimeout(wake, SUBMIT_NAVIGATE_MS);
          });
          clearTimeout(timer);
          // The event's other listeners (the page's) run after ours and may still cancel it.
          if (seen !== null) await new Promise((resolve) => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => resolve(undefined);
            ch.port2.postMessage(null);
          });
        }
      } finally {
        nav?.removeEventListener?.("navigate", onNavigate);
        globalThis.removeEventListener?.("submit", onSubmit, true);
      }
      if (seen === null || seen.defaultPrevented || (seen.downloadRequest !== null && seen.downloadRequest !== undefined)) return null;
      return { sameDocument: seen.destination?.sameDocument === true, url: String(seen.destination?.url ?? "") };
    }
    return { finish };
  }

  /**
   * An element operation: `el` is the resolved element (or, for describe/press without a target,
   * the focused one), `a` the call's arguments.
   * @typedef {(el: any, a: Record<string, any>) => Record<string, unknown> | Promise<Record<string, unknown>>} ElementOp
   */

  /** Most field names a submit's confirmation lists (the rest are only counted). */
  const MAX_FIELDS = 20;
  const NOT_SENT = new Set(["submit", "button", "reset", "image"]);
  /**
   * The NAMES of the fields a submit from `el` would send, for the confirm window — never a
   * value (so never a password's), page text capped and card-masked, at most MAX_FIELDS (the
   * rest counted in `more`), and the method it is sent by; null when `el` belongs to no form.
   * @param {any} el
   * @returns {{names: string[], more: number, method: string} | null}
   */
  function submittedFields(el) {
    let n = el;
    let form = null;
    while (n && n.nodeType === 1 && !form) {
      form = tagOf(n) === "FORM" ? n : (n.form ?? null);
      n = n.parentElement;
    }
    if (!form || !form.elements) return null;
    const seen = new Set();
    for (const f of form.elements) {
      const name = collapse(typeof f.name === "string" ? f.name : String(f.getAttribute?.("name") ?? ""));
      const t = typeOf(f);
      if (name === "" || f.disabled || NOT_SENT.has(t) || !["INPUT", "SELECT", "TEXTAREA"].includes(tagOf(f))) continue;
      if ((t === "checkbox" || t === "radio") && !f.checked) continue;
      seen.add(cap(maskCards(name), 60) + (isPassword(f) ? " (password)" : ""));
    }
    const names = [...seen];
    // How it is sent: the submitter's formmethod wins over the form's method (both reflect as
    // "get", "post" or "dialog"); GET puts every value into the address.
    const submitter = el !== form && el.hasAttribute?.("formmethod") ? el.formMethod : null;
    const method = String(submitter ?? form.method ?? "get").toLowerCase();
    return { names: names.slice(0, MAX_FIELDS), more: Math.max(0, names.length - MAX_FIELDS), method };
  }

  /**
   * The URL the link `el` is (or is inside) points to, resolved here against the document's base
   * (page_follow: it never passes through the model); null when no link with an href encloses
   * it, "" when its href does not parse. The caller refuses javascript: and other schemes.
   * @param {any} el
   * @returns {string | null}
   */
  function linkHref(el) {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement || (typeof n.getRootNode === "function" ? n.getRootNode().host : null)) {
      const tag = tagOf(n);
      if ((tag === "A" || tag === "AREA") && n.hasAttribute("href")) {
        try {
          return new URL(n.getAttribute("href"), document.baseURI).href;
        } catch {
          return "";
        }
      }
    }
    return null;
  }

  /** @type {ElementOp} */
  const describeOp = (el, a) => {
    const kind = a.forKey === undefined ? classify(el) : a.forKey === "Enter" ? enterKind(el) : "plain";
    return {
      kind, desc: describe(el), password: isPassword(el), tag: tagOf(el).toLowerCase(), ...(kind === "submit" ? { fields: submittedFields(el) } : {}),
      ...(a.forFollow === true ? { href: linkHref(el) } : {}),
    };
  };

  /** The key the one armed click lives under (page_click: pointAt with `armClick`, then clickResult). */
  const ARMED_CLICK = Symbol.for("tabwarden.armedClick");
  /** How long clickResult waits for the trusted click the worker dispatched to reach the page. */
  const CLICK_ARRIVE_MS = 2000;
  /** How long an armed click outlives a call that never asked for its result. */
  const ARMED_MS = 10_000;

  /**
   * page_click, before the worker's trusted click (CDP input at the element's point): watch the
   * first trusted click this document receives. On `el` (or inside it) it is ours: its
   * navigation is watched. On anything else (the page slid something over the point as it was
   * clicked) it is stopped before any listener after ours and its default action cancelled, and
   * the element it hit is reported (`elsewhere`).
   * @param {any} el
   */
  function armClick(el) {
    disarmClick();
    const win = el.ownerDocument?.defaultView ?? globalThis;
    /** @type {any} */
    const state = { el, win, clicked: false, elsewhere: null, nav: watchNavigation(), timer: undefined, wake: () => {} };
    /** @param {any} e */
    state.onClick = (e) => {
      if (!e.isTrusted || state.clicked || state.elsewhere !== null) return;
      const at = typeof e.composedPath === "function" ? e.composedPath()[0] : e.target;
      // The element went away while it was pressed (a menu that acts on mousedown): it was ours.
      if (holds(el, at) || !el.isConnected) state.clicked = true;
      else {
        e.preventDefault();
        e.stopImmediatePropagation();
        state.elsewhere = describe(at);
      }
      state.wake();
    };
    win.addEventListener("click", state.onClick, true);
    state.timer = setTimeout(() => {
      if (/** @type {any} */ (globalThis)[ARMED_CLICK] === state) disarmClick();
    }, ARMED_MS);
    /** @type {any} */ (globalThis)[ARMED_CLICK] = state;
  }
  /** Forget the armed click (its listeners); returns it. */
  function disarmClick() {
    const state = /** @type {any} */ (globalThis)[ARMED_CLICK];
    if (!state) return null;
    delete (/** @type {any} */ (globalThis))[ARMED_CLICK];
    state.win.removeEventListener("click", state.onClick, true);
    clearTimeout(state.timer);
    return state;
  }

  /**
   * After the worker's trusted click: whether it reached the armed element (`clicked`), landed
   * on another one (`elsewhere`, its description; nothing of it went through), and the
   * navigation it started (page/actions.js watchNavigation). `armed` false: this document never
   * armed one (the click already took the tab to another document). `a.cancel`: the click is
   * not going to be made; just forget it.
   * @param {Record<string, any>} a
   */
  async function clickResult(a) {
    if (a.cancel === true) disarmClick();
    const state = /** @type {any} */ (globalThis)[ARMED_CLICK];
    if (!state) return { armed: false, url: String(location.href) };
    if (!state.clicked && state.elsewhere === null) {
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let timer;
      await new Promise((resolve) => {
        state.wake = () => resolve(undefined);
        timer = setTimeout(resolve, CLICK_ARRIVE_MS);
      });
      clearTimeout(timer);
    }
    disarmClick();
    const navigation = await state.nav.finish();
    return {
      armed: true, clicked: state.clicked, ...(state.elsewhere !== null ? { elsewhere: state.elsewhere } : {}),
      url: String(location.href), navigation: state.elsewhere === null ? navigation : null,
    };
  }

  /** @type {ElementOp} */
  function fill(el, a) {
    if (!editable(el)) throw new PageError("bad_request", `${describe(el)} is not a text field`);
    usable(el);
    if (el.readOnly) throw new PageError("bad_request", `${describe(el)} is read-only`);
    refusePassword(el, "fill", a);
    if (typeof el.focus === "function") el.focus();
    refusePassword(focusedDeep().el, "fill", a);
    arm(el, { mode: "replace", expect: String(a.value), guard: false });
    setValue(el, String(a.value));
    return { filled: true };
  }

  /** The key the one pending input lives under (see the header). */
  const PENDING = Symbol.for("tabwarden.pendingInput");
  /**
   * Whether the pointer is over this document now: its root element matches `:hover`. Chrome
   * routes the pointer into an out-of-process frame only once it has placed that frame; until
   * then input at the frame's point reaches the enclosing page (handlers/pointer.js clickAt
   * waits for this before it presses).
   */
  function pointerHere() {
    const root = document.documentElement;
    return { inside: root !== null && typeof root.matches === "function" && root.matches(":hover") };
  }

  /** How long an armed guard outlives a call that never read its result. */
  const GUARD_MS = 10_000;
  /** What a text field or editor holds (read inside the page only; never returned). @param {any} el */
  const contentOf = (el) => (el.isContentEditable && tagOf(el) !== "INPUT" && tagOf(el) !== "TEXTAREA" ? String(el.textContent ?? "") : String(el.value ?? ""));

  /**
   * The element that really has focus, through open shadow roots and same-origin frames;
   * `opaque` when the focus is inside a frame this code cannot read (another site).
   * @returns {{el: any, inFrame: boolean, opaque: boolean}}
   */
  function focusedDeep() {
    /** @type {any} */
    let doc = document;
    let inFrame = false;
    for (let depth = 0; depth < 32; depth++) {
      /** @type {any} */
      let el = doc.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      if (el && (tagOf(el) === "IFRAME" || tagOf(el) === "FRAME")) {
        let inner = null;
        try {
          inner = el.contentDocument;
        } catch {
          inner = null;
        }
        if (!inner) return { el, inFrame, opaque: true };
        doc = inner;
        inFrame = true;
        continue;
      }
      return { el: el || doc.body, inFrame, opaque: false };
    }
    return { el: null, inFrame, opaque: true };
  }

  /**
   * Remember `el` as the node the next trusted input is for: its content before, what a
   * replace expects, and a guard on its window. `guard` "node": any insertion whose target, or
   * the node that has focus when it is dispatched, is not `el` is cancelled, and so is one during
   * which the focus leaves `el` (a page listener moving it while the insertion's beforeinput is
   * dispatched would otherwise redirect the text); "password": the same for a password field
   * (page_keys, where Tab may move the focus). A password field is refused unless
   * `allowPassword`. The guard sets `blocked` when it cancelled, `moved` when the focus moved
   * during an insertion it could not cancel; it lives until inputResult or GUARD_MS.
   * @param {any} el
   * @param {{mode: "insert" | "replace" | "keys", expect?: string, insert?: string,
   *   guard: "node" | "password" | false, allowPassword?: boolean}} o
   */
  function arm(el, o) {
    disarm();
    const win = el.ownerDocument?.defaultView ?? globalThis;
    /** @type {any} */
    const state = { el, win, before: contentOf(el), ...o, blocked: false, moved: false, listeners: [], timer: undefined };
    if (o.guard) {
      const refused = (/** @type {any} */ n) => (o.guard === "node" && n !== el) || (isPassword(n) && o.allowPassword !== true);
      /** The insertion being dispatched, while its listeners run. @type {any} */
      let current = null;
      /** @param {any} e */
      const cancel = (e) => {
        e.preventDefault();
        state.blocked = true;
      };
      /** @param {any} e */
      const onBefore = (e) => {
        const at = typeof e.composedPath === "function" ? e.composedPath()[0] : e.target;
        if (refused(at) || refused(focusedDeep().el)) return cancel(e);
        current = e;
        setTimeout(() => {
          if (current === e) current = null;
        }, 0);
      };
      // Last on the way back up: a page listener that moved the focus during the dispatch
      // (Chrome moves activeElement at once and sends the focus events later) is caught here.
      /** @param {any} e */
      const onLate = (e) => {
        if (!e.defaultPrevented && refused(focusedDeep().el)) cancel(e);
      };
      // A focus change during an insertion nothing above could cancel (a page that stopped the
      // event before this window saw it bubble): said, never reported as "nothing typed".
      /** @param {any} e */
      const onFocus = (e) => {
        if (current === null || current.defaultPrevented) return;
        const at = e.composedPath?.()[0] ?? e.target;
        if (e.type === "focusout" ? o.guard === "node" && at === el : refused(at)) state.moved = true;
      };
      state.listeners = [["beforeinput", onBefore, true], ["beforeinput", onLate, false], ["focusout", onFocus, true], ["focusin", onFocus, true]];
      for (const [type, fn, capture] of state.listeners) win.addEventListener(type, fn, capture);
      state.timer = setTimeout(disarm, GUARD_MS);
    }
    /** @type {any} */ (globalThis)[PENDING] = state;
  }
  /** Forget the pending input (removing its guard); returns it. */
  function disarm() {
    const state = /** @type {any} */ (globalThis)[PENDING];
    if (!state) return null;
    delete (/** @type {any} */ (globalThis))[PENDING];
    for (const [type, fn, capture] of state.listeners) state.win.removeEventListener(type, fn, capture);
    clearTimeout(state.timer);
    return state;
  }

  /**
   * Whether the pending input took, compared inside the page: `applied` "yes" (a replace holds
   * what was expected; an insert holds the text), "no" (unchanged, or the guard cancelled it:
   * `blocked`), or "unclear" (changed otherwise, e.g. the page reformatted it); `length` of the
   * node's content after. Never its content.
   */
  function inputResult() {
    const s = disarm();
    if (s === null) return { applied: "unclear", length: 0 };
    const flags = { ...(s.blocked ? { blocked: true } : {}), ...(s.moved ? { moved: true } : {}) };
    if (s.mode === "keys") return { applied: "unclear", length: 0, ...flags };
    const after = contentOf(s.el);
    const norm = (/** @type {string} */ t) => (s.el.isContentEditable ? collapse(t) : t);
    let applied;
    if (s.mode === "replace" && norm(after) === norm(String(s.expect))) applied = "yes";
    else if (after === s.before || s.blocked) applied = "no";
    else if (s.mode === "insert" && after.includes(String(s.insert))) applied = "yes";
    else applied = "unclear";
    return { applied, length: [...after].length, ...flags };
  }

  /** What Space on `el` does: a button's click (submit or plain), else nothing. @param {any} el */
  const spaceKind = (el) => (el && (tagOf(el) === "BUTTON" || (tagOf(el) === "INPUT" && BUTTONLIKE.has(typeOf(el)))) ? classify(el) : "plain");

  /**
   * Focus the target (when given), then report the node that really has focus: its role and
   * name, what `a.forKey` ("Enter" or " ") would do on it, its ref (top document only, with
   * `a.refFloor`). `a.guardPassword` refuses a password field; `a.typing` also wants a text
   * field and arms the pending input (`a.arm` "insert" or "replace": the content selected
   * first). Focus inside another site's frame is refused: nothing there can be checked.
   * @type {ElementOp}
   */
  function focusOp(el, a) {
    if (a.target) {
      usable(el);
      if (typeof el.focus === "function") el.focus();
    }
    const f = focusedDeep();
    if (f.opaque) throw new PageError("policy_denied", "the focus is inside a frame from another site, which tabwarden cannot check; focus a field of this page first");
    const node = f.el;
    if (a.typing === true || a.guardPassword === true) refusePassword(node, "type into", a);
    if (a.typing === true) {
      if (!node || !editable(node)) throw new PageError("bad_request", `${node ? describe(node) : "nothing"} has the focus, which is not a text field; name the field (ref, selector, text, xpath) or click into it first`);
      if (node.readOnly || node.disabled) throw new PageError("bad_request", `${describe(node)} is read-only or disabled`);
      if (a.arm === "replace") {
        if (typeof node.select === "function" && !node.isContentEditable) node.select();
        else {
          const sel = node.ownerDocument.getSelection();
          const range = node.ownerDocument.createRange();
          range.selectNodeContents(node);
          sel.removeAllRanges();
          sel.addRange(range);
        }
      }
      arm(node, { mode: a.arm === "replace" ? "replace" : "insert", expect: a.expect, insert: a.insert, guard: "node", allowPassword: a.allowPassword === true });
    } else if (a.guardPassword === true) {
      // page_keys: a key before this one that the guard cancelled ends the call here.
      if (disarm()?.blocked === true) throw new PageError("policy_denied", "a key was cancelled because it would have typed into a password field (the policy's passwordFill is off)");
      if (node) arm(node, { mode: "keys", guard: "password", allowPassword: a.allowPassword === true });
    }
    /** @type {Record<string, unknown>} */
    const out = {
      desc: node ? describe(node) : "nothing", inFrame: f.inFrame,
      kind: a.forKey === "Enter" ? enterKind(node) : a.forKey === " " ? spaceKind(node) : "plain",
      url: String(location.href),
    };
    if (node && !f.inFrame && Number.isSafeInteger(a.refFloor)) {
      const { documentRefs, refFor } = globalThis.tabwardenLocate;
      const store = documentRefs(a.refFloor);
      const ref = refFor(store, node);
      if (ref !== undefined) out.ref = ref;
      Object.assign(out, { docToken: store.doc, lastRef: store.next });
    }
    return out;
  }

  /** @type {ElementOp} */
  function press(el, a) {
    if (a.target && typeof el.focus === "function") el.focus();
    const key = String(a.key);
    const printable = [...key].length === 1;
    if (printable) {
      refusePassword(el, "type into", a);
      refusePassword(focusedDeep().el, "type into", a);
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

  /**
   * Choose options of a native <select>: `a.value` (a string, or an array for <select multiple>)
   * matches each option by value, else by label; `a.label` by label only; `a.optionIndex` by
   * position. A custom combobox or listbox is wrong_element: it has no options to set.
   * @type {ElementOp}
   */
  function select(el, a) {
    if (tagOf(el) !== "SELECT") {
      const role = roleOf(el);
      const custom = role === "combobox" || role === "listbox" ? ` (a custom ${role}: click it open, then click the option)` : "";
      throw new PageError("wrong_element", `${describe(el)} is not a <select>${custom}`);
    }
    if (a.unasked === true) throw new PageError("policy_denied", "the element changed after it was described; try again");
    usable(el);
    /** @type {any[]} */
    const options = [...el.options];
    /** @type {any[]} */
    let picked;
    /** @type {string[]} */
    let wanted = [];
    if (Number.isInteger(a.optionIndex)) {
      picked = [options[a.optionIndex]];
      if (!picked[0]) throw new PageError("element_not_found", `this select has ${options.length} options; there is no option ${a.optionIndex}`);
    } else {
      const byLabel = typeof a.label === "string";
      wanted = byLabel ? [String(a.label)] : Array.isArray(a.value) ? a.value.map(String) : [String(a.value)];
      const labelled = (/** @type {string} */ w) => options.find((o) => collapse(o.label || o.textContent) === collapse(w));
      picked = wanted.map((w) => (byLabel ? labelled(w) : options.find((o) => o.value === w) || labelled(w)));
    }
    if (!el.multiple && picked.length !== 1) throw new PageError("bad_request", "this select takes one value (it is not <select multiple>)");
    const missing = wanted.filter((_, i) => !picked[i]);
    if (missing.length > 0) throw new PageError("element_not_found", `no option with value or label ${JSON.stringify(cap(maskCards(missing[0]), 100))}`);
    if (picked.some((o) => o.disabled)) throw new PageError("bad_request", "that option is disabled");
    for (const o of options) o.selected = picked.includes(o);
    el.dispatchEvent(event("input", { bubbles: true, composed: true }));
    el.dispatchEvent(event("change", { bubbles: true }));
    const chosen = options.filter((o) => o.selected);
    return {
      selected: chosen.map((o) => maskCards(String(o.value))),
      labels: chosen.map((o) => cap(maskCards(collapse(o.label || o.textContent)), 200)),
    };
  }

  /** Empty a text field (the password rule as fill's). @type {ElementOp} */
  function clear(el, a) {
    if (!editable(el)) throw new PageError("wrong_element", `${describe(el)} is not a text field`);
    usable(el);
    if (el.readOnly) throw new PageError("bad_request", `${describe(el)} is read-only`);
    refusePassword(el, "clear", a);
    if (typeof el.focus === "function") el.focus();
    refusePassword(focusedDeep().el, "clear", a);
    setValue(el, "");
    return { cleared: true };
  }

  /** @type {ElementOp} */
  function check(el, a) {
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

  /**
   * Scroll an element into view; with `a.container` the element is the scrolled box instead
   * (page scrollBox's `to` / `dx`, `dy`).
   * @type {ElementOp}
   */
  function scrollTo(el, a) {
    if (a.container === true) return scrollBox(el, a);
    scrollIn(el);
    return position(null);
  }

  /** @type {ElementOp} */
  function getState(el) {
    const tag = tagOf(el);
    /** @type {Record<string, unknown>} */
    const out = { tag: tag.toLowerCase(), type: typeOf(el) };
    const v = shownValue(el);
    if (v !== undefined) out.value = cap(v, MAX_TEXT);
    if (v !== undefined && v.length > MAX_TEXT) out.shortened = { value: { chars: v.length } };
    if (tag === "INPUT" && (typeOf(el) === "checkbox" || typeOf(el) === "radio")) out.checked = !!el.checked;
    else if (el.hasAttribute("aria-checked")) out.checked = el.getAttribute("aria-checked") === "true";
    out.disabled = !!el.disabled || el.getAttribute("aria-disabled") === "true";
    out.visible = visible(el);
    const text = isPassword(el) ? "" : maskCards(textOf(el));
    out.text = cap(text, MAX_TEXT);
    if (text.length > MAX_TEXT) out.shortened = { ...(out.shortened ?? {}), text: { chars: text.length, readWith: "page_text" } };
    return out;
  }

  /** The operations on one element, by op name (a Map: "constructor" is not an op). */
  /** @type {ReadonlyMap<string, ElementOp>} */
  const ELEMENT_OPS = new Map([
    ["describe", describeOp], ["fill", fill], ["press", press], ["select", select],
    ["check", check], ["scroll", scrollTo], ["getState", getState], ["focus", focusOp], ["clear", clear],
  ]);

  /**
   * Poll the waitFor condition `a` until it holds or `a.timeoutMs` (capped) passes.
   * @param {Record<string, any>} a
   * @returns {Promise<{matched: boolean}>}
   */
  async function waitFor(a) {
    const timeout = Math.min(MAX_WAIT_MS, Math.max(0, Number(a.timeoutMs) || 0));
    const start = Date.now();
    for (;;) {
      if (condition(a)) return { matched: true };
      if (Date.now() - start >= timeout) return { matched: false };
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /**
   * Where a scrolled box is: its offsets, and whether it is at its top / bottom (within 2 px).
   * @param {any} box an element, or null for the page
   */
  function position(box) {
    const se = document.scrollingElement || document.documentElement;
    const page = box === null || box === se;
    const x = Number(page ? scrollX : box.scrollLeft) || 0;
    const y = Number(page ? scrollY : box.scrollTop) || 0;
    const height = Number(page ? globalThis.innerHeight : box.clientHeight) || 0;
    const total = Number(page ? se?.scrollHeight : box.scrollHeight) || 0;
    return { scrollX: Math.round(x), scrollY: Math.round(y), atTop: y <= 2, atBottom: y + height >= total - 2 };
  }

  /**
   * Scroll a box (an element, or null for the page): `a.to` "top" | "bottom" | {x, y}, or by
   * `a.dx` / `a.dy` CSS pixels.
   * @param {any} box
   * @param {Record<string, any>} a
   */
  function scrollBox(box, a) {
    const se = document.scrollingElement || document.documentElement;
    const [x, y] = box === null ? [scrollX, scrollY] : [box.scrollLeft, box.scrollTop];
    const bottom = Number(box === null ? se?.scrollHeight : box.scrollHeight) || 0;
    const to = a.to;
    const where = to === "top" ? [x, 0] : to === "bottom" ? [x, bottom]
      : to !== null && typeof to === "object" ? [Number(to.x) || 0, Number(to.y) || 0]
        : [x + (Number(a.dx) || 0), y + (Number(a.dy) || 0)];
    if (box === null) globalThis.scrollTo(where[0], where[1]);
    else box.scrollTo(where[0], where[1]);
    return position(box);
  }

  /** Scroll the page: `a.to` "top" | "bottom" | {x, y}, or `a.dx` / `a.dy`. @param {Record<string, any>} a */
  const scrollPage = (a) => scrollBox(null, a);

  /** Resolve after `ms` (a timer, not a frame: a hidden agent tab may get no frames). @param {number} ms */
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));

  /**
   * Wait until the document is quiet: no DOM mutation (anywhere, open shadow roots' hosts
   * included as the observer sees them), no same-document navigation in progress and the
   * document loaded, for `a.stableMs`; at most `a.timeoutMs`.
   * @param {Record<string, any>} a
   * @returns {Promise<{settled: boolean, waitedMs: number, quietMs: number}>}
   */
  async function settle(a) {
    const stable = Math.min(MAX_WAIT_MS, Math.max(0, Number(a.stableMs) || 0));
    const timeout = Math.min(MAX_WAIT_MS, Math.max(0, Number(a.timeoutMs) || 0));
    const start = Date.now();
    let last = start;
    const observer = new MutationObserver(() => {
      last = Date.now();
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    try {
      for (;;) {
        const now = Date.now();
        const busy = document.readyState !== "complete" || /** @type {any} */ (globalThis).navigation?.transition;
        if (busy) last = now;
        if (now - last >= stable) return { settled: true, waitedMs: now - start, quietMs: now - last };
        if (now - start >= timeout) return { settled: false, waitedMs: now - start, quietMs: now - last };
        await pause(Math.min(POLL_MS, Math.max(10, stable / 4)));
      }
    } finally {
      observer.disconnect();
    }
  }

  /** The first visible match of `a.selector` / `a.text` inside `box` (null: anywhere). @param {any} box @param {Record<string, any>} a */
  function firstMatch(box, a) {
    const list = typeof a.selector === "string" ? bySelector(a.selector) : byText(String(a.text));
    return list.find((el) => visible(el) && (box === null || holds(box, el))) ?? null;
  }

  /**
   * Scroll `a.container` (or the page) a screenful at a time until a match of `a.selector` /
   * `a.text` shows, at most `a.maxSteps` steps and `a.timeoutMs`; it stops early when the list
   * stops growing (at the bottom, and three looks later no taller). The match is scrolled into
   * view and gets a ref of this document (as a snapshot's), made with `a.refFloor`.
   * @param {Record<string, any>} a
   */
  async function reveal(a) {
    const box = a.container ? globalThis.tabwardenLocate.resolve(a.container, a.docToken) : null;
    const se = document.scrollingElement || document.documentElement;
    const el = box === null ? se : box;
    const timeout = Math.min(MAX_WAIT_MS, Math.max(0, Number(a.timeoutMs) || 0));
    const maxSteps = Math.max(0, Number(a.maxSteps) || 0);
    const start = Date.now();
    let steps = 0;
    let stalled = 0;
    let reason = "";
    let found = firstMatch(box, a);
    while (found === null) {
      if (steps >= maxSteps) { reason = "maxSteps"; break; }
      if (Date.now() - start >= timeout) { reason = "timeout"; break; }
      const height = el.scrollHeight;
      const page = box === null;
      el.scrollBy(0, Math.max(40, Math.floor((page ? globalThis.innerHeight : el.clientHeight) * 0.8)));
      steps += 1;
      await pause(50);
      found = firstMatch(box, a);
      if (found !== null) break;
      if (position(box).atBottom && el.scrollHeight <= height) {
        stalled += 1;
        if (stalled >= 3) { reason = "end"; break; }
        await pause(150); // a list that loads more at the bottom gets a moment to grow
      } else {
        stalled = 0;
      }
    }
    /** @type {Record<string, unknown>} */
    const out = { found: found !== null, steps, ...position(box) };
    if (found === null) return { ...out, stopped: reason };
    scrollIn(found);
    const { documentRefs, refFor } = globalThis.tabwardenLocate;
    const store = documentRefs(a.refFloor);
    const ref = refFor(store, found);
    return { ...out, ...position(box), ...(ref !== undefined ? { ref } : {}), desc: describe(found), docToken: store.doc, lastRef: store.next };
  }

  /** The innermost element at viewport point (x, y), through open shadow roots. @param {number} x @param {number} y */
  function hitAt(x, y) {
    /** @type {any} */
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }
  /** `outer` is `el` or holds it, across shadow roots. @param {any} outer @param {any} el */
  function holds(outer, el) {
    for (let n = el; n; n = n.parentNode || n.host) if (n === outer) return true;
    return false;
  }
  /** The part of `el`'s box inside the viewport, or null. @param {any} el */
  function shownBox(el) {
    const r = el.getBoundingClientRect();
    const left = Math.max(0, r.left);
    const top = Math.max(0, r.top);
    const right = Math.min(innerWidth, r.right);
    const bottom = Math.min(innerHeight, r.bottom);
    return right - left >= 1 && bottom - top >= 1 ? { left, top, right, bottom } : null;
  }

  /**
   * Where trusted input (CDP Input, handlers/input.js) should land: the centre of the target's
   * box clipped to the viewport (scrolled into view first when none of it shows), or the viewport
   * point a.x, a.y; what is really there (elementFromPoint), whether that is another element
   * (`covered`), and what a click there would do. With `a.refFloor` the hit element gets a ref of
   * this document (the document's ref store is made if it has none).
   * @param {Record<string, any>} a
   */
  function pointAt(a) {
    /** @type {any} */
    let el = null;
    let x;
    let y;
    if (a.target) {
      el = globalThis.tabwardenLocate.resolve(a.target, a.docToken);
      if (a.armClick) {
        // page_click: the element asked about is the element clicked, or nothing is.
        usable(el);
        const kind = classify(el);
        if (kind !== "plain" && kind !== a.armClick.expectKind) throw new PageError("policy_denied", "the element changed after it was confirmed; try again");
      }
      let box = shownBox(el);
      if (box === null) {
        scrollIn(el);
        box = shownBox(el);
      }
      if (box === null) throw new PageError("element_not_found", `${describe(el)} has no visible area in the viewport`);
      x = (box.left + box.right) / 2;
      y = (box.top + box.bottom) / 2;
    } else {
      x = Number(a.x);
      y = Number(a.y);
      if (!(x >= 0 && y >= 0 && x < innerWidth && y < innerHeight)) {
        throw new PageError("bad_request", `x, y must lie inside the viewport (${innerWidth} x ${innerHeight} CSS pixels)`);
      }
    }
    let hit = hitAt(x, y);
    if (a.armClick && el !== null && hit && !holds(el, hit)) {
      // page_click: something sits over the part that shows (a sticky header over an element
      // half scrolled under it): centre the element in the viewport, as a person would, and look again.
      scrollIn(el);
      const box = shownBox(el);
      if (box !== null) {
        x = (box.left + box.right) / 2;
        y = (box.top + box.bottom) / 2;
        hit = hitAt(x, y);
      }
    }
    if (!hit) throw new PageError("element_not_found", "nothing is at that point of the viewport");
    const target = el ?? hit;
    const covered = el !== null && !holds(el, hit);
    /** @type {Record<string, unknown>} */
    const out = {
      x: Math.round(x * 100) / 100, y: Math.round(y * 100) / 100, covered,
      desc: describe(target), hitTarget: describe(hit), kind: classify(covered ? hit : target),
      hitKind: classify(hit), url: String(location.href),
    };
    if (Number.isSafeInteger(a.refFloor)) {
      const { documentRefs, refFor } = globalThis.tabwardenLocate;
      const store = documentRefs(a.refFloor);
      const ref = refFor(store, hit);
      if (ref !== undefined) out.hitRef = ref;
      Object.assign(out, { docToken: store.doc, lastRef: store.next });
    }
    if (a.armClick && !covered) armClick(el);
    return out;
  }

  /** How long one look at a box waits for the next animation frame before it looks anyway. */
  const FRAME_MS = 80;
  /**
   * How long the looks go on without seeing one real frame before a still box is taken as still:
   * a box only moves at frames (a CSS animation's time advances there), so looks that saw none
   * prove nothing on a machine too busy to draw on time; a document Chrome draws no frames for
   * (a throttled cross-origin frame) pays this once.
   */
  const NO_FRAME_MS = 1000;
  /** Animation frames seen drawn in this document: each nextFrame's, even one that came late. */
  let framesDrawn = 0;
  /**
   * The next animation frame, or FRAME_MS later when none comes: Chrome may draw no frame for a
   * long time in a throttled cross-origin frame; no frame is never movement. A frame that comes
   * after its timer still counts in framesDrawn.
   * @returns {Promise<void>}
   */
  function nextFrame() {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, FRAME_MS);
      if (typeof globalThis.requestAnimationFrame === "function") {
        globalThis.requestAnimationFrame(() => {
          framesDrawn++;
          clearTimeout(timer);
          resolve();
        });
      }
    });
  }
  /** @param {any} el */
  function disabled(el) {
    let off = !!el.disabled || (el.getAttribute && el.getAttribute("aria-disabled") === "true");
    try {
      off = off || (typeof el.matches === "function" && el.matches(":disabled"));
    } catch {
      // a DOM without :disabled (tests' fake DOM): the attribute checks above stand
    }
    return off;
  }
  /** Keys of a keyframe that are not animated properties. */
  const KEYFRAME_KEYS = new Set(["offset", "computedOffset", "easing", "composite"]);
  /**
   * Animated properties that move nothing: colours, shadows, opacity and the like. Any other (a
   * transform, an offset, a size, a custom property a transform may read) can move the element.
   */
  const PAINT_ONLY = new Set([
    "color", "background", "backgroundColor", "backgroundImage", "backgroundPosition", "backgroundSize",
    "opacity", "boxShadow", "textShadow", "outline", "outlineColor", "outlineOffset", "outlineStyle",
    "outlineWidth", "borderColor", "borderTopColor", "borderRightColor", "borderBottomColor",
    "borderLeftColor", "fill", "stroke", "strokeDasharray", "strokeDashoffset", "filter",
    "backdropFilter", "caretColor", "textDecorationColor", "accentColor", "columnRuleColor", "visibility",
  ]);
  /**
   * Whether a running animation can move `el`: one on it or on an element that holds it (across
   * shadow roots), over time (a scroll-driven animation moves only as the page scrolls, which the
   * box looks see), of a property not in PAINT_ONLY. Keyframes it cannot read count as moving.
   * @param {any} el
   */
  function animatedToMove(el) {
    const Scroll = /** @type {any} */ (globalThis).ScrollTimeline;
    const scrollDriven = (/** @type {any} */ t) => typeof Scroll === "function" && t instanceof Scroll;
    for (let n = el; n; n = n.parentElement ?? n.parentNode?.host ?? null) {
      if (typeof n.getAnimations !== "function") continue;
      for (const anim of n.getAnimations()) {
        if (anim.playState !== "running" || anim.playbackRate === 0 || scrollDriven(anim.timeline)) continue;
        let frames;
        try {
          frames = anim.effect.getKeyframes();
        } catch {
          return true;
        }
        for (const f of frames) for (const k of Object.keys(f)) if (!KEYFRAME_KEYS.has(k) && !PAINT_ONLY.has(k)) return true;
      }
    }
    return false;
  }
  /** @param {any} el */
  const boxKey = (el) => {
    const r = el.getBoundingClientRect();
    return `${r.left},${r.top},${r.width},${r.height}`;
  };

  /**
   * One look at whether the target of an element action is actionable (handlers/ready.js looks
   * again until it is): it exists (else element_not_found from resolve), is visible, is enabled
   * (`a.enabled`), shows the same box over two animation-frame intervals (three looks, one at
   * least after a real frame unless none comes within NO_FRAME_MS; two, and no excuse, when an
   * animation is moving it: animatedToMove), and
   * (`a.hit`, page_click) is what is at the centre of its shown box: the very hit test pointAt
   * makes (hitAt, holds, shownBox). Answers {ok: true} or {fail, desc, hitTarget?}.
   * @param {Record<string, any>} a
   */
  async function actionable(a) {
    const el = globalThis.tabwardenLocate.resolve(a.target, a.docToken);
    const desc = describe(el);
    if (a.visible !== false && !visible(el)) return { fail: "element_not_visible", desc };
    if (a.enabled === true && disabled(el)) return { fail: "element_disabled", desc };
    if (a.hit === true && shownBox(el) === null) scrollIn(el);
    let seen = boxKey(el);
    const started = Date.now();
    // An element an animation is moving is still only when two real frames showed the same box
    // (frames it does not get, on a starved machine, prove nothing); any other, after one.
    const needFrames = animatedToMove(el) ? 2 : 1;
    const before = framesDrawn;
    for (let n = 0; n < 2 || (framesDrawn - before < needFrames && Date.now() - started < NO_FRAME_MS); n++) {
      await nextFrame();
      if (!el.isConnected) return { fail: "element_not_found", desc };
      const now = boxKey(el);
      if (now !== seen) return { fail: "element_not_stable", desc };
      seen = now;
    }
    if (framesDrawn - before < needFrames && needFrames > 1) return { fail: "element_not_stable", desc };
    if (a.hit === true) {
      const centre = () => {
        const box = shownBox(el);
        return box === null ? null : hitAt((box.left + box.right) / 2, (box.top + box.bottom) / 2);
      };
      if (shownBox(el) === null) return { fail: "element_not_visible", desc };
      let hit = centre();
      // As pointAt does for the click: something over the part that shows (a sticky header over
      // an element half scrolled under it): centre the element in the viewport, look again.
      if (!hit || !holds(el, hit)) {
        scrollIn(el);
        hit = centre();
      }
      if (!hit || !holds(el, hit)) return { fail: "element_covered", desc, hitTarget: hit ? describe(hit) : "nothing" };
    }
    return { ok: true };
  }

  return Object.freeze({ ELEMENT_OPS, waitFor, scrollPage, settle, reveal, pointAt, actionable, inputResult, clickResult, pointerHere });
})();
globalThis.tabwardenActions = tabwardenActions;
void 0; // the script's completion value, which executeScript returns: nothing to serialise
