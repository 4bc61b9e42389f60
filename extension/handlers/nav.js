// handlers/nav.js — moving a tab: navigateTab (what page_navigate and page_follow share: the
// origin gate on the target, the load, the check after landing), page_follow (a link by its
// snapshot ref: its href is resolved in the page's isolated world and never passes through the
// model), page_history (back or forward by steps), page_reload, tab_focus.
// Thin glue: browser calls are injected (shared/chrome-api.js via background.js), ownership, the
// origin gate and load waiting come from lib/ and support.js. It must never touch the chrome
// global, never act on a tab the session does not own, never move a tab whose current origin is
// not approved, never follow anything but an http(s) link's href, and never report success when
// the move landed on an unapproved origin.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { originOf } from "../shared/origin.js";
import { toTabSummary } from "../worker/tab-mapping.js";
import { isPlainObject } from "../shared/wire.js";
import { argTarget, elementTools } from "./interact.js";
import { argTabId, ownedTab, settledTab, step } from "./support.js";

/**
 * The browser calls these handlers use beyond support.js's BrowserApi.
 * @typedef {object} NavBrowserApi
 * @property {(tabId: number, props?: {bypassCache?: boolean}) => Promise<void>} tabReload
 * @property {(tabId: number, props: {active: boolean}) => Promise<any>} updateTab
 * @property {(windowId: number, props: {focused: boolean}) => Promise<any>} updateWindowProps
 * @property {(tabId: number, func: (...a: any[]) => unknown, args: unknown[]) =>
 *   Promise<Array<{result?: unknown}>>} executeScriptArgs
 */

/** How long the in-page history fallback waits for the load (there may be no entry to go to). */
export const HISTORY_FALLBACK_TIMEOUT_MS = 10_000;

/** Farthest one page_history call moves (either way). */
export const MAX_HISTORY_STEPS = 50;

/**
 * Runs in the page (isolated world; the History object is the page's): move `delta` entries
 * through the session history unless it is sure there is no entry that far. The Navigation API
 * lists only this origin's entries: when they are the whole history it knows exactly; when
 * another site's entries are in it (history.length is larger) they may lie either way, so it
 * tries (the caller's load wait then tells). Self-contained: serialised into the page.
 * @param {number} delta
 * @returns {{moved: boolean}}
 */
export function historyStep(delta) {
  const nav = /** @type {any} */ (globalThis).navigation;
  const listed = typeof nav?.entries === "function" ? nav.entries().length : -1;
  const index = nav?.currentEntry?.index;
  if (listed === history.length && Number.isInteger(index)) {
    if (index + delta < 0 || index + delta >= listed) return { moved: false };
  } else if (history.length <= 1) {
    return { moved: false };
  }
  if (delta === -1) history.back();
  else if (delta === 1) history.forward();
  else history.go(delta);
  return { moved: true };
}

/**
 * Refuse when any URL the tab reports (committed or pending) is neither the gated origin nor
 * approved by the policy.
 * @param {any} tab
 * @param {string} gated the origin the gate approved before the move
 * @param {import("./support.js").Ctx} ctx
 */
export function checkLanded(tab, gated, ctx) {
  const urls = [tab?.url, tab?.pendingUrl].filter((u) => typeof u === "string" && u !== "");
  if (urls.length === 0) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the tab has no readable URL after the move");
  for (const url of urls) {
    const o = originOf(url);
    if (o === null || (o !== gated && !ctx.policy.approves(o))) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the tab moved to an unapproved origin");
    }
  }
}

/**
 * Load `url` in the owned tab `tabId` (showing `before`) and wait for it: the target passes the
 * origin gate first (an unapproved site asks the person; worker/nav-block.js then allows it before
 * the navigation starts), and where the tab lands is checked again (a redirect to an unapproved
 * origin answers origin_not_approved; a navigation that never happened, navigation_cancelled).
 * page_navigate's and page_follow's one way to move a tab.
 * @param {import("./support.js").HandlerDeps} deps
 * @param {import("./support.js").Ctx} ctx
 * @param {{tabId: number, url: string, before: any, tool: string}} move
 * @returns {Promise<{url: string, title: string}>}
 */
