// tab-queue.js — serialises the calls that name one tab: each tab has a promise chain, so a
// second call on a tab starts only after the first settled (resolved or rejected), while calls
// on different tabs run concurrently; a guard (worker/debugger.js) may answer a call at once instead
// (a JavaScript dialog blocks the tab). Pure: no chrome. It must never let a failed call stall
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
 * What a tab call passes besides the queue (worker/debugger.js createDialogGuard): `admit` runs as
 * the call arrives and may refuse it at once (throw) or let it run at once, outside the queue
 * ("now"); `run` wraps the handler when its turn comes.
 * @typedef {object} TabGuard
 * @property {(action: string, tabId: number, ctx: any) => "queue" | "now"} admit
 * @property {<T>(action: string, tabId: number, ctx: any, fn: () => T | Promise<T>) => Promise<T>} run
 */

/**
 * Wrap dispatcher entries so every call whose args carry an integer `tabId` runs in that tab's
 * queue (through `guard` when given); other calls (tab_list, tab_open, …) run at once.
 * @param {Iterable<[string, import("./dispatch.js").Handler]>} entries
 * @param {TabQueue} queue
 * @param {TabGuard} [guard]
 * @returns {Array<[string, import("./dispatch.js").Handler]>}
 */
export function serialiseByTab(entries, queue, guard) {
  return [...entries].map(([action, handler]) => [
    action,
    (args, ctx) => {
      if (args === null || typeof args !== "object" || !Number.isInteger(args.tabId)) return handler(args, ctx);
      const tabId = /** @type {number} */ (args.tabId);
      if (guard === undefined) return queue.run(tabId, () => handler(args, ctx));
      if (guard.admit(action, tabId, ctx) === "now") return handler(args, ctx);
      return queue.run(tabId, () => guard.run(action, tabId, ctx, () => handler(args, ctx)));
    },
  ]);
}
