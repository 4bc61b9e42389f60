// handlers/interact.js — the element tools: page_snapshot, page_click, page_fill, page_press,
// page_select, page_check, page_scroll, page_wait_for, page_get_state, and (elementTools) what
// they share with handlers/input.js's trusted-input tools. Thin glue:
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
import { insertThrough } from "../lib/keyboard.js";
import { isApproved, originOf } from "../lib/origin.js";
import { isPlainObject } from "../lib/wire.js";
import { STEP_MAX_MS, argTabId, ownedTab, step } from "./support.js";
import { needsConfirm } from "./tabs.js";

/** Codes a page operation may answer with; anything else becomes internal_error. */
/** @type {ReadonlySet<string>} */
const PAGE_CODES = new Set([CODE.BAD_REF, CODE.ELEMENT_NOT_FOUND, CODE.BAD_REQUEST, CODE.POLICY_DENIED, CODE.ORIGIN_NOT_APPROVED]);
/** Element addressing fields: exactly one per call. */
const ADDRESS = ["ref", "selector", "text", "xpath"];
const MAX_ADDRESS = 2000;
const MAX_VALUE = 100_000;
const MAX_KEY = 32;
const MAX_WAIT_MS = 120_000;
/**
 * How often the page code is injected for one call when the tab keeps committing new documents
 * between the injection and the call (each new document starts without it); then internal_error.
 */
const MAX_INJECTIONS = 3;
const DEFAULT_WAIT_MS = 5000;
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
 * A wait condition `{selector?|text?, state, timeoutMs}`.
 * @param {unknown} w
 * @returns {{selector?: string, text?: string, state: "visible" | "absent", timeoutMs: number}}
 */
