// tab-load.js — waits for a tab to finish loading, fed by chrome.tabs.onUpdated / onRemoved and
// the top frame's webNavigation.onBeforeNavigate / onErrorOccurred (background.js forwards them).
// Pure: no chrome; timers are injected. It must never keep a timer or a waiter alive after it
// settled, and never hang: every wait ends on "complete", on removal of the tab (tab_not_found),
// on a top-frame navigation that ended without a document ("aborted": it became a download, or
// a 204, and no other navigation followed it) or at its timeout. A watch may skip the "complete"
// of an empty tab (about:blank): tab_open creates its tab empty and navigates it once the
// debugger is on.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";

/** How long tab_open / page_navigate wait for status "complete". */
export const LOAD_TIMEOUT_MS = 30_000;

/** Chrome ends a top-frame navigation that turns into a download (or gets a 204) with
 * net::ERR_ABORTED and no tabs.onUpdated at all: the tab never left "complete". A navigation
 * that another one replaced ends the same way, and the next one's onBeforeNavigate follows in
 * the same browser task (measured: 12 ms later at the worker). So an abort ends the tab's waits
 * only when no navigation started within this long. */
export const ABORT_SETTLE_MS = 500;

const ABORTED = "net::ERR_ABORTED";

/**
 * The tab id of a top-frame navigation event of the shown page (not a prerender), else null.
 * @param {unknown} details webNavigation's
 */
function topFrameTab(details) {
  if (details === null || typeof details !== "object") return null;
  const d = /** @type {{tabId?: unknown, frameId?: unknown, documentLifecycle?: unknown}} */ (details);
  if (d.frameId !== 0 || !Number.isInteger(d.tabId) || d.documentLifecycle === "prerender") return null;
  return /** @type {number} */ (d.tabId);
}

/**
 * @typedef {"complete" | "timeout" | "aborted"} LoadOutcome
 * @typedef {object} LoadWatcher
 * @property {(tabId: number, timeoutMs?: number, opts?: {skipBlank?: boolean}) =>
 *   {promise: Promise<LoadOutcome>, cancel: () => void}} watch arm before starting
 *   the navigation, so no event is missed; skipBlank: a "complete" while the tab is still at
 *   about:blank is not the awaited page's
 * @property {(tabId: number, changeInfo: unknown, tab?: unknown) => void} updated tabs.onUpdated
 * @property {(tabId: number) => void} removed tabs.onRemoved
 * @property {(details: unknown) => void} started webNavigation.onBeforeNavigate
 * @property {(details: unknown) => void} failed webNavigation.onErrorOccurred
 * @property {() => number} size
 */

/**
 * @param {import("./pending.js").Timers} timers
 * @returns {LoadWatcher}
 */
export function createLoadWatcher({ setTimer, clearTimer }) {
  /** @type {Map<number, Set<{skipBlank: boolean, done: (outcome: LoadOutcome | Error) => void}>>} */
  const waiters = new Map();
  /** tabId -> an abort that ends the waits armed before it unless a navigation starts. */
  const settling = new Map();

  /** @param {number} tabId */
  function unsettle(tabId) {
    if (!settling.has(tabId)) return;
    clearTimer(settling.get(tabId));
    settling.delete(tabId);
  }

  /**
   * @param {number} tabId
   * @param {"complete" | "aborted" | Error} outcome
   * @param {boolean} [blank] the tab that completed is at about:blank
   */
  function finishAll(tabId, outcome, blank = false) {
    const set = waiters.get(tabId);
    if (set === undefined) return;
    for (const w of [...set]) if (!(blank && w.skipBlank)) w.done(outcome);
  }

  return {
    watch(tabId, timeoutMs = LOAD_TIMEOUT_MS, { skipBlank = false } = {}) {
      /** @type {() => void} */
      let cancel = () => {};
      /** @type {Promise<LoadOutcome>} */
      const promise = new Promise((resolve, reject) => {
        let set = waiters.get(tabId);
        if (set === undefined) waiters.set(tabId, (set = new Set()));
        const waiter = {
          skipBlank,
          /** @param {LoadOutcome | Error} outcome */
          done(outcome) {
            if (!set.delete(waiter)) return;
            if (set.size === 0 && waiters.get(tabId) === set) {
              waiters.delete(tabId);
              unsettle(tabId);
            }
            clearTimer(timer);
            if (outcome instanceof Error) reject(outcome);
            else resolve(outcome);
          },
        };
        const timer = setTimer(() => waiter.done("timeout"), timeoutMs);
        set.add(waiter);
        cancel = () => waiter.done("timeout");
      });
      return { promise, cancel };
    },
    updated(tabId, changeInfo, tab) {
      if (changeInfo !== null && typeof changeInfo === "object" && /** @type {{status?: unknown}} */ (changeInfo).status === "complete") {
        const url = tab !== null && typeof tab === "object" ? /** @type {{url?: unknown}} */ (tab).url : undefined;
        finishAll(tabId, "complete", url === "about:blank");
      }
    },
    removed(tabId) {
      finishAll(tabId, new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} was closed`));
    },
    started(details) {
      const tabId = topFrameTab(details);
      if (tabId !== null) unsettle(tabId);
    },
    failed(details) {
      const tabId = topFrameTab(details);
      if (tabId === null || !waiters.has(tabId)) return;
      if (/** @type {{error?: unknown}} */ (details).error !== ABORTED) return;
      unsettle(tabId);
      const armed = [...(waiters.get(tabId) ?? [])];
      settling.set(tabId, setTimer(() => {
        settling.delete(tabId);
        for (const w of armed) w.done("aborted");
      }, ABORT_SETTLE_MS));
    },
    size: () => [...waiters.values()].reduce((n, s) => n + s.size, 0),
  };
}
