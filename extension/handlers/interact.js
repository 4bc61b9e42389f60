// handlers/interact.js — the element tools: page_snapshot, page_click, page_fill, page_press,
// page_select, page_check, page_clear, page_scroll, page_settle, page_reveal, page_wait_for,
// page_get_state, (elementTools) what they share with handlers/input.js's trusted-input tools,
// and (withAftermath) every action's optional waitFor and observe. Thin glue:
// every call checks ownership, runs the origin gate on the tab's CURRENT url, then injects the
// page code (lib/elements.js PAGE_FILES, extension/page/) and runs its pageOp through
// callPageOp (the page side refuses to act on another origin). It must never
// touch the chrome global, never act without the person's confirmation where the policy asks
// for one (a grace covers only repeated submit/link clicks on the same tab), never fill a
// password field unless policy.passwordFill, and never accept a ref from another document.

import { BridgeError } from "../lib/bridge-error.js";
import { confirmTimeoutMs, refuseUnlessAllowed } from "../lib/confirm-window.js";
import { PAGE_FILES, callPageOp } from "../lib/elements.js";
import { CODE } from "../lib/error-codes.js";
import { createGrace } from "../lib/grace.js";
import { isApproved, originOf } from "../lib/origin.js";
import { isPlainObject } from "../lib/wire.js";
import { STEP_MAX_MS, argTabId, ownedTab, step } from "./support.js";
import { needsConfirm } from "./tabs.js";

/** Codes a page operation may answer with; anything else becomes internal_error. */
/** @type {ReadonlySet<string>} */
const PAGE_CODES = new Set([CODE.BAD_REF, CODE.ELEMENT_NOT_FOUND, CODE.BAD_REQUEST, CODE.POLICY_DENIED, CODE.ORIGIN_NOT_APPROVED,
  CODE.WRONG_ELEMENT]);
/** Element addressing fields: exactly one per call. */
const ADDRESS = ["ref", "selector", "text", "xpath"];
const MAX_ADDRESS = 2000;
const MAX_VALUE = 100_000;
const MAX_KEY = 32;
const MAX_WAIT_MS = 120_000;
/** Farthest one page_scroll moves by dx / dy. */
const MAX_SCROLL = 1_000_000;
/** Most screenfuls one page_reveal scrolls. */
const MAX_REVEAL_STEPS = 2000;
/**
 * How often the page code is injected for one call when the tab keeps committing new documents
 * between the injection and the call (each new document starts without it); then internal_error.
 */
const MAX_INJECTIONS = 3;
const DEFAULT_WAIT_MS = 5000;
/** Page ops bounded by the call's deadline only (they carry their own timeoutMs). */
const LONG_OPS = new Set(["waitFor", "settle", "reveal"]);
/** The policy's confirm name for a click kind ("submit" or "link"). @param {string} kind */
export const confirmName = (kind) => (kind === "submit" ? "submit" : "link_click");
/** How long after a click dispatched as input (page_mouse: no page-side navigate event to
 * watch) the tab is looked at to tell whether it started navigating. */
export const NAV_PROBE_MS = 250;

/**
 * The element a call addresses, or null when none is given and `optional`.
 * @param {Record<string, unknown>} args
 * @param {{optional?: boolean}} [opts]
 * @returns {{ref?: string, selector?: string, text?: string, xpath?: string, index: number} | null}
 */
export function argTarget(args, { optional = false } = {}) {
  const given = ADDRESS.filter((k) => args[k] !== undefined && args[k] !== null);
  if (given.length === 0 && optional) return null;
  if (given.length !== 1) throw new BridgeError(CODE.BAD_REQUEST, "give exactly one of ref, selector, text, xpath");
  const key = given[0];
  const v = args[key];
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_ADDRESS) {
    throw new BridgeError(CODE.BAD_REQUEST, `${key} must be a non-empty string of at most ${MAX_ADDRESS} characters`);
  }
  if (key === "ref" && !/^@e[1-9][0-9]{0,6}$/.test(v)) throw new BridgeError(CODE.BAD_REQUEST, 'ref must look like "@e12" (from page_snapshot)');
  const index = args.index ?? 0;
  if (!Number.isInteger(index) || /** @type {number} */ (index) < 0 || /** @type {number} */ (index) > 100_000) {
    throw new BridgeError(CODE.BAD_REQUEST, "index must be an integer >= 0");
  }
  return { [key]: v, index: /** @type {number} */ (index) };
}

