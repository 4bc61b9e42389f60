// tab-load.js — waits for a tab to finish loading, fed by chrome.tabs.onUpdated / onRemoved
// (background.js forwards them). Pure: no chrome; timers are injected. It must never keep a
// timer or a waiter alive after it settled, and never hang: every wait ends on "complete",
// on removal of the tab (tab_not_found) or at its timeout. A watch may skip the "complete" of an
// empty tab (about:blank): tab_open creates its tab empty and navigates it once the debugger is on.

import { BridgeError } from "../shared/bridge-error.js";
import { CODE } from "../shared/error-codes.js";

/** How long tab_open / page_navigate wait for status "complete". */
export const LOAD_TIMEOUT_MS = 30_000;

/**
 * @typedef {object} LoadWatcher
 * @property {(tabId: number, timeoutMs?: number, opts?: {skipBlank?: boolean}) =>
 *   {promise: Promise<"complete" | "timeout">, cancel: () => void}} watch arm before starting
 *   the navigation, so no event is missed; skipBlank: a "complete" while the tab is still at
 *   about:blank is not the awaited page's
 * @property {(tabId: number, changeInfo: unknown, tab?: unknown) => void} updated tabs.onUpdated
 * @property {(tabId: number) => void} removed tabs.onRemoved
 * @property {() => number} size
 */

/**
 * @param {import("./pending.js").Timers} timers
 * @returns {LoadWatcher}
 */
export function createLoadWatcher({ setTimer, clearTimer }) {
  /** @type {Map<number, Set<{skipBlank: boolean, done: (outcome: "complete" | "timeout" | Error) => void}>>} */
  const waiters = new Map();

  /**
   * @param {number} tabId
   * @param {"complete" | Error} outcome
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
      /** @type {Promise<"complete" | "timeout">} */
      const promise = new Promise((resolve, reject) => {
        let set = waiters.get(tabId);
        if (set === undefined) waiters.set(tabId, (set = new Set()));
        const waiter = {
          skipBlank,
          /** @param {"complete" | "timeout" | Error} outcome */
          done(outcome) {
            if (!set.delete(waiter)) return;
            if (set.size === 0 && waiters.get(tabId) === set) waiters.delete(tabId);
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
    size: () => [...waiters.values()].reduce((n, s) => n + s.size, 0),
  };
}
