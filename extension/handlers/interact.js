// handlers/interact.js — the element tools: page_snapshot, page_find, page_click, page_fill, page_press,
// page_select, page_check, page_fill_form (several fields in one call), page_clear, page_scroll, page_settle, page_reveal, page_wait_for,
// page_get_state, (elementTools) what they share with handlers/input.js's trusted-input tools,
// and (withAftermath) every action's optional waitFor and observe. Thin glue:
// every call checks ownership, runs the origin gate on the tab's CURRENT url (and, with `frame`,
// on that frame's and each enclosing frame's: handlers/frames.js), then injects the page code
// (worker/elements.js PAGE_FILES, extension/page/) into that frame only and runs its pageOp through
// callPageOp (the page side refuses to act on another origin); page_click clicks as a person does,
// trusted input at the element's point (handlers/pointer.js, shared with page_mouse). It must never
// touch the chrome global, never act without the person's confirmation where the policy asks
// for one (a grace covers only the catalogue's graceable tools, on the tab and origin the person
// allowed), never fill a password field unless policy.passwordFill, and never accept a ref from
// another document.

import { DEFAULT_FIND, DEFAULT_NODES, MAX_NODES, axRows, compose, documentText, isInteractive, joinCuts, merge, rankFind, sparse } from "../worker/a11y.js";
import { BridgeError } from "../shared/bridge-error.js";
import { ACTION_ARGS, OBSERVING_ACTIONS } from "../worker/catalogue.js";
import { refuseUnlessAllowed } from "../shared/confirm-window.js";
import { PAGE_FILES, callPageOp } from "../worker/elements.js";
import { CODE, ERROR_CODES } from "../shared/error-codes.js";
import { createGrace, graceable } from "../worker/grace.js";
import { insertThrough, keyEvents, parseKey } from "../worker/keyboard.js";
import { originOf } from "../shared/origin.js";
import { maskCards } from "../worker/redact.js";
import { isPlainObject } from "../shared/wire.js";
import { argFrame, createFrameWorlds, gateFrame } from "./frames.js";
import { STEP_MAX_MS, argTabId, ownedTab, settledTab, step } from "./support.js";
import { createPointer, refuseIfBlocked, watchBlockedWindows } from "./pointer.js";
import { argReadyMs, ready } from "./ready.js";
import { needsConfirm } from "./tabs.js";

/** Codes a page operation may answer with; anything else becomes internal_error. */
/** @type {ReadonlySet<string>} */
const PAGE_CODES = new Set([CODE.BAD_REF, CODE.ELEMENT_NOT_FOUND, CODE.BAD_REQUEST, CODE.POLICY_DENIED, CODE.ORIGIN_NOT_APPROVED,
  CODE.WRONG_ELEMENT, CODE.ELEMENT_COVERED, CODE.AMBIGUOUS]);
/** Element addressing fields: exactly one per call. */
const ADDRESS = ["ref", "selector", "text", "xpath"];
/** What a waitFor may name (exactly one). */
const WAIT_FOR = ["ref", "selector", "text"];
const MAX_ADDRESS = 2000;
const MAX_VALUE = 100_000;
const MAX_WAIT_MS = 120_000;
/** Most screenfuls one page_reveal scrolls. */
const MAX_REVEAL_STEPS = 2000;
/**
 * How often the page code is injected for one call when the tab keeps committing new documents
 * between the injection and the call (each new document starts without it); then internal_error.
 */
const MAX_INJECTIONS = 3;
const DEFAULT_WAIT_MS = 5000;
/** How long each call (its ctx) waited for its element to be actionable (open's `checks`). */
/** @type {WeakMap<object, number>} */
const WAITED = new WeakMap();
/** Page ops bounded by the call's deadline only (they carry their own timeoutMs). */
const LONG_OPS = new Set(["waitFor", "settle", "reveal"]);
/** Most select fields page_fill_form's question lists one by one (the rest are counted). */
const MAX_ASKED = 10;
/**
 * What a select choice picks, as the confirm window shows it (page_select's words).
 * @param {{value?: string | string[], label?: string, optionIndex?: number}} choice
 */
export const chosen = (choice) => (choice.optionIndex !== undefined ? `option ${choice.optionIndex}`
  : (Array.isArray(choice.value) ? choice.value : [choice.value ?? choice.label ?? ""]).map((x) => JSON.stringify(x.slice(0, 100))).join(", "));
/** The policy's confirm name for a click kind ("submit" or "link"). @param {string} kind */
export const confirmName = (kind) => (kind === "submit" ? "submit" : "link_click");
/** How long after a click dispatched as input (page_mouse: no page-side navigate event to
 * watch) the tab is looked at to tell whether it started navigating. */
export const NAV_PROBE_MS = 250;

/**
 * The element a call addresses, or null when none is given and `optional`.
 * @param {Record<string, unknown>} args
 * @param {{optional?: boolean}} [opts]
 * @returns {{ref?: string, selector?: string, text?: string, xpath?: string, index?: number, match?: "substring", ignoreCase?: true} | null}
 */
export function argTarget(args, { optional = false } = {}) {
  // The types, lengths, the ref's @eN shape and the index's range are the wire schema's
  // (worker/dispatch.js checks it before any handler runs); which of them is given is read here.
  const given = ADDRESS.filter((k) => typeof args[k] === "string" && args[k] !== "");
  if (given.length === 0 && optional) return null;
  if (given.length !== 1) throw new BridgeError(CODE.BAD_REQUEST, "give exactly one of ref, selector, text, xpath");
  const key = given[0];
  // No index: the name must match one element (page/locate.js resolve; several → ambiguous).
  return {
    [key]: /** @type {string} */ (args[key]),
    ...(Number.isSafeInteger(args.index) ? { index: /** @type {number} */ (args.index) } : {}),
    ...(args.match === "substring" ? { match: "substring" } : {}),
    ...(args.ignoreCase === true ? { ignoreCase: true } : {}),
  };
}

/**
 * The element each call (its ctx) acted on, as the page named it: {ref, role, name, frame?}.
 * Set by elementTools' page() whenever a page op resolved the call's element; withAftermath puts
 * it on the result of every element action (TARGETED_ACTIONS) as `target`.
 * @type {WeakMap<object, {ref?: string, role: string, name: string, frame?: number}>}
 */
const CALL_TARGET = new WeakMap();

/**
 * The actions that name an element (their arguments are the catalogue's ElementArgs, whose
 * `match` every such schema carries): each result says what it acted on (`target`).
 * @type {ReadonlySet<string>}
 */
export const TARGETED_ACTIONS = new Set(ACTION_ARGS
  .filter(([, schema]) => isPlainObject(schema) && isPlainObject(schema.properties) && isPlainObject(schema.properties.match))
  .map(([action]) => action));

/**
 * A wait condition `{ref?|selector?|text?, state, timeoutMs}` (exactly one of the three).
 * @param {unknown} w
 * @returns {{ref?: string, selector?: string, text?: string, state: "visible" | "absent", timeoutMs: number}}
 */