export async function navigateTab(deps, ctx, { tabId, url, before, tool }) {
  const origin = await deps.ensureOrigin(url, ctx, tool);
  const watch = deps.loads.watch(tabId);
  try {
    await deps.browser.updateTab(tabId, { url });
  } catch {
    watch.cancel();
    throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
  }
  const tab = await settledTab(deps, tabId, watch);
  const outcome = await watch.promise; // settled: how the wait ended
  for (const where of [tab?.url, tab?.pendingUrl]) {
    if (typeof where !== "string" || where === "") continue;
    const o = originOf(where);
    if (o !== origin && !ctx.policy.approves(o)) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "redirected to an unapproved origin");
    }
  }
  // The tab stayed where it was (e.g. a 204 answer, a download, or another navigation won):
  // say so rather than report the old page as the new one.
  if (typeof before?.url === "string" && before.url !== "" && tab?.url === before.url
      && new URL(url).href !== before.url && !tab?.pendingUrl) {
    const why = outcome === "aborted" ? "the address ended without a page (a download, or an empty answer), so " : "";
    throw new BridgeError(CODE.NAVIGATION_CANCELLED, `${why}the tab stayed on ${before.url}`);
  }
  return { url: typeof tab?.url === "string" ? tab.url : "", title: typeof tab?.title === "string" ? tab.title : "" };
}

/** The schemes page_follow follows (anything else is not a web link for it). */
const FOLLOWED = new Set(["http:", "https:"]);

/**
 * The web address a link's resolved href names, or a wrong_element refusal: no link (no href),
 * a javascript: URL, an unparsable href or another scheme.
 * @param {unknown} href the page's answer (page/actions.js describe with forFollow)
 * @param {unknown} desc how the page describes the element
 * @returns {string}
 */
export function followedUrl(href, desc) {
  const what = typeof desc === "string" && desc !== "" ? desc : "the element";
  if (typeof href !== "string" || href === "") throw new BridgeError(CODE.WRONG_ELEMENT, `${what} is not a link (it has no href); page_follow follows links, page_click clicks anything else`);
  let u;
  try {
    u = new URL(href);
  } catch {
    throw new BridgeError(CODE.WRONG_ELEMENT, `${what} is not a link with a usable address`);
  }
  if (u.protocol === "javascript:") throw new BridgeError(CODE.WRONG_ELEMENT, `${what} runs script (a javascript: link) rather than going to a page; use page_click`);
  if (!FOLLOWED.has(u.protocol)) throw new BridgeError(CODE.WRONG_ELEMENT, `${what} is a ${u.protocol.slice(0, 20)} link, not a web page`);
  return u.href;
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: NavBrowserApi & import("./interact.js").InteractBrowserApi,
 *   docTokens?: import("./interact.js").DocTokens, callFrame?: WeakMap<object, number>,
 *   cdp?: import("../worker/debugger.js").DebuggerManager}} deps
 * @returns {Array<[string, import("../worker/dispatch.js").Handler]>}
 */
