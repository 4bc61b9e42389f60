// mirror.js — state a worker keeps in memory and copies to chrome.storage.session only for its
// next start (the popup's recent calls, the sessions' clients): at most one write per interval,
// always of the latest state, never two at once. A request's answer must never wait on it. What
// the interval can lose is the last interval's changes if the worker dies without warning (an
// idle worker stops ~30 s after its last event, long after the write); nothing that decides
// anything may live only here. Pure: the write and the timer are injected.

/** Most milliseconds between a change and the write that carries it. */
export const MIRROR_INTERVAL_MS = 250;

/**
 * @param {{write: () => Promise<void> | void, setTimer: (fn: () => void, ms: number) => unknown,
 *   intervalMs?: number, log?: {warn: (...a: unknown[]) => void}, what?: string}} deps
 *   write: stores the current state (called with none: it reads the latest itself)
 * @returns {{changed: () => void, settled: () => Promise<void>}}
 */
export function createMirror({ write, setTimer, intervalMs = MIRROR_INTERVAL_MS, log = console, what = "state" }) {
  let scheduled = false;
  /** The writes, one after another; never rejects. */
  let writing = Promise.resolve();

  function flush() {
    scheduled = false;
    writing = writing.then(write).catch((err) => log.warn(`tabwarden: could not store the ${what}`, err));
  }

  return {
    /** The state changed: a write of it (and of any later change) starts within the interval. */
    changed() {
      if (scheduled) return;
      scheduled = true;
      setTimer(flush, intervalMs);
    },
    /** Settles once every write started so far has ended. */
    settled: () => writing,
  };
}
