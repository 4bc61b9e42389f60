// tab-load.js — waits for a tab to finish loading, fed by chrome.tabs.onUpdated / onRemoved
// (background.js forwards them). Pure: no chrome; timers are injected. It must never keep a
// timer or a waiter alive after it settled, and never hang: every wait ends on "complete",
// on removal of the tab (tab_not_found) or at its timeout.

import { BridgeError } from "./bridge-error.js";
import { CODE } from "./error-codes.js";

/** How long tab_open / page_navigate wait for status "complete". */
export const LOAD_TIMEOUT_MS = 30_000;

/**
 * @typedef {object} LoadWatcher
 * @property {(tabId: number, timeoutMs?: number) => {promise: Promise<"complete" | "timeout">,
 *   cancel: () => void}} watch arm before starting the navigation, so no event is missed
 * @property {(tabId: number, changeInfo: unknown) => void} updated tabs.onUpdated
 * @property {(tabId: number) => void} removed tabs.onRemoved
 * @property {() => number} size
 */

/**
 * @param {import("./pending.js").Timers} timers
 * @returns {LoadWatcher}
 */
export function createLoadWatcher({ setTimer, clearTimer }) {
  /** @type {Map<number, Set<{done: (outcome: "complete" | "timeout" | Error) => void}>>} */
  const waiters = new Map();

  /**
   * @param {number} tabId
   * @param {"complete" | Error} outcome
   */
  function finishAll(tabId, outcome) {
    const set = waiters.get(tabId);
    if (set === undefined) return;
    for (const w of [...set]) w.done(outcome);
  }

  return {
    watch(tabId, timeoutMs = LOAD_TIMEOUT_MS) {
      /** @type {() => void} */
      let cancel = () => {};
      /** @type {Promise<"complete" | "timeout">} */
      const promise = new Promise((resolve, reject) => {
        let set = waiters.get(tabId);
        if (set === undefined) waiters.set(tabId, (set = new Set()));
        const waiter = {
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
    updated(tabId, changeInfo) {
      if (changeInfo !== null && typeof changeInfo === "object" && /** @type {{status?: unknown}} */ (changeInfo).status === "complete") {
        finishAll(tabId, "complete");
      }
    },
    removed(tabId) {
      finishAll(tabId, new BridgeError(CODE.TAB_NOT_FOUND, `tab ${tabId} was closed`));
    },
    size: () => [...waiters.values()].reduce((n, s) => n + s.size, 0),
  };
}