export function argWait(w) {
  // Its shape is the wire schema's (worker/dispatch.js checks it before any handler runs):
  // exactly one of ref, selector or text, non-empty, each's type and length, the ref's @eN
  // shape, state and timeoutMs. What is read here is only which one was given.
  const o = isPlainObject(w) ? w : {};
  const key = WAIT_FOR.find((k) => typeof o[k] === "string" && o[k] !== "");
  if (key === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "waitFor reached the handler without the schema's check");
  const state = o.state === "absent" ? "absent" : "visible";
  const timeoutMs = Number.isSafeInteger(o.timeoutMs) ? /** @type {number} */ (o.timeoutMs) : DEFAULT_WAIT_MS;
  return { [key]: /** @type {string} */ (o[key]), state, timeoutMs };
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

/** Most fields one page_fill_form fills (the catalogue's MAX_FORM_FIELDS; the wire schema holds it too). */
export const MAX_FORM_FIELDS = 50;
/** The kinds of field page_fill_form fills. */
const FORM_KINDS = new Set(["text", "select", "checkbox", "radio"]);

/**
 * page_fill_form's fields, each `{kind, target, ...}`: a text's `value`, a select's choice
 * (argChoice), a checkbox's or radio's `checked`. Any field that does not make one request
 * refuses the whole call (bad_request naming it) before anything is looked at.
 * @param {Record<string, unknown>} args
 * @returns {Array<{kind: "text", target: NonNullable<ReturnType<typeof argTarget>>, value: string}
 *   | {kind: "select", target: NonNullable<ReturnType<typeof argTarget>>, choice: ReturnType<typeof argChoice>}
 *   | {kind: "checkbox" | "radio", target: NonNullable<ReturnType<typeof argTarget>>, checked: boolean}>}
 */
export function argForm(args) {
  const list = args.fields;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_FORM_FIELDS) {
    throw new BridgeError(CODE.BAD_REQUEST, `fields must hold 1 to ${MAX_FORM_FIELDS} fields`);
  }
  return list.map((f, i) => {
    const where = `fields[${i}]`;
    if (!isPlainObject(f) || typeof f.kind !== "string" || !FORM_KINDS.has(f.kind)) {
      throw new BridgeError(CODE.BAD_REQUEST, `${where}: kind must be one of text, select, checkbox, radio`);
    }
    const kind = f.kind;
    /** @param {() => any} read */
    const at = (read) => {
      try {
        return read();
      } catch (err) {
        if (err instanceof BridgeError) throw new BridgeError(err.code, `${where} (${kind}): ${err.message}`);
        throw err;
      }
    };
    const target = /** @type {NonNullable<ReturnType<typeof argTarget>>} */ (at(() => argTarget(f)));
    const others = (/** @type {string[]} */ ...allowed) => ["value", "values", "label", "optionIndex", "checked"]
      .filter((k) => f[k] !== undefined && !allowed.includes(k));
    const extra = kind === "text" ? others("value") : kind === "select" ? others("value", "values", "label", "optionIndex") : others("checked");
    if (extra.length > 0) throw new BridgeError(CODE.BAD_REQUEST, `${where} (${kind}) does not take ${extra.join(", ")}`);
    if (kind === "text") {
      if (typeof f.value !== "string" || f.value.length > MAX_VALUE) throw new BridgeError(CODE.BAD_REQUEST, `${where} (text): give its value, a string`);
      return { kind, target, value: f.value };
    }
    if (kind === "select") return { kind, target, choice: at(() => argChoice(f)) };
    if (kind === "checkbox" && typeof f.checked !== "boolean") throw new BridgeError(CODE.BAD_REQUEST, `${where} (checkbox): give checked (true or false)`);
    if (kind === "radio" && f.checked !== undefined && f.checked !== true) {
      throw new BridgeError(CODE.BAD_REQUEST, `${where} (radio): a radio button cannot be unchecked; check another one`);
    }
    return { kind: /** @type {"checkbox" | "radio"} */ (kind), target, checked: kind === "radio" || f.checked === true };
  });
}

/**
 * The failures page_fill_form reports field by field, filling the other fields on: the field's
 * element is missing, ambiguous, of the wrong kind, or not actionable, or its value does not fit
 * it. Any other failure (a guard: a password field, the person's no, the page leaving the
 * origin, the tab gone) ends the whole call.
 * @type {ReadonlySet<string>}
 */
export const FIELD_FAILURES = new Set([CODE.ELEMENT_NOT_FOUND, CODE.BAD_REF, CODE.AMBIGUOUS, CODE.WRONG_ELEMENT, CODE.BAD_REQUEST,
  CODE.ELEMENT_NOT_VISIBLE, CODE.ELEMENT_NOT_STABLE, CODE.ELEMENT_DISABLED]);

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
 * @property {(tabId: number, files: readonly string[], frameId?: number) => Promise<unknown>} executeFiles
 *   runs extension files in the tab's isolated world (its top frame, or frame `frameId`), in order
 * @property {(tabId: number, func: (...a: any[]) => unknown, args: unknown[], world?: "ISOLATED" | "MAIN", frameId?: number) =>
 *   Promise<Array<{result?: unknown}>>} executeScriptArgs runs `func(...args)` in the tab (or one frame of it)
 * @property {import("./frames.js").FramesBrowserApi["getAllFrames"]} [getAllFrames] the tab's
 *   frames (a call with `frame` needs it)
 */

/**
 * The shared machinery of the element tools (this family and handlers/input.js): ownership and
 * the origin gate, running page code, asking the person, the optional waitFor. `deps.docTokens`
 * is the tab -> latest-snapshot map every family shares (actions.js makes one).
 * @param {import("./support.js").HandlerDeps & {browser: InteractBrowserApi, grace?: import("../worker/grace.js").Grace,
 *   now?: () => number, sleep?: (ms: number) => Promise<void>, docTokens?: DocTokens,
 *   callFrame?: WeakMap<object, number>, navBlock?: import("../worker/nav-block.js").NavBlocker}} deps
 *   `callFrame`: shared by every family (and withAftermath), so an action's waitFor waits in
 *   the frame the action ran in; `navBlock`: the stops before a tab leaves (worker/nav-block.js)
 */