export function navHandlers(deps) {
  const { browser, loads, ensureOrigin } = deps;
  const elements = elementTools(deps);

  /**
   * page_follow: the link a ref (from the tab's latest snapshot, in its `frame` or the top one)
   * names is followed in this tab: its href is resolved in the page's isolated world and goes
   * straight to navigateTab, so the model never handles the address. A same-origin target is
   * already approved (the page was gated to be read); another origin passes the same gate as
   * page_navigate. Not a link (no href, javascript:) → wrong_element.
   * @type {import("../worker/dispatch.js").Handler}
   */
  async function pageFollow(args, ctx) {
    // The ref is required and @eN-shaped by the wire schema (worker/dispatch.js).
    const target = argTarget({ ref: args.ref });
    const { tabId, tab, origin, docToken } = await elements.open(args, ctx, "page_follow");
    const d = await elements.page(ctx, tabId, "describe", { origin, target, docToken, forFollow: true });
    const url = followedUrl(d.href, d.desc);
    return navigateTab(deps, ctx, { tabId, url, before: tab, tool: "page_follow" });
  }

  /**
   * @param {string} tool
   * @param {((tabId: number) => Promise<unknown>) | null} move Chrome's move; null: go straight
   *   to the page's own history (by `delta`)
   * @param {string} refusal message when there is nowhere to move (e.g. no history entry)
   * @returns {import("../worker/dispatch.js").Handler}
   */
  const historyMove = (tool, move, refusal, delta = 0) => async (args, ctx) => {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    const gated = await ensureOrigin(tab?.url, ctx, tool);
    if (move === null) await entryApproved(ctx, tabId, delta, refusal);
    let watch = loads.watch(tabId);
    let fallback = false;
    let moved = false;
    if (move !== null) {
      try {
        await move(tabId);
        moved = true;
      } catch {
        watch.cancel();
        await ownedTab(deps, ctx, tabId); // tab_not_found when it is gone
        if (delta === 0) throw new BridgeError(CODE.BAD_REQUEST, refusal);
      }
    } else {
      watch.cancel();
    }
    if (!moved) {
      // Chrome's tabs.goBack / goForward skip entries whose page moved on without a user
      // gesture (its history intervention), which is every page an agent clicked or
      // navigated away from. The page's own history.go() does not skip them.
      watch = loads.watch(tabId, HISTORY_FALLBACK_TIMEOUT_MS);
      let stepped;
      try {
        const results = await step(ctx, "step through the page's history", browser.executeScriptArgs(tabId, historyStep, [delta]));
        stepped = Array.isArray(results) ? results[0]?.result : undefined;
      } catch {
        stepped = undefined;
      }
      if (!isPlainObject(stepped) || stepped.moved !== true) {
        watch.cancel();
        throw new BridgeError(CODE.BAD_REQUEST, refusal);
      }
      fallback = true;
    }
    let outcome = "complete";
    if (fallback) {
      try {
        outcome = await watch.promise;
      } catch (err) {
        throw err instanceof BridgeError ? err : new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
      }
    }
    const after = fallback ? await ownedTab(deps, ctx, tabId) : await settledTab(deps, tabId, watch);
    // Nothing loaded and nothing moved: there was no entry that way after all.
    if (outcome === "timeout" && after?.url === tab?.url) throw new BridgeError(CODE.BAD_REQUEST, refusal);
    checkLanded(after, gated, ctx);
    return { url: typeof after?.url === "string" ? after.url : "", title: typeof after?.title === "string" ? after.title : "" };
  };

  /**
   * The history entry `n` steps away is looked at before the tab moves (CDP
   * Page.getNavigationHistory, through the debugger on the owned tab): an entry on a site the
   * policy does not approve (or no web page) is refused here, so no request for it leaves, and
   * the refusal never names it. No debugger in the deps (unit tests): the check after landing is
   * the only one.
   * @param {import("./support.js").Ctx} ctx
   * @param {number} tabId
   * @param {number} n
   * @param {string} nowhere
   */
  async function entryApproved(ctx, tabId, n, nowhere) {
    if (deps.cdp === undefined) return;
    const h = /** @type {any} */ (await deps.cdp.send(ctx, tabId, "Page.getNavigationHistory", {}, "read the tab's history"));
    const entries = Array.isArray(h?.entries) ? h.entries : null;
    const at = Number.isInteger(h?.currentIndex) ? h.currentIndex : null;
    if (entries === null || at === null) return; // unreadable: the check after landing decides
    const entry = entries[at + n];
    if (entry === undefined) throw new BridgeError(CODE.BAD_REQUEST, nowhere);
    const origin = originOf(typeof entry.url === "string" ? entry.url : "");
    if (origin === null || !ctx.policy.approves(origin)) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, `the page ${n < 0 ? "back" : "forward"} that way is on a site the policy does not approve; the tab stayed where it was`);
    }
  }

  /**
   * page_history: `steps` entries back (negative, the default -1) or forward (positive), as the
   * page's own history counts them (history.go: exact entries, one jump, the entries between
   * not loaded). Where it lands passes the origin check; a refusal never names the blocked
   * entry's host.
   * @type {import("../worker/dispatch.js").Handler}
   */
  async function pageHistory(args, ctx) {
    const steps = args.steps ?? -1;
    if (!Number.isInteger(steps) || steps === 0 || Math.abs(/** @type {number} */ (steps)) > MAX_HISTORY_STEPS) {
      throw new BridgeError(CODE.BAD_REQUEST, `steps must be a non-zero integer within ±${MAX_HISTORY_STEPS} (negative: back)`);
    }
    const n = /** @type {number} */ (steps);
    const nowhere = n === -1 ? "there is no previous page in this tab's history"
      : n === 1 ? "there is no next page in this tab's history"
        : `there are not ${Math.abs(n)} pages ${n < 0 ? "back" : "forward"} in this tab's history`;
    const landed = /** @type {{url: string, title: string}} */ (await historyMove("page_history", null, nowhere, n)(args, ctx));
    return { ...landed, steps: n };
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function pageReload(args, ctx) {
    const bypassCache = args.bypassCache ?? false;
    if (typeof bypassCache !== "boolean") throw new BridgeError(CODE.BAD_REQUEST, "bypassCache must be true or false");
    return historyMove("page_reload", (id) => browser.tabReload(id, { bypassCache }), "the tab could not be reloaded")(args, ctx);
  }

  /** @type {import("../worker/dispatch.js").Handler} */
  async function tabFocus(args, ctx) {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    try {
      await browser.updateTab(tabId, { active: true });
      if (Number.isInteger(tab?.windowId)) await browser.updateWindowProps(tab.windowId, { focused: true });
    } catch {
      await ownedTab(deps, ctx, tabId);
      throw new BridgeError(CODE.INTERNAL_ERROR, "could not bring the tab forward");
    }
    const now = await ownedTab(deps, ctx, tabId);
    return { tab: toTabSummary(now) ?? toTabSummary(tab) };
  }

  return [
    ["page_history", pageHistory],
    ["page_reload", pageReload],
    ["tab_focus", tabFocus],
    ["page_follow", pageFollow],
  ];
}
