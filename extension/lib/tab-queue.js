// tab-queue.js — serialises the calls that name one tab: each tab has a promise chain, so a
// second call on a tab starts only after the first settled (resolved or rejected), while calls
// on different tabs run concurrently. Pure: no chrome. It must never let a failed call stall
// the tab's chain, never keep a chain for an idle tab, and never reorder calls on one tab.

/**
 * @typedef {object} TabQueue
 * @property {<T>(tabId: number, fn: () => T | Promise<T>) => Promise<T>} run
 * @property {() => number} size tabs with calls queued or running
 */

/** @returns {TabQueue} */
export function createTabQueue() {
  /** @type {Map<number, Promise<void>>} */
  const tails = new Map();
  return {
    run(tabId, fn) {
      const prev = tails.get(tabId) ?? Promise.resolve();
      const result = prev.then(() => fn());
      /** @type {Promise<void>} */
      const tail = result.then(() => {}, () => {}).then(() => {
        if (tails.get(tabId) === tail) tails.delete(tabId);
      });
      tails.set(tabId, tail);
      return result;
    },
    size: () => tails.size,
  };
}

/**
 * Wrap dispatcher entries so every call whose args carry an integer `tabId` runs in that tab's
 * queue; other calls (tab_list, tab_open, …) run at once.
 * @param {Iterable<[string, import("./dispatch.js").Handler]>} entries
 * @param {TabQueue} queue
 * @returns {Array<[string, import("./dispatch.js").Handler]>}
 */
export function serialiseByTab(entries, queue) {
  return [...entries].map(([action, handler]) => [
    action,
    (args, ctx) => (args !== null && typeof args === "object" && Number.isInteger(args.tabId)
      ? queue.run(/** @type {number} */ (args.tabId), () => handler(args, ctx))
      : handler(args, ctx)),
  ]);
}