export function elementTools(deps) {
  const { browser, ensureOrigin, confirm } = deps;
  const grace = deps.grace ?? createGrace();
  const now = deps.now ?? (() => Date.now());
  const sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const docTokens = deps.docTokens ?? new Map();
  /** The frame each call (its ctx) aims at, once open() gated it; absent = the top frame. */
  /** @type {WeakMap<object, number>} */
  const callFrame = deps.callFrame ?? new WeakMap();

  /** The tab's latest snapshot token for this session, or null. @param {number} tabId @param {import("./support.js").Ctx} ctx */
  const tokenOf = (tabId, ctx) => {
    const saved = docTokens.get(tabId);
    if (saved === undefined || saved.session !== ctx.session) return null;
    const frameId = callFrame.get(ctx) ?? 0;
    return frameId === 0 ? saved.token : saved.frames?.get(frameId) ?? null;
  };

  /**
   * The origin gate for the call's frame: the tab's current url, then, for a frame other than
   * the top one, that frame and each of its ancestors on their own (handlers/frames.js).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {any} tab
   * @param {number} frameId
   * @param {string} tool
   */
  async function gate(ctx, tabId, tab, frameId, tool) {
    const top = await ensureOrigin(tab?.url, ctx, tool);
    if (frameId === 0) return top;
    if (typeof browser.getAllFrames !== "function") throw new BridgeError(CODE.BAD_REQUEST, "frames are not available here");
    return gateFrame(/** @type {any} */ (deps), ctx, tabId, frameId, tool);
  }

  /**
   * Ownership, then the origin gate on the tab's current url (and, with `frame`, the frame's);
   * with `checks` (an element action) and an element named, then the wait until that element is
   * actionable (handlers/ready.js; page/actions.js actionable with these checks), bounded by the
   * call's timeoutMs; withAftermath reports how long it waited (`waitedMs`).
   * @param {Record<string, unknown>} args
   * @param {import("./support.js").Ctx} ctx
   * @param {string} tool
   * @param {{enabled?: boolean, hit?: boolean, visible?: boolean}} [checks]
   */
  async function open(args, ctx, tool, checks) {
    const tabId = argTabId(args);
    const frameId = argFrame(args);
    const tab = await ownedTab(deps, ctx, tabId);
    const origin = await gate(ctx, tabId, tab, frameId, tool);
    callFrame.set(ctx, frameId);
    const saved = docTokens.get(tabId);
    const docToken = saved === undefined || saved.session !== ctx.session ? null
      : frameId === 0 ? saved.token : saved.frames?.get(frameId) ?? null;
    const target = checks === undefined ? null : argTarget(args, { optional: true });
    if (target !== null) {
      const look = () => page(ctx, tabId, "actionable", { ...checks, origin, target, docToken });
      const { waitedMs } = await ready({ look, timeoutMs: argReadyMs(args), now, sleep });
      WAITED.set(ctx, (WAITED.get(ctx) ?? 0) + waitedMs); // page_drag: both ends
    }
    return { tabId, tab, origin, docToken, frameId };
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
    const frameId = callFrame.get(ctx) ?? 0;
    // Refs the page makes for the element it names (target, ambiguous candidates) number after
    // the tab's floor, as a snapshot's.
    if (a.target && a.refFloor === undefined) a = { ...a, refFloor: docTokens.get(tabId)?.floor ?? 0 };
    const files = () => (frameId === 0 ? browser.executeFiles(tabId, PAGE_FILES) : browser.executeFiles(tabId, PAGE_FILES, frameId));
    const call = () => (frameId === 0 ? browser.executeScriptArgs(tabId, callPageOp, [op, a], "ISOLATED")
      : browser.executeScriptArgs(tabId, callPageOp, [op, a], "ISOLATED", frameId));
    try {
      for (let attempt = 1; ; attempt++) {
        await step(ctx, `prepare the page for ${op}`, files());
        const results = await step(ctx, op, call(), cap);
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
      if (code === CODE.AMBIGUOUS) named(ctx, tabId, frameId, out.error.refs);
      throw new BridgeError(code, typeof out.error.message === "string" ? out.error.message : "the page operation failed");
    }
    if (a.target && isPlainObject(out.target) && typeof out.target.role === "string" && typeof out.target.name === "string") {
      const t = out.target;
      named(ctx, tabId, frameId, t);
      CALL_TARGET.set(ctx, {
        ...(typeof t.ref === "string" ? { ref: t.ref } : {}), role: String(t.role), name: String(t.name), ...(frameId !== 0 ? { frame: frameId } : {}),
      });
    }
    return out;
  }

  /**
   * Record the refs the page made naming an element (its target, or ambiguous's candidates) as
   * a snapshot's, so they work in the next call.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {number} frameId
   * @param {unknown} refs {docToken, lastRef}
   */
  function named(ctx, tabId, frameId, refs) {
    if (!isPlainObject(refs) || typeof refs.docToken !== "string" || !Number.isSafeInteger(refs.lastRef)) return;
    const token = /** @type {string} */ (refs.docToken);
    rememberSnapshot(docTokens, tabId, ctx.session, frameId, token, Math.max(docTokens.get(tabId)?.floor ?? 0, /** @type {number} */ (refs.lastRef)));
  }

  /**
   * Ask the person, unless a grace covers `tool` on this tab and origin (worker/grace.js); an
   * allow of a graceable tool opens one (the window says for how long).
   * @param {import("./support.js").Ctx} ctx
   * @param {{tabId: number, origin: string, tool: string, detail: string, fields?: unknown}} q
   *   fields: a submit's field names as the page gave them (page/actions.js describe), shown by name only
   */
  async function ask(ctx, { tabId, origin, tool, detail, fields }) {
    if (grace.covered(tabId, origin, tool, now())) return;
    const decision = await confirm({ kind: "action", tool, origin, detail, client: ctx.client, fields, timeoutMs: ctx.policy.confirmTimeoutMs, grace: graceable(tool) ? ctx.policy.clickGraceSeconds : 0 });
    refuseUnlessAllowed(decision, "this action");
    if (deps.ownership.owner(tabId) !== ctx.session) throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
    grace.allow(tabId, origin, tool, now(), ctx.policy.clickGraceSeconds);
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
    const origin = await gate(ctx, tabId, tab, callFrame.get(ctx) ?? 0, tool);
    const r = await page(ctx, tabId, "waitFor", { ...w, origin, docToken: tokenOf(tabId, ctx) });
    if (r.matched !== true) throw new BridgeError(CODE.WAIT_NOT_MET, `${tool} was done, but waitFor was not met within ${w.timeoutMs} ms`);
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
    if ((callFrame.get(ctx) ?? 0) !== 0) {
      // A click inside a frame: the tab's own load state says nothing about the frame, and the
      // frame's next document is gated by the next call on it.
      watch.cancel();
      return { navigated: nav !== null && nav !== undefined, after: { url: urlBefore } };
    }
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
      let outcome;
      try {
        outcome = await watch.promise;
        after = await browser.getTab(tabId);
      } catch {
        deps.ownership.release(tabId);
        throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      }
      // It ended without a document (a download, a 204): the tab stayed on its page.
      if (outcome === "aborted") navigated = typeof after?.url === "string" && after.url !== urlBefore;
    } else {
      watch.cancel();
    }
    if (navigated && (crossDocument || nav === undefined)) {
      const o = originOf(after?.url);
      if (o !== origin && !ctx.policy.approves(o)) {
        // Stopped before the request left (worker/nav-block.js): the tab is back on its page, and
        // withAftermath reports `blocked`. Landed anyway: refused, as ever.
        if (deps.navBlock !== undefined && await deps.navBlock.stopped(tabId, after?.url)) {
          const back = await browser.getTab(tabId).catch(() => null);
          return { navigated: false, after: { url: typeof back?.url === "string" && back.url !== "" ? back.url : urlBefore } };
        }
        throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the click led to an unapproved origin");
      }
    }
    return { navigated, after };
  }

  return { grace, now, docTokens, open, page, ask, waitAfter, landing };
}

/**
 * tabId -> {session, token} of the tab's latest snapshot, and `floor`: the highest ref number
 * any document of this tab (any frame) has handed out, where the next snapshot's numbering
 * starts — so a ref kept from an earlier document or another frame never names an element of
 * this one. `frames`: frameId -> token of that frame's latest snapshot (token is then "" until
 * the top frame has one).
 * @typedef {Map<number, {session: string, token: string, floor: number, frames?: Map<number, string>}>} DocTokens
 */

/** page_snapshot's sources: the accessibility tree (cross-checked when sparse), it alone, the DOM walk. */
const SNAPSHOT_MODES = new Set(["auto", "a11y", "dom"]);
/** Longest name a snapshot row shows (as page/snapshot.js). */
const MAX_NAME = 200;
/** The CDP object group every a11y snapshot's remote objects belong to (released at its end). */
const AX_GROUP = "tabwarden-a11y";
/** Runs in tabwarden's world: the scope element (page/locate.js resolve). */
const SCOPE_FN = "function (t, d) { return globalThis.tabwardenLocate.resolve(t, d); }";
/** Runs in tabwarden's world: page/snapshot.js describeElements over the resolved elements. */
const DESCRIBE_FN = "function (o, f, d, t, ...els) { return globalThis.tabwardenSnapshot.describeElements(o, f, d, t, els); }";

/**
 * page_snapshot's (and page_find's) options.
 * @param {Record<string, unknown>} args
 */
export function argSnapshot(args) {
  // mode, compact, maxNodes and the scope's shape are the wire schema's (worker/dispatch.js).
  const mode = typeof args.mode === "string" && SNAPSHOT_MODES.has(args.mode) ? args.mode : "auto";
  const compact = args.compact === true;
  const maxNodes = Number.isSafeInteger(args.maxNodes) ? /** @type {number} */ (args.maxNodes) : DEFAULT_NODES;
  const skip = Number.isSafeInteger(args.skip) ? /** @type {number} */ (args.skip) : 0;
  return { mode, compact, maxNodes, skip, text: args.text === true, scope: argTarget(args, { optional: true }) };
}

/**
 * page_find's query: a role and/or a name, exact or ranked, at most `limit` matches.
 * @param {Record<string, unknown>} args
 */
