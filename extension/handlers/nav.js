// handlers/nav.js — history and focus actions: page_history (back or forward by steps),
// page_reload, tab_focus.
// Thin glue: browser calls are injected (lib/chrome-api.js via background.js), ownership, the
// origin gate and load waiting come from lib/ and support.js. It must never touch the chrome
// global, never act on a tab the session does not own, never move a tab whose current origin is
// not approved, and never report success when the move landed on an unapproved origin.

import { BridgeError } from "../lib/bridge-error.js";
import { CODE } from "../lib/error-codes.js";
import { isApproved, originOf } from "../lib/origin.js";
import { toTabSummary } from "../lib/tab-mapping.js";
import { isPlainObject } from "../lib/wire.js";
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
  const approved = isPlainObject(ctx.policy) ? ctx.policy.origins : undefined;
  const urls = [tab?.url, tab?.pendingUrl].filter((u) => typeof u === "string" && u !== "");
  if (urls.length === 0) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the tab has no readable URL after the move");
  for (const url of urls) {
    const o = originOf(url);
    if (o === null || (o !== gated && !isApproved(o, approved))) {
      throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the tab moved to an unapproved origin");
    }
  }
}

/**
 * Handler entries for the dispatcher.
 * @param {import("./support.js").HandlerDeps & {browser: NavBrowserApi}} deps
 * @returns {Array<[string, import("../lib/dispatch.js").Handler]>}
 */
export function navHandlers(deps) {
  const { browser, loads, ensureOrigin } = deps;

  /**
   * @param {string} tool
   * @param {((tabId: number) => Promise<unknown>) | null} move Chrome's move; null: go straight
   *   to the page's own history (by `delta`)
   * @param {string} refusal message when there is nowhere to move (e.g. no history entry)
   * @returns {import("../lib/dispatch.js").Handler}
   */
  const historyMove = (tool, move, refusal, delta = 0) => async (args, ctx) => {
    const tabId = argTabId(args);
    const tab = await ownedTab(deps, ctx, tabId);
    const gated = await ensureOrigin(tab?.url, ctx, tool);
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
   * page_history: `steps` entries back (negative, the default -1) or forward (positive), as the
   * page's own history counts them (history.go: exact entries, one jump, the entries between
   * not loaded). Where it lands passes the origin check; a refusal never names the blocked
   * entry's host.
   * @type {import("../lib/dispatch.js").Handler}
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

  /** @type {import("../lib/dispatch.js").Handler} */
  async function pageReload(args, ctx) {
    const bypassCache = args.bypassCache ?? false;
    if (typeof bypassCache !== "boolean") throw new BridgeError(CODE.BAD_REQUEST, "bypassCache must be true or false");
    return historyMove("page_reload", (id) => browser.tabReload(id, { bypassCache }), "the tab could not be reloaded")(args, ctx);
  }

  /** @type {import("../lib/dispatch.js").Handler} */
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
  ];
}