/**
 * A wait condition `{ref?|selector?|text?, state, timeoutMs}` (exactly one of the three).
 * @param {unknown} w
 * @returns {{ref?: string, selector?: string, text?: string, state: "visible" | "absent", timeoutMs: number}}
 */
export function argWait(w) {
  if (!isPlainObject(w)) throw new BridgeError(CODE.BAD_REQUEST, "waitFor must be an object");
  const str = (/** @type {unknown} */ v) => (typeof v === "string" && v.length > 0 && v.length <= MAX_ADDRESS ? v : null);
  const ref = str(w.ref);
  const selector = str(w.selector);
  const text = str(w.text);
  if ([ref, selector, text].filter((v) => v !== null).length !== 1) throw new BridgeError(CODE.BAD_REQUEST, "wait for exactly one of ref, selector, text");
  if (ref !== null && !/^@e[1-9][0-9]{0,6}$/.test(ref)) throw new BridgeError(CODE.BAD_REQUEST, 'ref must look like "@e12" (from page_snapshot)');
  const state = w.state ?? "visible";
  if (state !== "visible" && state !== "absent") throw new BridgeError(CODE.BAD_REQUEST, 'state must be "visible" or "absent"');
  const t = w.timeoutMs ?? DEFAULT_WAIT_MS;
  if (!Number.isInteger(t) || /** @type {number} */ (t) < 0 || /** @type {number} */ (t) > MAX_WAIT_MS) {
    throw new BridgeError(CODE.BAD_REQUEST, `timeoutMs must be an integer in [0, ${MAX_WAIT_MS}]`);
  }
  const what = ref !== null ? { ref } : selector !== null ? { selector } : { text: /** @type {string} */ (text) };
  return { ...what, state, timeoutMs: /** @type {number} */ (t) };
}

/**
 * What page_select chooses: exactly one of `value` (a string, or an array for <select multiple>),
 * `values` (an array), `label` (a string, matched by label only) or `optionIndex`.
 * @param {Record<string, unknown>} args
 * @returns {{value?: string | string[], label?: string, optionIndex?: number}}
 */
export function argChoice(args) {
  const given = ["value", "values", "label", "optionIndex"].filter((k) => args[k] !== undefined && args[k] !== null);
  if (given.length !== 1) throw new BridgeError(CODE.BAD_REQUEST, "give exactly one of value, values, label, optionIndex");
  const [key] = given;
  const v = args[key];
  const strings = (/** @type {unknown} */ x) => Array.isArray(x) && x.length > 0 && x.length <= 1000 && x.every((y) => typeof y === "string" && y.length <= MAX_VALUE);
  if (key === "optionIndex") {
    if (!Number.isInteger(v) || /** @type {number} */ (v) < 0 || /** @type {number} */ (v) > 100_000) throw new BridgeError(CODE.BAD_REQUEST, "optionIndex must be an integer >= 0");
    return { optionIndex: /** @type {number} */ (v) };
  }
  if (key === "label") {
    if (typeof v !== "string" || v.length > MAX_VALUE) throw new BridgeError(CODE.BAD_REQUEST, "label must be a string");
    return { label: v };
  }
  if (key === "values") {
    if (!strings(v)) throw new BridgeError(CODE.BAD_REQUEST, "values must be a non-empty array of strings");
    return { value: /** @type {string[]} */ (v) };
  }
  if (!(typeof v === "string" && v.length <= MAX_VALUE) && !strings(v)) throw new BridgeError(CODE.BAD_REQUEST, "value must be a string or a non-empty array of strings");
  return { value: /** @type {string | string[]} */ (v) };
}

/**
 * An optional integer argument in [0, max].
 * @param {Record<string, unknown>} args
 * @param {string} name
 * @param {number} fallback
 * @param {number} max
 */
export function argMs(args, name, fallback, max) {
  const v = args[name] ?? fallback;
  if (!Number.isInteger(v) || /** @type {number} */ (v) < 0 || /** @type {number} */ (v) > max) {
    throw new BridgeError(CODE.BAD_REQUEST, `${name} must be an integer in [0, ${max}]`);
  }
  return /** @type {number} */ (v);
}

/**
 * The browser calls these handlers use beyond support.js's BrowserApi.
 * @typedef {object} InteractBrowserApi
 * @property {(tabId: number, files: readonly string[]) => Promise<unknown>} executeFiles
 *   runs extension files in the tab's isolated world, in order
 * @property {(tabId: number, func: (...a: any[]) => unknown, args: unknown[], world?: "ISOLATED" | "MAIN") =>
 *   Promise<Array<{result?: unknown}>>} executeScriptArgs runs `func(...args)` in the tab
 */