export function argWait(w) {
  if (!isPlainObject(w)) throw new BridgeError(CODE.BAD_REQUEST, "waitFor must be an object");
  const selector = typeof w.selector === "string" && w.selector.length > 0 && w.selector.length <= MAX_ADDRESS ? w.selector : null;
  const text = typeof w.text === "string" && w.text.length > 0 && w.text.length <= MAX_ADDRESS ? w.text : null;
  if ((selector === null) === (text === null)) throw new BridgeError(CODE.BAD_REQUEST, "wait for exactly one of selector, text");
  const state = w.state ?? "visible";
  if (state !== "visible" && state !== "absent") throw new BridgeError(CODE.BAD_REQUEST, 'state must be "visible" or "absent"');
  const t = w.timeoutMs ?? DEFAULT_WAIT_MS;
  if (!Number.isInteger(t) || /** @type {number} */ (t) < 0 || /** @type {number} */ (t) > MAX_WAIT_MS) {
    throw new BridgeError(CODE.BAD_REQUEST, `timeoutMs must be an integer in [0, ${MAX_WAIT_MS}]`);
  }
  return { ...(selector !== null ? { selector } : text !== null ? { text } : {}), state, timeoutMs: /** @type {number} */ (t) };
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
    const cap = op === "waitFor" ? Infinity : STEP_MAX_MS;
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
    const r = await page(ctx, tabId, "waitFor", { ...w, origin });
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
 *   now?: () => number, sleep?: (ms: number) => Promise<void>, docTokens?: DocTokens,
 *   cdp?: import("../lib/debugger.js").DebuggerManager}} deps
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function interactHandlers(deps) {
  const { loads } = deps;
  const { grace, now, docTokens, open, page, ask, waitAfter, landing } = elementTools(deps);

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
    if (args.waitFor !== undefined && args.waitFor !== null) argWait(args.waitFor);
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
    await waitAfter(args, tabId, ctx, "page_click");
    const url = typeof after?.url === "string" && after.url !== "" ? after.url : String(r.url);
    return { clicked: true, navigated, url };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function fill(args, ctx) {
    const target = argTarget(args);
    if (typeof args.value !== "string" || args.value.length > MAX_VALUE) throw new BridgeError(CODE.BAD_REQUEST, `value must be a string of at most ${MAX_VALUE} characters`);
    const method = args.method ?? "value";
    if (method !== "value" && method !== "insertText") throw new BridgeError(CODE.BAD_REQUEST, 'method must be "value" or "insertText"');
    const { tabId, origin, docToken } = await open(args, ctx, "page_fill");
    const allowPassword = isPlainObject(ctx.policy) && ctx.policy.passwordFill === true;
    const base = { origin, target, docToken, allowPassword };
    let r;
    if (method === "insertText") {
      // Trusted typing through the debugger (lib/keyboard.js): the content selected, then replaced.
      if (deps.cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
      r = await insertThrough({ cdp: deps.cdp, page }, ctx, tabId, { ...base, arm: "replace" }, args.value);
    } else {
      await page(ctx, tabId, "fill", { ...base, value: args.value });
      r = await page(ctx, tabId, "inputResult", { origin });
    }
    await waitAfter(args, tabId, ctx, "page_fill");
    const applied = r.applied === "yes" || r.applied === "no" ? r.applied : "unclear";
    return { filled: true, applied, length: Number.isSafeInteger(r.length) ? r.length : 0 };
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
    await waitAfter(args, tabId, ctx, "page_press");
    return { pressed: true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function select(args, ctx) {
    const target = argTarget(args);
    const v = args.value;
    const ok = typeof v === "string" ? v.length <= MAX_VALUE
      : Array.isArray(v) && v.length > 0 && v.length <= 1000 && v.every((x) => typeof x === "string" && x.length <= MAX_VALUE);
    if (!ok) throw new BridgeError(CODE.BAD_REQUEST, "value must be a string or a non-empty array of strings");
    const { tabId, origin, docToken } = await open(args, ctx, "page_select");
    const base = { origin, target, docToken };
    if (needsConfirm(ctx, "select")) {
      const d = await page(ctx, tabId, "describe", base);
      const shown = (Array.isArray(v) ? v : [v]).map((x) => JSON.stringify(x.slice(0, 100))).join(", ");
      await ask(ctx, { tabId, origin, tool: "page_select", detail: `Select ${shown} in ${d.desc} on ${origin}?` });
    }
    const r = await page(ctx, tabId, "select", { ...base, value: v });
    await waitAfter(args, tabId, ctx, "page_select");
    return { selected: Array.isArray(r.selected) ? r.selected.map(String) : [] };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function check(args, ctx) {
    const target = argTarget(args);
    if (typeof args.checked !== "boolean") throw new BridgeError(CODE.BAD_REQUEST, "checked must be true or false");
    const { tabId, origin, docToken } = await open(args, ctx, "page_check");
    const r = await page(ctx, tabId, "check", { origin, target, docToken, checked: args.checked });
    await waitAfter(args, tabId, ctx, "page_check");
    return { checked: r.checked === true };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function scroll(args, ctx) {
    const to = args.to;
    /** @type {Record<string, unknown>} */
    let a;
    if (to === "top" || to === "bottom") a = { to };
    else if (isPlainObject(to) && ADDRESS.some((k) => to[k] !== undefined)) a = { target: argTarget(to) };
    else if (isPlainObject(to) && Number.isFinite(to.x) && Number.isFinite(to.y)) a = { to: { x: to.x, y: to.y } };
    else if (to === undefined && ADDRESS.some((k) => args[k] !== undefined)) a = { target: argTarget(args) };
    else throw new BridgeError(CODE.BAD_REQUEST, 'to must be "top", "bottom", {x, y} or an element');
    const { tabId, origin, docToken } = await open(args, ctx, "page_scroll");
    const r = await page(ctx, tabId, "scroll", { ...a, origin, docToken });
    return { scrollX: Number(r.scrollX) || 0, scrollY: Number(r.scrollY) || 0 };
  }

  /** @type {import("../lib/dispatch.js").Handler} */
  async function waitFor(args, ctx) {
    const w = argWait(args);
    const { tabId, origin } = await open(args, ctx, "page_wait_for");
    const r = await page(ctx, tabId, "waitFor", { ...w, origin });
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
    ["page_scroll", scroll],
    ["page_wait_for", waitFor],
    ["page_get_state", getState],
  ];
}
