// handlers/support.js — what every tab and page handler shares: typed argument reads, the ownership
// check, waiting for a load, and the dependency bundle background.js injects. Thin glue over
// lib/ modules: it must never touch the chrome global, never let a session reach a tab it does
// not own, and never report a tab's state without re-reading it from the browser.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";
import { originOf, originOfRead } from "../shared/origin.js";

/**
 * The browser calls handlers use (shared/chrome-api.js provides the real ones).
 * @typedef {object} BrowserApi
 * @property {() => Promise<unknown[]>} queryAllTabs
 * @property {(tabId: number) => Promise<any>} getTab rejects when the tab is gone
 * @property {(props: {windowId: number, url: string, active: boolean}) => Promise<any>} createTab
 * @property {(opts: {url: string, focused: boolean, type: "normal", width: number, height: number}) => Promise<any>} createWindow
 * @property {(tabId: number, props: {url?: string, active?: boolean, muted?: boolean}) => Promise<any>} updateTab
 * @property {(tabId: number) => Promise<void>} removeTab
 * @property {(tabId: number, func: () => unknown) => Promise<Array<{result?: unknown, documentId?: string}>>} executeScript
 */

/**
 * @typedef {object} HandlerDeps
 * @property {BrowserApi} browser
 * @property {import("../worker/ownership.js").Ownership} ownership
 * @property {import("../worker/tab-load.js").LoadWatcher} loads
 * @property {(url: unknown, ctx: Ctx, tool: string) => Promise<string>} ensureOrigin
 * @property {import("../shared/confirm-window.js").Confirm} confirm
 * @property {<T>(action: string, tabId: number, ctx: Ctx, fn: () => Promise<T>) => Promise<T>} [guardTab]
 *   runs `fn` (tab_open's wait for its new tab) through the tab guard (worker/debugger.js)
 * @property {() => number} [now] the clock (ms since the epoch) where a handler keeps time
 * @property {import("../worker/tab-lifecycle.js").TabLifecycle} [lifecycle] the agent-tab cap and
 *   discard protection (background.js always gives it)
 * @property {{check: (args: Record<string, unknown>, ctx: Ctx, tool: string, target: string | null,
 *   shown?: {address?: string, value?: string, doing?: string}) => Promise<unknown>}} [provenance]
 *   the provenance gate (worker/provenance-gate.js) page_fill, page_type, page_keys, page_select and
 *   page_dialog (promptText) ask before acting (an address's lineage — tab_open, page_navigate,
 *   page_fetch — is decided before any handler runs, by the gate's `gated` wrapper)
 */

/** @typedef {{session: string, client?: string | null, policy: import("../worker/policy.js").Policy, deadline?: number}} Ctx */

/** Longest one browser step (an injected script, a debugger command) may take. */
export const STEP_MAX_MS = 15_000;

/**
 * Await one browser step, but never past `capMs` nor the call's deadline: a page that does not
 * answer (busy, or blocked by a JavaScript dialog) ends the call with `timeout` naming the step,
 * so later calls on the tab are not stuck behind it. The step itself cannot be cancelled (Chrome
 * finishes or drops it); its late outcome is ignored.
 * @template T
 * @param {Ctx} ctx
 * @param {string} what the step, as the person reads it: "click", "read the page's text"
 * @param {Promise<T>} work
 * @param {number} [capMs]
 * @returns {Promise<T>}
 */
export async function step(ctx, what, work, capMs = STEP_MAX_MS) {
  const left = typeof ctx.deadline === "number" ? ctx.deadline - Date.now() : capMs;
  const ms = Math.max(0, Math.min(capMs, left));
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new BridgeError(CODE.TIMEOUT,
      `the page did not finish the step "${what}" within ${(ms / 1000).toFixed(1)} s (it may be busy, or a JavaScript dialog is open)`)), ms);
  });
  try {
    return /** @type {T} */ (await Promise.race([work, late]));
  } finally {
    clearTimeout(timer);
  }
}

/** Longest URL a tool accepts (the catalogue's `Url`; page_fetch checks its own copy of it). */
export const MAX_URL = 8192;

// The readers below give an argument its type. They check nothing: every catalogue action's
// `args` matched the wire schema the MCP catalogue publishes before its handler was called
// (worker/dispatch.js argsRefusal), which states each one's type, range and length once.

/**
 * @param {Record<string, unknown>} args
 * @param {string} name
 * @returns {number}
 */
export function argTabId(args, name = "tabId") {
  return /** @type {number} */ (args[name]);
}

/**
 * @param {Record<string, unknown>} args
 * @param {string} name
 * @returns {string}
 */
export function argUrl(args, name = "url") {
  return String(args[name]);
}

/**
 * An optional integer argument (the schema holds it to its range), or `fallback` when left out.
 * @param {Record<string, unknown>} args
 * @param {string} name
 * @param {number} fallback
 * @param {number} _min the range the schema states (kept where the handler reads it)
 * @param {number} _max
 */
export function argInt(args, name, fallback, _min, _max) {
  const v = args[name];
  return Number.isSafeInteger(v) ? /** @type {number} */ (v) : fallback;
}

/**
 * The tab, if `ctx.session` owns it and it still exists.
 * @param {HandlerDeps} deps
 * @param {Ctx} ctx
 * @param {number} tabId
 */
export async function ownedTab(deps, ctx, tabId) {
  if (deps.ownership.owner(tabId) !== ctx.session) {
    throw new BridgeError(CODE.TAB_NOT_OWNED, `tab ${tabId} was not opened by this session`);
  }
  try {
    return await deps.browser.getTab(tabId);
  } catch {
    deps.ownership.release(tabId);
    throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
  }
}

/**
 * Wait until the tab reports status "complete" (or the load timeout), then re-read it.
 * `watch` must have been armed before the navigation started, or (`newTab`) right after a new
 * tab was created: a new tab is "loading" until its first load completes, so a "complete"
 * read now cannot be a previous page's.
 * @param {HandlerDeps} deps
 * @param {number} tabId
 * @param {{promise: Promise<unknown>, cancel: () => void}} watch
 * @param {{newTab?: boolean}} [options]
 */
export async function settledTab(deps, tabId, watch, { newTab = false } = {}) {
  try {
    if (newTab) {
      const now = await deps.browser.getTab(tabId);
      if (now && now.status === "complete") watch.cancel();
    }
    await watch.promise;
    return await deps.browser.getTab(tabId);
  } catch (err) {
    watch.cancel();
    if (err instanceof BridgeError) throw err;
    throw new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} is gone`);
  }
}

/**
 * Ownership + the origin gate on the tab's current URL (the page tools' usual first step).
 * @param {HandlerDeps} deps
 * @param {Record<string, unknown>} args
 * @param {Ctx} ctx
 * @param {string} tool
 */
export async function gatedTab(deps, args, ctx, tool) {
  const tabId = argTabId(args);
  const tab = await ownedTab(deps, ctx, tabId);
  const origin = await deps.ensureOrigin(tab?.url, ctx, tool);
  return { tabId, tab, origin, url: String(tab?.url ?? "") };
}

/**
 * Content must come from the gated origin (the page may have navigated meanwhile).
 * @param {unknown} from a URL, or an in-page read's `{href, origin}` (shared/origin.js `originOfRead`)
 * @param {string} origin
 */
export function sameOrigin(from, origin) {
  const got = from !== null && typeof from === "object" ? originOfRead(from) : originOf(from);
  if (got !== origin) throw new BridgeError(CODE.ORIGIN_NOT_APPROVED, "the page left the approved origin");
}