export function argFind(args) {
  // Types, lengths, exact and limit are the wire schema's (worker/dispatch.js).
  const str = (/** @type {string} */ k) => {
    const v = args[k];
    return typeof v === "string" && v.trim() !== "" ? v : null;
  };
  const role = str("role");
  const name = str("name");
  if (role === null && name === null) throw new BridgeError(CODE.BAD_REQUEST, "give a role, a name or both");
  const exact = args.exact === true;
  const limit = Number.isSafeInteger(args.limit) ? /** @type {number} */ (args.limit) : DEFAULT_FIND;
  return { role, name, exact, limit };
}

/**
 * Chrome's accessibility tree of an owned tab, as snapshot rows with the stable refs of the
 * page's RefStore: CDP Accessibility.getFullAXTree, then each listed node's backendDOMNodeId
 * resolved (DOM.resolveNode) into tabwarden's isolated world — found once per document through
 * Runtime.enable's executionContextCreated events and proven by its RefStore token — where
 * page/snapshot.js describeElements gives refs, tags and shown values (docs/platform-facts-a11y.md).
 * @param {{cdp?: import("../worker/debugger.js").DebuggerManager, sleep: (ms: number) => Promise<void>}} deps
 */
function a11yReader({ cdp, sleep }) {
  const worlds = createFrameWorlds({ cdp, sleep });

  /**
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {import("./frames.js").FrameWorld} world the session the command goes to
   * @param {string} method
   * @param {Record<string, unknown>} params
   * @param {string} what
   */
  const send = (ctx, tabId, world, method, params, what) => {
    if (cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    return cdp.send(ctx, tabId, method, params, what, world.session);
  };

  /**
   * The a11y rows (with visible/inViewport kept for page_find).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{origin: string, doc: string, floor: number, compact: boolean, maxNodes: number, skip?: number, text?: boolean,
   *   scope: ReturnType<typeof argTarget>, frame: boolean}} q `frame`: the document is a frame's
   *   (its tree is read by its CDP frame id, in its own session when it runs out of process)
   */
  async function read(ctx, tabId, { origin, doc, floor, compact, maxNodes, skip = 0, text = false, scope, frame }) {
    const w = await worlds.locate(ctx, tabId, doc, { topOnly: !frame });
    const id = w.contextId;
    try {
      /** @type {number | null} */
      let scopeNode = null;
      if (scope !== null) {
        const el = await send(ctx, tabId, w, "Runtime.callFunctionOn", {
          executionContextId: id, functionDeclaration: SCOPE_FN, arguments: [{ value: scope }, { value: doc }], objectGroup: AX_GROUP,
        }, "find the snapshot's scope");
        const objectId = el?.result?.objectId;
        if (el?.exceptionDetails !== undefined || typeof objectId !== "string") throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the scope element left the page");
        const node = await send(ctx, tabId, w, "DOM.describeNode", { objectId }, "find the snapshot's scope");
        scopeNode = Number.isInteger(node?.node?.backendNodeId) ? node.node.backendNodeId : null;
        if (scopeNode === null) throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the scope element left the page");
      }
      const tree = await send(ctx, tabId, w, "Accessibility.getFullAXTree", frame ? { frameId: w.frameId } : {}, "read the accessibility tree");
      const ax = axRows(tree?.nodes, { compact, scope: scopeNode, maxNodes, skip, text });
      if (!ax.scopeFound) throw new BridgeError(CODE.ELEMENT_NOT_FOUND, "the scope element is not in the accessibility tree (hidden or not rendered)");
      // A text row (axRows `text`) names no element: nothing to resolve or describe.
      const ids = await Promise.all(ax.rows.map((row) => (row.backendId === null ? "" : send(ctx, tabId, w, "DOM.resolveNode",
        { backendNodeId: row.backendId, executionContextId: id, objectGroup: AX_GROUP }, "find an element of the tree")
        .then((/** @type {any} */ x) => (typeof x?.object?.objectId === "string" ? x.object.objectId : null), () => null))));
      const rows = ax.rows.filter((_, i) => ids[i] !== null);
      const elements = rows.filter((row) => row.backendId !== null);
      const objects = ids.filter((x) => x !== null && x !== "").map((objectId) => ({ objectId }));
      const r = await send(ctx, tabId, w, "Runtime.callFunctionOn", {
        executionContextId: id, functionDeclaration: DESCRIBE_FN, returnByValue: true,
        arguments: [{ value: origin }, { value: floor }, { value: doc }, { value: elements.map((row) => row.needText) }, ...objects],
      }, "describe the tree's elements");
      const v = r?.result?.value;
      if (isPlainObject(v) && isPlainObject(v.error)) {
        throw new BridgeError(v.error.code === CODE.ORIGIN_NOT_APPROVED ? CODE.ORIGIN_NOT_APPROVED : CODE.INTERNAL_ERROR, String(v.error.message));
      }
      if (!isPlainObject(v) || !Array.isArray(v.items) || !Number.isSafeInteger(v.lastRef)) throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page's accessibility tree");
      let k = 0;
      const given = /** @type {unknown[]} */ (v.items);
      const described = rows.map((row) => (row.backendId === null ? null : given[k++]));
      const items = compose(rows, described, { mask: maskCards, maxName: MAX_NAME });
      return { items, truncated: ax.truncated, cut: ax.cut, interactive: ax.interactive, lastRef: /** @type {number} */ (v.lastRef) };
    } finally {
      await send(ctx, tabId, w, "Runtime.releaseObjectGroup", { objectGroup: AX_GROUP }, "release the tree's elements").catch(() => {});
    }
  }

  return { read, forget: (/** @type {number} */ tabId) => worlds.forget(tabId) };
}

/** A snapshot row as the tool answers it (page_find's ranking fields dropped). @param {Record<string, unknown>} item */
const shown = ({ visible: _v, inViewport: _i, ...item }) => item;

/**
 * Record a snapshot's document token for the tab's frame `frameId` and the tab's new ref floor;
 * the other frames' tokens stay (a new session starts over).
 * @param {DocTokens} docTokens
 * @param {number} tabId
 * @param {string} session
 * @param {number} frameId
 * @param {string} token
 * @param {number} floor
 */
export function rememberSnapshot(docTokens, tabId, session, frameId, token, floor) {
  const old = docTokens.get(tabId);
  const mine = old !== undefined && old.session === session ? old : undefined;
  const frames = new Map(mine?.frames ?? []);
  if (frameId !== 0) frames.set(frameId, token);
  docTokens.set(tabId, {
    session, token: frameId === 0 ? token : mine?.token ?? "", floor: Math.max(floor, old?.floor ?? 0), frames,
  });
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: InteractBrowserApi, grace?: import("../worker/grace.js").Grace,
 *   now?: () => number, sleep?: (ms: number) => Promise<void>, docTokens?: DocTokens,
 *   popups?: import("../worker/popups.js").Popups, cdp?: import("../worker/debugger.js").DebuggerManager}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function interactHandlers(deps) {
  const { loads } = deps;
  const { grace, now, docTokens, open, page, ask, landing } = elementTools(deps);
  const sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  const reader = a11yReader({ cdp: deps.cdp, sleep });
  const pointer = createPointer({
    cdp: deps.cdp, sleep, page, docTokens,
    remember: (tabId, session, frameId, token, floor) => rememberSnapshot(docTokens, tabId, session, frameId, token, floor),
  });

  /**
   * Arm the watch for a tab the action may open (worker/popups.js); null without popups.
   * @param {number} tabId
   * @param {import("./support.js").Ctx} ctx
   */
  const popupWatch = (tabId, ctx) => deps.popups?.watch(tabId, ctx.policy) ?? null;

  /**
   * The tab the action opened, which joined the session: {id, url}. With `wait` (page_click
   * newTab: true) the call waits for it, bounded by its deadline, and for its first load;
   * otherwise only one that joined already is reported.
   * @param {import("./support.js").Ctx} ctx
   * @param {import("../worker/popups.js").PopupWatch | null} opened
   * @param {boolean} wait
   * @param {import("./pointer.js").BlockedWindows} blocked windows Chrome's popup blocker may
   *   have stopped: waiting ends with popup_blocked when one did
   * @returns {Promise<{id: number, url: string} | null>}
   */
  async function newTabOf(ctx, opened, wait, blocked) {
    if (opened === null) {
      if (wait) throw new BridgeError(CODE.BAD_REQUEST, "newTab is not available here");
      return null;
    }
    let joined = opened.seen();
    if (joined === null && wait) {
      try {
        const stopped = blocked.next.then(async () => {
          await refuseIfBlocked(opened, blocked, sleep, "The click was done");
          return opened.promise;
        });
        joined = await step(ctx, "wait for the new tab the click opens", Promise.race([opened.promise, stopped]), MAX_WAIT_MS);
      } catch (err) {
        if (err instanceof BridgeError && err.code === CODE.TIMEOUT) {
          throw new BridgeError(CODE.TIMEOUT, "the click was done, but no new tab joined this session before the call's deadline");
        }
        throw err;
      }
    }
    if (joined === null) return null;
    let url = joined.url;
    if (wait) {
      const settled = await step(ctx, "wait for the new tab to load", settledTab(deps, joined.id, loads.watch(joined.id), { newTab: true }), MAX_WAIT_MS);
      if (typeof settled?.url === "string" && settled.url !== "") url = settled.url;
    }
    return { id: joined.id, url };
  }

  /**
   * The DOM walk (always: it makes the document's RefStore and counts the interactive elements),
   * then, unless mode "dom", the accessibility tree: alone ("a11y"), or ("auto") merged with the
   * walk's rows when worker/a11y.js `sparse` says the tree has far fewer interactive nodes, and
   * replaced by the walk when the tree cannot be read (the answer says `fallback`).
   * @param {Record<string, unknown>} args
   * @param {import("./support.js").Ctx} ctx
   * @param {string} tool
   * @param {ReturnType<typeof argSnapshot>} opts
   */
  async function snapshotRows(args, ctx, tool, opts) {
    const { tabId, origin, docToken, frameId } = await open(args, ctx, tool);
    const floor = docTokens.get(tabId)?.floor ?? 0;
    /**
     * The DOM walk's answer; `withText`: with the page's text runs (mode "dom", or auto when
     * the tree that gives them in the other modes could not be read).
     * @param {boolean} withText
     */
    const walk = async (withText) => {
      const r = await page(ctx, tabId, "snapshot", {
        origin, refFloor: floor, compact: opts.compact, maxNodes: opts.maxNodes, skip: opts.skip ?? 0, ...(withText ? { text: true } : {}), ...(opts.scope !== null ? { target: opts.scope, docToken } : {}),
      });
      if (typeof r.docToken !== "string" || !Array.isArray(r.snapshot) || !Number.isSafeInteger(r.lastRef)) {
        throw new BridgeError(CODE.INTERNAL_ERROR, "could not read this page");
      }
      rememberSnapshot(docTokens, tabId, ctx.session, frameId, r.docToken, Math.max(floor, r.lastRef));
      /** @type {Array<Record<string, unknown>>} */
      const rows = r.snapshot;
      const result = { url: String(r.url), title: String(r.title), page: r, snapshot: rows, truncated: r.truncated === true, ...(isPlainObject(r.cut) ? { cut: r.cut } : {}), mode: "dom" };
      return { r, result };
    };
    // Text runs come from the tree in the other modes (axRows `text`); in mode "dom", from the walk.
    const { r, result: domResult } = await walk(opts.mode === "dom" && opts.text === true);
    const base = { url: domResult.url, title: domResult.title, page: r };
    const dom = domResult.snapshot;
    if (opts.mode === "dom") return domResult;
    let ax;
    try {
      ax = await reader.read(ctx, tabId, {
        origin, doc: r.docToken, floor: Math.max(floor, r.lastRef), compact: opts.compact, maxNodes: opts.maxNodes, skip: opts.skip ?? 0, text: opts.text === true, scope: opts.scope, frame: frameId !== 0,
      });
    } catch (err) {
      if (opts.mode === "a11y" || (err instanceof BridgeError && (err.code === CODE.ORIGIN_NOT_APPROVED || err.code === CODE.TIMEOUT))) throw err;
      const fallback = `the accessibility tree could not be read (${err instanceof BridgeError ? err.code : CODE.INTERNAL_ERROR})`;
      // text: true asked for the page's text runs, which the tree would have given: the walk lists them.
      return { ...(opts.text === true && opts.compact !== true ? (await walk(true)).result : domResult), fallback };
    }
    rememberSnapshot(docTokens, tabId, ctx.session, frameId, r.docToken, Math.max(floor, r.lastRef, ax.lastRef));
    const domInteractive = dom.filter((i) => typeof i.role === "string" && isInteractive(i.role)).length;
    if (opts.mode === "auto" && sparse(ax.interactive, domInteractive)) {
      const merged = merge(ax.items, dom.map((i) => ({ ...i, visible: true })), opts.maxNodes);
      const domCutOf = /** @type {import("../worker/a11y.js").Cut | null} */ (isPlainObject(r.cut) ? r.cut : null);
      const cut = joinCuts(ax.cut, joinCuts(merged.cut, domCutOf));
      return { ...base, snapshot: merged.items, truncated: merged.truncated || ax.truncated || r.truncated === true, ...(cut !== null ? { cut } : {}), mode: "a11y+dom" };
    }
    return { ...base, snapshot: ax.items, truncated: ax.truncated, ...(ax.cut !== null ? { cut: ax.cut } : {}), mode: "a11y" };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function snapshot(args, ctx) {
    const { page: r, ...out } = await snapshotRows(args, ctx, "page_snapshot", argSnapshot(args));
    const rows = out.snapshot.map(shown);
    // A document with nothing to reference (a text-only frame) answers its text, never a silent empty list.
    return { ...out, snapshot: rows, ...documentText(r, rows) };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function find(args, ctx) {
    const q = argFind(args);
    const mode = args.mode ?? "auto";
    if (mode !== "auto" && mode !== "dom") throw new BridgeError(CODE.BAD_REQUEST, 'mode must be "auto" or "dom"');
    const out = await snapshotRows(args, ctx, "page_find", { mode, compact: false, maxNodes: MAX_NODES, skip: 0, text: false, scope: null });
    const rows = out.snapshot.map((i) => ({
      ref: String(i.ref), role: String(i.role), name: String(i.name), tag: String(i.tag ?? ""),
      visible: out.mode === "dom" || i.visible === true, inViewport: i.inViewport === true,
    }));
    const { matches, total } = rankFind(rows, q);
    return {
      url: out.url, matches: matches.map((m) => ({ ref: m.ref, role: m.role, name: m.name, tag: m.tag, visible: m.visible })),
      total, mode: out.mode,
    };
  }

  /**
   * page_click: a person's click. The element is described (what it does decides whether the
   * person is asked), then pointed at (page/actions.js pointAt with `armClick`: scrolled into
   * view, its box's centre, refused when something else is at that point) and clicked there as
   * trusted input (handlers/pointer.js), so Chrome treats it as the person's gesture (a window
   * its handler opens gets through the popup blocker). The page watched the click arrive: on
   * another element it was stopped there (element_covered); the navigation it started is waited
   * for (landing); a tab it opened is reported (`newTab`), and a window Chrome blocked answers
   * popup_blocked.
   * @type {import("../worker/dispatch.js").Handler}
   */
  async function click(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken, frameId } = await open(args, ctx, "page_click", { enabled: true, hit: true });
    const base = { origin, target, docToken };
    const d = await page(ctx, tabId, "describe", base);
    const kind = d.kind === "submit" || d.kind === "link" ? d.kind : "plain";
    if (kind !== "plain" && needsConfirm(ctx, confirmName(kind))) {
      const what = kind === "submit" ? "This submits a form." : "This follows a link to another page.";
      await ask(ctx, { tabId, origin, tool: "page_click", detail: `Click ${d.desc} on ${origin}? ${what}`, fields: d.fields });
    }
    if (deps.cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
    await deps.cdp.ensure(ctx, tabId);
    const at = await pointer.locate(ctx, tabId, frameId, origin, docToken, { target }, { armClick: { expectKind: kind } });
    if (at.covered) {
      if (at.overFrame) await page(ctx, tabId, "clickResult", { origin, cancel: true }).catch(() => undefined);
      throw new BridgeError(CODE.ELEMENT_COVERED, `${at.hitTarget} covers ${at.desc} where a person would click it, so nothing was clicked; close or move what covers it, then click again`);
    }
    const watch = loads.watch(tabId);
    const opened = popupWatch(tabId, ctx);
    const blocked = watchBlockedWindows(deps.cdp, tabId);
    try {
      try {
        await pointer.clickAt(ctx, tabId, { x: at.x, y: at.y, inFrame: at.inFrame });
      } catch (err) {
        watch.cancel();
        // No result will be asked for: the armed watch must not stop the person's next click.
        await page(ctx, tabId, "clickResult", { origin, cancel: true }).catch(() => undefined);
        throw err;
      }
      /** @type {Record<string, any> | null} */
      let r = null;
      try {
        r = await page(ctx, tabId, "clickResult", { origin });
      } catch (err) {
        // The click took the tab to another document (maybe another site) before the page could
        // say what it did: the tab itself is looked at instead (landing).
        if (!(err instanceof BridgeError) || (err.code !== CODE.ORIGIN_NOT_APPROVED && err.code !== CODE.INTERNAL_ERROR)) {
          watch.cancel();
          throw err;
        }
      }
      if (r !== null && typeof r.elsewhere === "string") {
        watch.cancel();
        throw new BridgeError(CODE.ELEMENT_COVERED, `the click landed on ${r.elsewhere}, which the page put over ${at.desc} as it was clicked; it was stopped there and did nothing; look at the page, then click again`);
      }
      if (r !== null && r.armed === true && r.clicked !== true) {
        watch.cancel();
        throw new BridgeError(CODE.TIMEOUT, `the click was sent, but ${at.desc} did not receive it (the page may be busy); check the page before clicking again`);
      }
      // The page says whether the click started a navigation (its navigate event); a document
      // that is already another one cannot, so the tab is looked at (undefined).
      const nav = r !== null && r.armed === true ? (isPlainObject(r.navigation) ? r.navigation : null) : undefined;
      const { navigated, after } = await landing(ctx, tabId, origin, watch, at.url, nav);
      await refuseIfBlocked(opened, blocked, sleep, "The click was done");
      const newTab = await newTabOf(ctx, opened, args.newTab === true, blocked);
      const url = typeof after?.url === "string" && after.url !== "" ? after.url : at.url;
      return { clicked: true, navigated, url, ...(newTab !== null ? { newTab } : {}) };
    } finally {
      opened?.cancel();
      blocked.stop();
    }
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function fill(args, ctx) {
    const target = argTarget(args);
    const value = String(args.value);
    const method = args.method === "insertText" ? "insertText" : "value";
    const { tabId, origin, docToken } = await open(args, ctx, "page_fill", { enabled: true });
    await deps.provenance?.check(args, ctx, "page_fill", origin);
    const allowPassword = ctx.policy.allows("passwordFill");
    const r = await fillValue(ctx, tabId, { origin, target, docToken, allowPassword }, value, method);
    return { filled: true, ...r };
  }

  /**
   * Fill one field (page_fill's, and each text field of page_fill_form's): set in the page
   * (page/actions.js fill, under its password rule), or typed as trusted input; whether it took,
   * read back in the page, and its length, never its content.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{origin: string, target: ReturnType<typeof argTarget>, docToken: string | null, allowPassword: boolean}} base
   * @param {string} value
   * @param {"value" | "insertText"} method
   * @returns {Promise<{applied: "yes" | "no" | "unclear", length: number}>}
   */
  async function fillValue(ctx, tabId, base, value, method) {
    let r;
    if (method === "insertText") {
      // Trusted typing through the debugger (worker/keyboard.js): the content selected, then replaced.
      if (deps.cdp === undefined) throw new BridgeError(CODE.INTERNAL_ERROR, "the debugger is not available");
      r = await insertThrough({ cdp: deps.cdp, page }, ctx, tabId, { ...base, arm: "replace" }, value);
    } else {
      await page(ctx, tabId, "fill", { ...base, value });
      r = await page(ctx, tabId, "inputResult", { origin: base.origin });
    }
    const applied = r.applied === "yes" || r.applied === "no" ? r.applied : "unclear";
    return { applied, length: Number.isSafeInteger(r.length) ? r.length : 0 };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function press(args, ctx) {
    const key = String(args.key);
    const target = argTarget(args, { optional: true });
    const { tabId, origin, docToken } = await open(args, ctx, "page_press", { enabled: true });
    const base = { origin, target, docToken, key };
    const allowPassword = ctx.policy.allows("passwordFill");
    const d = await page(ctx, tabId, "describe", { ...base, forKey: key });
    const kind = d.kind === "submit" || d.kind === "link" ? d.kind : "plain";
    const clickKindAsks = kind !== "plain" && needsConfirm(ctx, confirmName(kind)) && !grace.covered(tabId, origin, "page_press", now());
    if (needsConfirm(ctx, "press") || clickKindAsks) {
      const what = kind === "submit" ? " This submits a form." : kind === "link" ? " This follows a link." : "";
      await ask(ctx, { tabId, origin, tool: "page_press", detail: `Press ${JSON.stringify(key)} on ${d.desc} on ${origin}?${what}`, fields: kind === "submit" ? d.fields : undefined });
    }
    if (key === "Enter" && deps.cdp !== undefined) {
      // Enter activates links, buttons and forms: pressed as a person presses it (trusted CDP key
      // input on the focused element), so a window it opens gets through the popup blocker.
      await deps.cdp.ensure(ctx, tabId);
      const f = await page(ctx, tabId, "focus", { origin, target, docToken, forKey: key, allowPassword });
      const now = f.kind === "submit" || f.kind === "link" ? f.kind : "plain";
      if (now !== "plain" && now !== kind) throw new BridgeError(CODE.POLICY_DENIED, "the element changed after it was confirmed; try again");
      const watch = loads.watch(tabId);
      try {
        for (const ev of keyEvents(parseKey(key, false))) await deps.cdp.send(ctx, tabId, "Input.dispatchKeyEvent", ev, `press ${key}`);
      } catch (err) {
        watch.cancel();
        throw err;
      }
      await landing(ctx, tabId, origin, watch, String(f.url));
      return { pressed: true };
    }
    await page(ctx, tabId, "press", { ...base, allowPassword, expectKind: kind });
    return { pressed: true };
  }

  /**
   * page_select: exactly one of `value` (a string, or an array for <select multiple>), `values`
   * (the same as an array), `label`, `optionIndex`.
   * @type {import("../worker/dispatch.js").Handler}
   */
  async function select(args, ctx) {
    const target = argTarget(args);
    const choice = argChoice(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_select", { enabled: true });
    const base = { origin, target, docToken };
    const shown = chosen(choice);
    // A value or label carrying another site's page content asks first (worker/provenance-gate.js);
    // that answer covers the policy's "select" question too: one window per call.
    const lineage = await deps.provenance?.check(args, ctx, "page_select", origin, { value: JSON.stringify(choice), doing: `select ${shown} on ${origin},` });
    const d = needsConfirm(ctx, "select") && lineage !== "confirmed" ? await page(ctx, tabId, "describe", base) : null;
    // Not a <select>: the select op answers wrong_element; nobody is asked about it first.
    if (d !== null && d.tag === "select") {
      await ask(ctx, { tabId, origin, tool: "page_select", detail: `Select ${shown} in ${d.desc} on ${origin}?` });
    }
    // Skipped the question: the op must then not find a <select> (the page swapped it in).
    const unasked = d !== null && d.tag !== "select";
    return selectChoice(ctx, tabId, base, choice, unasked);
  }

  /**
   * Choose options of one <select> (page_select's, and each select field of page_fill_form's);
   * `unasked`: the person was not asked because it was not a <select> when described, so the op
   * refuses one it finds now (the page swapped it in).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{origin: string, target: ReturnType<typeof argTarget>, docToken: string | null}} base
   * @param {ReturnType<typeof argChoice>} choice
   * @param {boolean} unasked
   */
  async function selectChoice(ctx, tabId, base, choice, unasked) {
    const r = await page(ctx, tabId, "select", { ...base, ...choice, ...(unasked ? { unasked: true } : {}) });
    return {
      selected: Array.isArray(r.selected) ? r.selected.map(String) : [],
      labels: Array.isArray(r.labels) ? r.labels.map(String) : [],
    };
  }

  /**
   * page_fill_form: several fields in one call, each filled by the single-field tools' own code
   * (fillValue, selectChoice, checkTo). First every field is found, waited on until actionable
   * (one timeoutMs for them all) and described, changing nothing: a password field without
   * policy.passwordFill refuses the whole call there. Then one decision on the values' lineage
   * (worker/provenance-gate.js) and at most one question for the selects (page_select's, whose
   * grace it shares), which a provenance answer covers as page_select's does: a no changes
   * nothing. Then each field is filled in order; a field's own failure (FIELD_FAILURES) is its
   * outcome and the others are filled on, any other failure ends the call, saying how many were
   * filled before it.
   * @type {import("../worker/dispatch.js").Handler}
   */
  async function fillForm(args, ctx) {
    const tool = "page_fill_form";
    const fields = argForm(args);
    const { tabId, origin, docToken } = await open(args, ctx, tool);
    const allowPassword = ctx.policy.allows("passwordFill");
    /** @param {BridgeError} err */
    const failure = (err) => ({ code: err.code, message: err.message, hint: ERROR_CODES[err.code]?.hint ?? "" });
    /** @param {unknown} err */
    const own = (err) => err instanceof BridgeError && FIELD_FAILURES.has(err.code);
    const until = now() + argReadyMs(args);
    /** @type {Array<{error: ReturnType<typeof failure>} | {desc: string, tag: string}>} */
    const plan = [];
    for (const [i, f] of fields.entries()) {
      const base = { origin, target: f.target, docToken };
      try {
        const look = () => page(ctx, tabId, "actionable", { ...base, enabled: true });
        await ready({ look, timeoutMs: Math.max(0, until - now()), now, sleep });
        const d = await page(ctx, tabId, "describe", base);
        if (f.kind === "text" && d.password === true && !allowPassword) {
          throw new BridgeError(CODE.POLICY_DENIED, `fields[${i}] is a password field: refused to fill it (the policy's passwordFill is off); nothing was filled`);
        }
        plan.push({ desc: String(d.desc), tag: String(d.tag) });
      } catch (err) {
        if (!own(err)) throw err;
        plan.push({ error: failure(/** @type {BridgeError} */ (err)) });
      }
    }
    const choices = fields.map((f) => (f.kind === "text" ? f.value : f.kind === "select" ? f.choice : f.checked));
    const lineage = await deps.provenance?.check(args, ctx, tool, origin, { value: JSON.stringify(choices), doing: `fill ${fields.length} fields of a form on ${origin},` });
    const selectAsks = needsConfirm(ctx, "select") && lineage !== "confirmed";
    const asked = fields.flatMap((f, i) => {
      const p = plan[i];
      return f.kind === "select" && "tag" in p && p.tag === "select" ? [`${p.desc}: ${chosen(f.choice)}`] : [];
    });
    if (selectAsks && asked.length > 0) {
      const more = asked.length > MAX_ASKED ? `, and ${asked.length - MAX_ASKED} more` : "";
      const others = fields.length - asked.length;
      const rest = others > 0 ? ` It also fills ${others} other field${others === 1 ? "" : "s"}.` : "";
      await ask(ctx, { tabId, origin, tool, detail: `Fill a form on ${origin}: select ${asked.slice(0, MAX_ASKED).join("; ")}${more}?${rest}` });
    }
    /** @type {Array<Record<string, unknown>>} */
    const outcomes = [];
    let filled = 0;
    for (const [i, f] of fields.entries()) {
      const p = plan[i];
      if ("error" in p) {
        outcomes.push({ kind: f.kind, ok: false, error: p.error });
        continue;
      }
      const base = { origin, target: f.target, docToken };
      CALL_TARGET.delete(ctx);
      try {
        /** @type {Record<string, unknown>} */
        let r;
        if (f.kind === "text") r = await fillValue(ctx, tabId, { ...base, allowPassword }, f.value, "value");
        else if (f.kind === "select") r = await selectChoice(ctx, tabId, base, f.choice, selectAsks && p.tag !== "select");
        else r = await checkTo(ctx, tabId, base, f.checked);
        const target = CALL_TARGET.get(ctx);
        outcomes.push({ kind: f.kind, ok: true, ...(target !== undefined ? { target } : {}), ...r });
        filled += 1;
      } catch (err) {
        if (own(err)) {
          outcomes.push({ kind: f.kind, ok: false, error: failure(/** @type {BridgeError} */ (err)) });
          continue;
        }
        if (err instanceof BridgeError) {
          const done = filled === 0 ? "no field before it was filled" : `${filled} field${filled === 1 ? "" : "s"} before it ${filled === 1 ? "was" : "were"} filled`;
          throw new BridgeError(err.code, `fields[${i}]: ${err.message} (${done}; none after it)`.slice(0, 900));
        }
        throw err;
      }
    }
    CALL_TARGET.delete(ctx);
    return { filled, failed: outcomes.length - filled, fields: outcomes };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function clear(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_clear", { enabled: true });
    const allowPassword = ctx.policy.allows("passwordFill");
    await page(ctx, tabId, "clear", { origin, target, docToken, allowPassword });
    return { cleared: true };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function check(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_check", { enabled: true });
    return checkTo(ctx, tabId, { origin, target, docToken }, args.checked === true);
  }

  /**
   * Set one checkbox or radio button (page_check's, and each such field of page_fill_form's).
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {{origin: string, target: ReturnType<typeof argTarget>, docToken: string | null}} base
   * @param {boolean} checked
   */
  async function checkTo(ctx, tabId, base, checked) {
    const r = await page(ctx, tabId, "check", { ...base, checked });
    return { checked: r.checked === true };
  }

  /**
   * page_scroll: an element (scrolled into view), or a box — `container` (an element) or the
   * page — moved `to` "top" | "bottom" | {x, y} or by `dx` / `dy`.
   * @type {import("../worker/dispatch.js").Handler}
   */
  async function scroll(args, ctx) {
    const to = args.to ?? null;
    const moves = to !== null || args.dx !== undefined || args.dy !== undefined;
    const container = args.container ?? null;
    /** @type {Record<string, unknown>} */
    let a;
    if (!moves && container === null && ADDRESS.some((k) => args[k] !== undefined)) a = { target: argTarget(args) };
    else {
      // to's forms ("top", "bottom", {x, y}), dx's and dy's ranges and the container's element
      // shape are the wire schema's (worker/dispatch.js); which of them go together is checked here.
      const delta = (/** @type {string} */ k) => (typeof args[k] === "number" ? /** @type {number} */ (args[k]) : 0);
      if (to !== null && (args.dx !== undefined || args.dy !== undefined)) throw new BridgeError(CODE.BAD_REQUEST, "give to, or dx/dy, not both");
      if (!moves) throw new BridgeError(CODE.BAD_REQUEST, 'give to ("top", "bottom", {x, y}), dx/dy, or an element to scroll to');
      a = to !== null ? { to } : { dx: delta("dx"), dy: delta("dy") };
      if (isPlainObject(container)) a = { ...a, target: argTarget(container), container: true };
    }
    const { tabId, origin, docToken } = await open(args, ctx, "page_scroll", a.target !== undefined ? { visible: false } : undefined);
    const r = await page(ctx, tabId, "scroll", { ...a, origin, docToken });
    return { scrollX: Number(r.scrollX) || 0, scrollY: Number(r.scrollY) || 0, atTop: r.atTop === true, atBottom: r.atBottom === true };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
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

  /** @type {import("../worker/dispatch.js").Handler} */
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

  /** @type {import("../worker/dispatch.js").Handler} */
  async function waitFor(args, ctx) {
    const w = argWait(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_wait_for");
    const r = await page(ctx, tabId, "waitFor", { ...w, origin, docToken });
    if (r.matched !== true) throw new BridgeError(CODE.WAIT_NOT_MET, `what was waited for was not ${w.state} within ${w.timeoutMs} ms`);
    return { matched: true };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function getState(args, ctx) {
    const target = argTarget(args);
    const { tabId, origin, docToken } = await open(args, ctx, "page_get_state");
    let r;
    try {
      r = await page(ctx, tabId, "getState", { origin, target, docToken });
    } catch (err) {
      // Asking whether an element is there is a question, not a failure.
      if (err instanceof BridgeError && (err.code === CODE.BAD_REF || err.code === CODE.ELEMENT_NOT_FOUND)) {
        return { exists: false, reason: err.message };
      }
      throw err;
    }
    /** @type {Record<string, unknown>} */
    const out = { exists: true, tag: String(r.tag), type: String(r.type) };
    if (typeof r.value === "string") out.value = r.value;
    if (typeof r.checked === "boolean") out.checked = r.checked;
    Object.assign(out, { disabled: r.disabled === true, visible: r.visible === true, text: String(r.text ?? "") });
    if (isPlainObject(r.box) && ["x", "y", "width", "height"].every((k) => Number.isFinite(r.box[k]))) {
      out.box = { x: r.box.x, y: r.box.y, width: r.box.width, height: r.box.height };
    }
    out.inViewport = r.inViewport === true;
    if (isPlainObject(r.shortened)) out.shortened = r.shortened; // value or text longer than it returns
    return out;
  }

  return [
    ["page_snapshot", snapshot],
    ["page_find", find],
    ["page_click", click],
    ["page_fill", fill],
    ["page_press", press],
    ["page_select", select],
    ["page_check", check],
    ["page_fill_form", fillForm],
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
 * The actions that take `waitFor` and `observe` (worker/catalogue.js, generated from the MCP tool
 * catalogue: the tools whose arguments are its `Acting`): after the action (and the wait) the result
 * carries `observation` — what page_snapshot and page_text would answer now, read through those
 * very handlers (their gate, redaction and masking), or `{skipped}` when the tab is not on an
 * approved site (checked before the read and again after it).
 */
export { OBSERVING_ACTIONS };
/** Most characters of page text one observation carries (page_text reads on from there). */
export const OBSERVE_TEXT_CHARS = 20_000;
/** The failures withAftermath reports as the stop when the action's tab was stopped meanwhile. */
/** @type {ReadonlySet<string>} */
const STOP_FAILURES = new Set([CODE.ORIGIN_NOT_APPROVED, CODE.NAVIGATION_CANCELLED, CODE.INTERNAL_ERROR, CODE.TIMEOUT, CODE.WAIT_NOT_MET]);
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
 * (elementTools' waitAfter), then `newTab` when a tab the action opened has joined the session,
 * then `blocked` (the origin) when the action's tab tried to leave for an unapproved origin and
 * was stopped before the request was sent (worker/nav-block.js; the tab is back on its page first,
 * and an action that failed on it says so), then the observation.
 * @param {import("./support.js").HandlerDeps & {browser: InteractBrowserApi, docTokens?: DocTokens,
 *   callFrame?: WeakMap<object, number>, popups?: import("../worker/popups.js").Popups,
 *   navBlock?: import("../worker/nav-block.js").NavBlocker}} deps the routes' shared deps
 * @param {Map<string, import("../worker/dispatch.js").Handler>} routes every action's handler
 * @returns {Map<string, import("../worker/dispatch.js").Handler>}
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
    const urls = [tab?.url, tab?.pendingUrl].filter((u) => typeof u === "string" && u !== "");
    return urls.length > 0 && urls.every((u) => {
      const o = originOf(u);
      return o !== null && (o === landed || ctx.policy.approves(o));
    });
  }

  /**
   * @param {number} tabId
   * @param {import("../worker/dispatch.js").Context} ctx
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

  /**
   * The action's result with `newTab` when a tab it opened has joined the session by the time it
   * is done (page_click reports its own, and can wait for one).
   * @param {unknown} out
   * @param {import("../worker/popups.js").PopupWatch | null} opened
   */
  function withNewTab(out, opened) {
    const joined = opened?.seen() ?? null;
    opened?.cancel();
    if (joined === null || !isPlainObject(out) || out.newTab !== undefined) return out;
    return { ...out, newTab: { id: joined.id, url: joined.url } };
  }

  /**
   * The origin a stop during the action kept the tab from (once the tab is back), or null.
   * @param {{seen: () => {origin: string} | null, cancel: () => void} | null} stops
   * @param {number} tabId
   */
  async function stoppedBy(stops, tabId) {
    const stop = stops?.seen() ?? null;
    stops?.cancel();
    if (stop === null) return null;
    await deps.navBlock?.restored(tabId);
    return stop.origin;
  }

  const wrapped = new Map(routes);
  // Every element action's result names what it acted on (CALL_TARGET, set as the page resolved it).
  for (const action of TARGETED_ACTIONS) {
    const handler = wrapped.get(action);
    if (handler === undefined) continue;
    wrapped.set(action, async (args, ctx) => {
      const out = await handler(args, ctx);
      const target = CALL_TARGET.get(ctx);
      return target !== undefined && isPlainObject(out) && out.target === undefined ? { ...out, target } : out;
    });
  }
  for (const action of OBSERVING_ACTIONS) {
    const handler = wrapped.get(action);
    if (handler === undefined) continue;
    wrapped.set(action, async (args, ctx) => {
      const w = args.waitFor ?? null;
      const o = args.observe ?? null;
      const wait = w !== null ? argWait(w) : null;
      const want = o !== null ? argObserve(o) : null;
      const tabId = argTabId(args);
      const { waitFor: _w, observe: _o, ...rest } = args;
      // A tab the action opens (target=_blank, window.open) joins the session whether or not it
      // is watched (worker/popups.js); watching only lets the result report it.
      const opened = action === "page_click" ? null : deps.popups?.watch(tabId, ctx.policy) ?? null;
      const stops = deps.navBlock?.watch(tabId) ?? null;
      let out;
      try {
        out = await handler(rest, ctx);
        if (wait !== null) await waitAfter({ waitFor: wait }, tabId, ctx, action);
      } catch (err) {
        opened?.cancel();
        const stop = await stoppedBy(stops, tabId);
        // The action (or its wait) failed on the stop itself: it landed "elsewhere", (the tab
        // already back) "stayed on its page", or the page went away under the wait.
        if (stop !== null && err instanceof BridgeError && STOP_FAILURES.has(err.code)) {
          throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, `the tab was stopped before it left for ${stop}, which is not approved (nothing was sent there); it stays on its page`);
        }
        throw err;
      }
      out = withNewTab(out, opened);
      const waited = WAITED.get(ctx);
      if (waited !== undefined && isPlainObject(out)) out = { ...out, waitedMs: waited };
      const stop = await stoppedBy(stops, tabId);
      if (stop !== null && isPlainObject(out)) out = { ...out, blocked: stop };
      if (want === null) return out;
      const landed = isPlainObject(out) && typeof out.url === "string" ? originOf(out.url) : null;
      return { ...(isPlainObject(out) ? out : {}), observation: await observe(tabId, ctx, want, landed) };
    });
  }
  return wrapped;
}