/**
 * The shared machinery of the element tools (this family and handlers/input.js): ownership and
 * the origin gate, running page code, asking the person, the optional waitFor. `deps.docTokens`
 * is the tab -> latest-snapshot map every family shares (actions.js makes one).
 * @param {import("./support.js").HandlerDeps & {browser: InteractBrowserApi, grace?: import("../lib/grace.js").Grace,
 *   now?: () => number, sleep?: (ms: number) => Promise<void>, docTokens?: DocTokens}} deps
 */
export function elementTools(deps) {
  const { browser, ensureOrigin, confirm } = deps;
  const grace = deps.grace ?? createGrace();
  const now = deps.now ?? (() => Date.now());
  const sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const docTokens = deps.docTokens ?? new Map();

  /** The tab's latest snapshot token for this session, or null. @param {number} tabId @param {import("./support.js").Ctx} ctx */
  const tokenOf = (tabId, ctx) => {
    const saved = docTokens.get(tabId);
    return saved !== undefined && saved.session === ctx.session ? saved.token : null;
  };

  /**
   * Ownership, then the origin gate on the tab's current url.
   * @param {Record<string, unknown>} args
   * @param {import("./support.js").Ctx} ctx
   * @param {string} tool
   */
  async function open(args, ctx, tool) {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(tab?.url, ctx, tool);
    const saved = docTokens.get(tabId);
    const docToken = saved !== undefined && saved.session === ctx.session ? saved.token : null;
    return { tabId, tab, origin, docToken };
  }

  /**
   * Run the page code's pageOp(op, a) in the tab (files first, then the call), each injection a
   * `step` bounded by the call's deadline (a waitFor by the deadline only); a page-side error
   * becomes a BridgeError.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string} op
   * @param {Record<string, unknown>} a
   * @returns {Promise<Record<string, any>>}
   */
  async function page(ctx, tabId, op, a) {
    let out;
    const cap = LONG_OPS.has(op) ? Infinity : STEP_MAX_MS;
    try {
      for (let attempt = 1; ; attempt++) {
        await step(ctx, `prepare the page for ${op}`, browser.executeFiles(tabId, PAGE_FILES));
        const results = await step(ctx, op, browser.executeScriptArgs(tabId, callPageOp, [op, a], "ISOLATED"), cap);
        out = Array.isArray(results) ? results[0]?.result : undefined;
        // {notInstalled: true}: a new document committed between the two injections and nothing
        // ran; inject into that one (it must pass the same origin check inside).
        if (!(isPlainObject(out) && out.notInstalled === true)) break;
        if (attempt >= MAX_INJECTIONS) {
          out = undefined;
          break;
        }
      }
    } catch (err) {
      if (err instanceof BridgeError) throw err; // a step's timeout
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not run in this page (it may be navigating); retry");
    }
    if (!isPlainObject(out)) throw new BridgeError(CODE.INTERNAL_ERROR, "could not run in this page (it may be navigating); retry");
    if (isPlainObject(out.error)) {
      const code = typeof out.error.code === "string" && PAGE_CODES.has(out.error.code) ? out.error.code : CODE.INTERNAL_ERROR;
      throw new BridgeError(code, typeof out.error.message === "string" ? out.error.message : "the page operation failed");
    }
    return out;
  }

  /**
   * Ask the person, unless a grace covers it. `graceKind` is recorded after an allow.
   * @param {import("./support.js").Ctx} ctx
   * @param {{tabId: number, origin: string, tool: string, detail: string, graceKind?: string}} q
   */
  async function ask(ctx, { tabId, origin, tool, detail, graceKind }) {
    if (graceKind !== undefined && grace.covered(tabId, graceKind, now())) return;
    const decision = await confirm({ kind: "action", tool, origin, detail, timeoutMs: confirmTimeoutMs(ctx.policy) });
    refuseUnlessAllowed(decision, "this action");
    if (deps.ownership.owner(tabId) !== ctx.session) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    if (graceKind !== undefined) grace.allow(tabId, graceKind, now(), isPlainObject(ctx.policy) ? ctx.policy.clickGraceSeconds : 0);
  }

  /**
   * The optional waitFor after an action.
   * @param {Record<string, unknown>} args
   * @param {number} tabId
   * @param {import("./support.js").Ctx} ctx
   * @param {string} tool
   */
  async function waitAfter(args, tabId, ctx, tool) {
    if (args.waitFor === undefined || args.waitFor === null) return;
    const w = argWait(args.waitFor);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await ensureOrigin(tab?.url, ctx, tool);
    const r = await page(ctx, tabId, "waitFor", { ...w, origin, docToken: tokenOf(tabId, ctx) });
    if (r.matched !== true) throw new BridgeError(CODE.TIMEOUT, `${tool} was done, but waitFor was not met within ${w.timeoutMs} ms`);
  }


  /**
   * After a click: when it started a cross-document navigation, wait for it (`watch` was armed
   * before the click); a navigation to a site that is not approved answers origin_not_approved.
   * `nav` is what the page saw during a click it ran (its navigate event, page/actions.js
   * navigationOf: null = none); a click dispatched as input (page_mouse) has none to give
   * (undefined), so the tab is looked at NAV_PROBE_MS later instead.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {string} origin the origin the click was gated on
   * @param {{promise: Promise<unknown>, cancel: () => void}} watch
   * @param {string} urlBefore the document's url when it was clicked
   * @param {Record<string, unknown> | null} [nav]
   * @returns {Promise<{navigated: boolean, after: any}>}
   */
  async function landing(ctx, tabId, origin, watch, urlBefore, nav) {
    let after;
    let navigated;
    let crossDocument;
    if (nav !== undefined) {
      // none → done at once; same-document (pushState, #hash) → the url already moved;
      // cross-document → wait for the tab to finish loading the next document.
      crossDocument = nav !== null && nav.sameDocument !== true;
      // A same-document navigation cannot leave the origin; its destination is where it went.
      const moved = nav !== null && !crossDocument && typeof nav.url === "string" && originOf(nav.url) === origin ? nav.url : urlBefore;
      after = { url: moved };
      navigated = nav !== null;
    } else {
      await sleep(NAV_PROBE_MS);
      try {
        after = await browser.getTab(tabId);
      } catch {
        watch.cancel();
        deps.ownership.release(tabId);
        throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      }
      // A cross-document navigation shows as status "loading"; a same-document one only as a
      // new url.
      crossDocument = after?.status === "loading";
      navigated = crossDocument || (typeof after?.url === "string" && after.url !== urlBefore);
    }
    if (crossDocument) {
      try {
        await watch.promise;
        after = await browser.getTab(tabId);
      } catch {
        deps.ownership.release(tabId);
        throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      }
    } else {
      watch.cancel();
    }
    if (navigated && (crossDocument || nav === undefined)) {
      const approved = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
      const o = originOf(after?.url);
      if (o !== origin && !isApproved(o, approved)) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the click led to an unapproved origin");
    }
    return { navigated, after };
  }

  return { grace, now, docTokens, open, page, ask, waitAfter, landing };
}

/**
 * tabId -> {session, token} of the tab's latest snapshot, and `floor`: the highest ref number
 * any document of this tab has handed out, where the next document's numbering starts — so a
 * ref kept from an earlier document never names an element of a later one.
 * @typedef {Map<number, {session: string, token: string, floor: number}>} DocTokens
 */

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: InteractBrowserApi, grace?: import("../lib/grace.js").Grace,
 *   now?: () => number, sleep?: (ms: number) => Promise<void>, docTokens?: DocTokens}} deps
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function interactHandlers(deps) {
  const { loads } = deps;
  const { grace, now, docTokens, open, page, ask, landing } = elementTools(deps);

  /** @type {import("../lib/dispatch.js").Handler} */
  async function snapshot(args, ctx) {
    const { tabId, origin } = await open(args, ctx, "page_snapshot");
    const floor = docTokens.get(tabId)?.floor ?? 0;
    const r = await page(ctx, tabId, "snapshot", { origin, refFloor: floor });
    if (typeof r.docToken !== "string" || !Array.isArray(r.snapshot) || !Number.isSafeInteger(r.lastRef)) {
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page");
    }
    docTokens.set(tabId, { session: ctx.session, token: r.docToken, floor: Math.max(floor, r.lastRef) });
    return { url: String(r.url), title: String(r.title), snapshot: r.snapshot, truncated: r.truncated === true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function click(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_click");
    const base = { origin, target, docToken };
    const d = await page(ctx, tabId, "describe", base);
    const kind = d.kind === "submit" || d.kind === "link" ? d.kind : "plain";
    if (kind !== "plain" && needsConfirm(ctx, confirmName(kind))) {
      const what = kind === "submit" ? "This submits a form." : "This follows a link to another page.";
      await ask(ctx, { tabId, origin, tool: "page_click", detail: `Click ${d.desc} on ${origin}? ${what}`, graceKind: confirmName(kind) });
    }
    const watch = loads.watch(tabId);
    let r;
    try {
      r = await page(ctx, tabId, "click", { ...base, expectKind: kind });
    } catch (err) {
      watch.cancel();
      throw err;
    }
    // The page says whether the click started a navigation (its navigate event).
    const nav = isPlainObject(r.navigation) ? r.navigation : null;
    const { navigated, after } = await landing(ctx, tabId, origin, watch, String(r.url), nav);
    const url = typeof after?.url === "string" && after.url !== "" ? after.url : String(r.url);
    return { clicked: true, navigated, url };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function fill(args, ctx) {
    const target = argTarget(args);
    if (typeof args.value !== "string" || args.value.length > MAX_VALUE) throw new BridgeError(CODE.BAD_REQUEST, `value must be a string of at most ${MAX_VALUE} characters`);
    const { tabId, origin, docToken } = await open(args, ctx, "page_fill");
    const allowPassword = isPlainObject(ctx.policy) && ctx.policy.passwordFill === true;
    await page(ctx, tabId, "fill", { origin, target, docToken, value: args.value, allowPassword });
    return { filled: true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function press(args, ctx) {
    if (typeof args.key !== "string" || args.key.length === 0 || args.key.length > MAX_KEY) {
      throw new BridgeError(CODE.BAD_REQUEST, `key must be a key name such as "Enter" or "a" (at most ${MAX_KEY} characters)`);
    }
    const key = args.key;
    const target = argTarget(args, { optional: true });
    const { tabId, origin, docToken } = await open(args, ctx, "page_press");
    const base = { origin, target, docToken, key };
    const allowPassword = isPlainObject(ctx.policy) && ctx.policy.passwordFill === true;
    const d = await page(ctx, tabId, "describe", { ...base, forKey: key });
    const kind = d.kind === "submit" || d.kind === "link" ? d.kind : "plain";
    const clickKindAsks = kind !== "plain" && needsConfirm(ctx, confirmName(kind)) && !grace.covered(tabId, confirmName(kind), now());
    if (needsConfirm(ctx, "press") || clickKindAsks) {
      const what = kind === "submit" ? " This submits a form." : kind === "link" ? " This follows a link." : "";
      await ask(ctx, { tabId, origin, tool: "page_press", detail: `Press ${JSON.stringify(key)} on ${d.desc} on ${origin}?${what}` });
    }
    await page(ctx, tabId, "press", { ...base, allowPassword, expectKind: kind });
    return { pressed: true };
  }

  /**
   * page_select: exactly one of `value` (a string, or an array for <select multiple>), `values`
   * (the same as an array), `label`, `optionIndex`.
   * @type {import("../lib/dispatch.js").Handler}
   */
  async function select(args, ctx) {
    const target = argTarget(args);
    const choice = argChoice(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_select");
    const base = { origin, target, docToken };
    const d = needsConfirm(ctx, "select") ? await page(ctx, tabId, "describe", base) : null;
    // Not a <select>: the select op answers wrong_element; nobody is asked about it first.
    if (d !== null && d.tag === "select") {
      const shown = choice.optionIndex !== undefined ? `option ${choice.optionIndex}`
        : (Array.isArray(choice.value) ? choice.value : [choice.value ?? choice.label ?? ""]).map((x) => JSON.stringify(x.slice(0, 100))).join(", ");
      await ask(ctx, { tabId, origin, tool: "page_select", detail: `Select ${shown} in ${d.desc} on ${origin}?` });
    }
    // Skipped the question: the op must then not find a <select> (the page swapped it in).
    const unasked = d !== null && d.tag !== "select";
    const r = await page(ctx, tabId, "select", { ...base, ...choice, ...(unasked ? { unasked: true } : {}) });
    return {
      selected: Array.isArray(r.selected) ? r.selected.map(String) : [],
      labels: Array.isArray(r.labels) ? r.labels.map(String) : [],
    };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function clear(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_clear");
    const allowPassword = isPlainObject(ctx.policy) && ctx.policy.passwordFill === true;
    await page(ctx, tabId, "clear", { origin, target, docToken, allowPassword });
    return { cleared: true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function check(args, ctx) {
    const target = argTarget(args);
    if (typeof args.checked !== "boolean") throw new BridgeError(CODE.BAD_REQUEST, "checked must be true or false");
    const { tabId, origin, docToken } = await open(args, ctx, "page_check");
    const r = await page(ctx, tabId, "check", { origin, target, docToken, checked: args.checked });
    return { checked: r.checked === true };
  }

  /**
   * page_scroll: an element (scrolled into view), or a box — `container` (an element) or the
   * page — moved `to` "top" | "bottom" | {x, y} or by `dx` / `dy`.
   * @type {import("../lib/dispatch.js").Handler}
   */
  async function scroll(args, ctx) {
    const to = args.to ?? null;
    const moves = to !== null || args.dx !== undefined || args.dy !== undefined;
    const container = args.container ?? null;
    /** @type {Record<string, unknown>} */
    let a;
    if (isPlainObject(to) && ADDRESS.some((k) => to[k] !== undefined)) a = { target: argTarget(to) };
    else if (!moves && container === null && ADDRESS.some((k) => args[k] !== undefined)) a = { target: argTarget(args) };
    else {
      if (to !== null && to !== "top" && to !== "bottom" && !(isPlainObject(to) && Number.isFinite(to.x) && Number.isFinite(to.y))) {
        throw new BridgeError(CODE.BAD_REQUEST, 'to must be "top", "bottom", {x, y} or an element');
      }
      const delta = (/** @type {string} */ k) => {
        const v = args[k] ?? 0;
        if (typeof v !== "number" || !Number.isFinite(v) || Math.abs(v) > MAX_SCROLL) throw new BridgeError(CODE.BAD_REQUEST, `${k} must be a number of CSS pixels within ±${MAX_SCROLL}`);
        return v;
      };
      if (to !== null && (args.dx !== undefined || args.dy !== undefined)) throw new BridgeError(CODE.BAD_REQUEST, "give to, or dx/dy, not both");
      if (!moves) throw new BridgeError(CODE.BAD_REQUEST, 'give to ("top", "bottom", {x, y}), dx/dy, or an element to scroll to');
      a = to !== null ? { to } : { dx: delta("dx"), dy: delta("dy") };
      if (container !== null) {
        if (!isPlainObject(container)) throw new BridgeError(CODE.BAD_REQUEST, "container must name an element ({ref|selector|text|xpath})");
        a = { ...a, target: argTarget(container), container: true };
      }
    }
    const { tabId, origin, docToken } = await open(args, ctx, "page_scroll");
    const r = await page(ctx, tabId, "scroll", { ...a, origin, docToken });
    return { scrollX: Number(r.scrollX) || 0, scrollY: Number(r.scrollY) || 0, atTop: r.atTop === true, atBottom: r.atBottom === true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function settle(args, ctx) {
    const stableMs = argMs(args, "stableMs", 500, MAX_WAIT_MS);
    const timeoutMs = argMs(args, "timeoutMs", 10_000, MAX_WAIT_MS);
    const { tabId, origin } = await open(args, ctx, "page_settle");
    const started = now();
    // A cross-document navigation in flight shows only to the browser: wait for it to load first.
    const tab = await ownedTab(deps, ctx, tabId);
    if (tab?.status === "loading") {
      const watch = deps.loads.watch(tabId, timeoutMs);
      const outcome = await watch.promise.catch(() => "gone");
      if (outcome === "gone") throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      if (outcome === "timeout") return { settled: false, waitedMs: now() - started, quietMs: 0 };
      const landed = await ownedTab(deps, ctx, tabId);
      if (originOf(landed?.url) !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
    }
    const left = Math.max(0, timeoutMs - (now() - started));
    const r = await page(ctx, tabId, "settle", { origin, stableMs, timeoutMs: left });
    return { settled: r.settled === true, waitedMs: Math.round(now() - started), quietMs: Math.round(Number(r.quietMs) || 0) };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function reveal(args, ctx) {
    const sel = typeof args.selector === "string" && args.selector.length > 0 && args.selector.length <= MAX_ADDRESS ? args.selector : null;
    const text = typeof args.text === "string" && args.text.length > 0 && args.text.length <= MAX_ADDRESS ? args.text : null;
    if ((sel === null) === (text === null)) throw new BridgeError(CODE.BAD_REQUEST, "reveal exactly one of selector, text");
    const container = args.container === undefined || args.container === null ? null : args.container;
    if (container !== null && !isPlainObject(container)) throw new BridgeError(CODE.BAD_REQUEST, "container must name an element ({ref|selector|text|xpath})");
    const maxSteps = argMs(args, "maxSteps", 200, MAX_REVEAL_STEPS);
    const timeoutMs = argMs(args, "timeoutMs", 20_000, MAX_WAIT_MS);
    const box = container !== null ? argTarget(container) : null;
    const { tabId, origin, docToken } = await open(args, ctx, "page_reveal");
    const floor = docTokens.get(tabId)?.floor ?? 0;
    const r = await page(ctx, tabId, "reveal", {
      origin, docToken, refFloor: floor, maxSteps, timeoutMs, ...(sel !== null ? { selector: sel } : { text }), ...(box !== null ? { container: box } : {}),
    });
    if (typeof r.docToken === "string" && Number.isSafeInteger(r.lastRef)) {
      docTokens.set(tabId, { session: ctx.session, token: r.docToken, floor: Math.max(floor, r.lastRef) });
    }
    /** @type {Record<string, unknown>} */
    const out = { found: r.found === true, steps: Number(r.steps) || 0, scrollY: Number(r.scrollY) || 0, atBottom: r.atBottom === true };
    if (typeof r.ref === "string") out.ref = r.ref;
    if (typeof r.desc === "string") out.element = r.desc;
    if (typeof r.stopped === "string") out.stopped = r.stopped;
    return out;
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function waitFor(args, ctx) {
    const w = argWait(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_wait_for");
    const r = await page(ctx, tabId, "waitFor", { ...w, origin, docToken });
    if (r.matched !== true) throw new BridgeError(CODE.TIMEOUT, `the condition was not met within ${w.timeoutMs} ms`);
    return { matched: true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function getState(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_get_state");
    const r = await page(ctx, tabId, "getState", { origin, target, docToken });
    /** @type {Record<string, unknown>} */
    const out = { tag: String(r.tag), type: String(r.type) };
    if (typeof r.value === "string") out.value = r.value;
    if (typeof r.checked === "boolean") out.checked = r.checked;
    Object.assign(out, { disabled: r.disabled === true, visible: r.visible === true, text: String(r.text ?? "") });
    return out;
  }

  return [
    ["page_snapshot", snapshot],
    ["page_click", click],
    ["page_fill", fill],
    ["page_press", press],
    ["page_select", select],
    ["page_check", check],
    ["page_clear", clear],
    ["page_scroll", scroll],
    ["page_settle", settle],
    ["page_reveal", reveal],
    ["page_wait_for", waitFor],
    ["page_get_state", getState],
  ];
}

// ---------------------------------------------------------------- act and look in one call

/**
 * The actions that take `waitFor` and `observe`: after the action (and the wait) the result
 * carries `observation` — what page_snapshot and page_text would answer now, read through those
 * very handlers (their gate, redaction and masking), or `{skipped}` when the tab is not on an
 * approved site (checked before the read and again after it).
 */
export const OBSERVING_ACTIONS = Object.freeze([
  "page_click", "page_fill", "page_press", "page_select", "page_check", "page_clear", "page_scroll", "page_reveal",
  "page_mouse", "page_hover", "page_type", "page_keys", "page_navigate", "page_history", "page_reload",
]);
/** Most characters of page text one observation carries (page_text reads on from there). */
export const OBSERVE_TEXT_CHARS = 20_000;
/** How long an observation waits for a navigation still loading before it looks. */
export const OBSERVE_LOAD_MS = 10_000;
/** What an observation says instead of reading a tab that is not on an approved site. */
export const OBSERVE_ELSEWHERE = "the tab is not on an approved site; nothing of it was read";

/**
 * What to observe: `{snapshot?: "compact" | "full", text?: boolean}`, at least one.
 * @param {unknown} o
 * @returns {{snapshot?: "compact" | "full", text: boolean}}
 */
export function argObserve(o) {
  if (!isPlainObject(o)) throw new BridgeError(CODE.BAD_REQUEST, "observe must be an object {snapshot?, text?}");
  const extra = Object.keys(o).filter((k) => k !== "snapshot" && k !== "text");
  if (extra.length > 0) throw new BridgeError(CODE.BAD_REQUEST, "observe takes only snapshot and text");
  const snap = o.snapshot ?? null;
  if (snap !== null && snap !== "compact" && snap !== "full") throw new BridgeError(CODE.BAD_REQUEST, 'observe.snapshot must be "compact" or "full"');
  const text = o.text ?? false;
  if (typeof text !== "boolean") throw new BridgeError(CODE.BAD_REQUEST, "observe.text must be true or false");
  if (snap === null && !text) throw new BridgeError(CODE.BAD_REQUEST, 'observe needs snapshot ("compact" or "full") or text: true');
  return { ...(snap !== null ? { snapshot: snap } : {}), text };
}

/**
 * Wrap each of OBSERVING_ACTIONS' routes: both arguments are checked before the action runs
 * (a bad waitFor or observe acts on nothing), the action runs without them, then the wait
 * (elementTools' waitAfter), then the observation.
 * @param {import("./support.js").HandlerDeps & {browser: InteractBrowserApi, docTokens?: DocTokens}} deps the routes' shared deps
 * @param {Map<string, import("../lib/dispatch.js").Handler>} routes every action's handler
 * @returns {Map<string, import("../lib/dispatch.js").Handler>}
 */
export function withAftermath(deps, routes) {
  const { waitAfter } = elementTools(deps);
  const snapshotOf = routes.get("page_snapshot");
  const textOf = routes.get("page_text");

  /**
   * Every url the tab reports is on an approved origin, or on the one the action itself
   * landed on and checked (`landed`: a site approved during this very call is not yet in
   * ctx.policy).
   * @param {any} tab
   * @param {import("./support.js").Ctx} ctx
   * @param {string | null} landed
   */
  function onApproved(tab, ctx, landed) {
    const approved = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
    const urls = [tab?.url, tab?.pendingUrl].filter((u) => typeof u === "string" && u !== "");
    return urls.length > 0 && urls.every((u) => {
      const o = originOf(u);
      return o !== null && (o === landed || isApproved(o, approved));
    });
  }

  /**
   * @param {number} tabId
   * @param {import("../lib/dispatch.js").Context} ctx
   * @param {{snapshot?: "compact" | "full", text: boolean}} want
   * @param {string | null} landed
   * @returns {Promise<Record<string, unknown>>}
   */
  async function observe(tabId, ctx, want, landed) {
    const look = async () => {
      try {
        return await ownedTab(deps, ctx, tabId);
      } catch {
        return null;
      }
    };
    let tab = await look();
    if (tab !== null && tab?.status === "loading") {
      await deps.loads.watch(tabId, OBSERVE_LOAD_MS).promise.catch(() => undefined);
      tab = await look();
    }
    if (tab === null) return { skipped: "the tab is gone" };
    if (!onApproved(tab, ctx, landed)) return { skipped: OBSERVE_ELSEWHERE };
    /** @type {Record<string, unknown>} */
    const seen = {};
    try {
      if (want.snapshot !== undefined && snapshotOf !== undefined) {
        seen.snapshot = await snapshotOf({ tabId, ...(want.snapshot === "compact" ? { compact: true } : {}) }, ctx);
      }
      if (want.text && textOf !== undefined) seen.text = await textOf({ tabId, maxChars: OBSERVE_TEXT_CHARS }, ctx);
    } catch (err) {
      if (err instanceof BridgeError && err.code === CODE.ORIGIN_NOT_APPROVED) return { skipped: OBSERVE_ELSEWHERE };
      if (err instanceof BridgeError) return { skipped: `could not read the page (${err.code}): ${err.message}` };
      return { skipped: "could not read the page" };
    }
    // The tab may have moved while it was read: then what was read is dropped.
    const after = await look();
    if (after === null) return { skipped: "the tab is gone" };
    if (!onApproved(after, ctx, landed)) return { skipped: OBSERVE_ELSEWHERE };
    return seen;
  }

  const wrapped = new Map(routes);
  for (const action of OBSERVING_ACTIONS) {
    const handler = routes.get(action);
    if (handler === undefined) continue;
    wrapped.set(action, async (args, ctx) => {
      const w = args.waitFor ?? null;
      const o = args.observe ?? null;
      if (w === null && o === null) return handler(args, ctx);
      const wait = w !== null ? argWait(w) : null;
      const want = o !== null ? argObserve(o) : null;
      const tabId = argTabId(args);
      const { waitFor: _w, observe: _o, ...rest } = args;
      const out = await handler(rest, ctx);
      if (wait !== null) await waitAfter({ waitFor: wait }, tabId, ctx, action);
      if (want === null) return out;
      const landed = isPlainObject(out) && typeof out.url === "string" ? originOf(out.url) : null;
      return { ...(isPlainObject(out) ? out : {}), observation: await observe(tabId, ctx, want, landed) };
    });
  }
  return wrapped;
}
