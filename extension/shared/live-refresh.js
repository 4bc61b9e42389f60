// live-refresh.js — keeps the popup's and the options page's lists current without a reload.
// The worker side (createChangeNotifier) tells every open extension page "something changed"
// ({type: "tabwarden_changed"}) after it answered a request or its connection changed, at most
// once per interval; the page side (runLiveRefresh) re-reads its sections on that event and
// whenever the page comes back into view (a change made in a terminal shows when the person
// returns to the tab). Pure: timers, the message channel and the document are injected. The
// event carries nothing but its type: it must never carry data (each section asks the worker
// again, through its own checked message), and a page must never act on it beyond re-reading.

/** The runtime message the worker broadcasts. */
export const CHANGED = "tabwarden_changed";
/**
 * The page messages after which other open pages may show something else (narrowing, widening,
 * pairing, revoking, closing tabs). Only these: a page's own reads must not echo back as a
 * change, or two open pages would re-read each other forever.
 */
export const CHANGING = new Set(["pair_complete", "presence_complete", "policy_restrict", "kill", "client_revoke", "popup_kill",
  "agent_tabs_close_orphan", "agent_tabs_close_orphans", "agent_tabs_close"]);
/** Fewest milliseconds between two broadcasts (changes inside it are folded into one). */
export const NOTIFY_INTERVAL_MS = 500;

/**
 * @param {{send: (msg: object) => Promise<unknown> | void, setTimer: (fn: () => void, ms: number) => unknown,
 *   intervalMs?: number}} deps send: chrome.runtime.sendMessage from the worker (no page open is fine)
 * @returns {{changed: () => void}}
 */
export function createChangeNotifier({ send, setTimer, intervalMs = NOTIFY_INTERVAL_MS }) {
  let pending = false;
  return {
    changed() {
      if (pending) return;
      pending = true;
      setTimer(() => {
        pending = false;
        try {
          Promise.resolve(send({ type: CHANGED })).catch(() => {}); // no page listening: nothing to do
        } catch {
          // the same
        }
      }, intervalMs);
    },
  };
}

/**
 * @param {{doc: {addEventListener?: (type: string, fn: () => void) => void, visibilityState?: string},
 *   win?: {addEventListener?: (type: string, fn: () => void) => void},
 *   listen: (fn: (msg: unknown) => void) => void,
 *   refreshers: Array<() => Promise<unknown>>}} deps listen: chrome.runtime.onMessage for this page
 * @returns {{refreshAll: () => Promise<void>}}
 */
export function runLiveRefresh({ doc, win, listen, refreshers }) {
  /** @type {Promise<void> | null} */
  let running = null;
  let again = false;

  /** One pass at a time; a change during a pass earns exactly one more. */
  function refreshAll() {
    if (running !== null) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await Promise.all(refreshers.map((fn) => Promise.resolve().then(fn).catch(() => {})));
      } while (again);
    })().finally(() => {
      running = null;
    });
    return running;
  }

  listen((msg) => {
    if (msg !== null && typeof msg === "object" && /** @type {{type?: unknown}} */ (msg).type === CHANGED) {
      refreshAll().catch(() => {});
    }
  });
  doc.addEventListener?.("visibilitychange", () => {
    if (doc.visibilityState === "visible") refreshAll().catch(() => {});
  });
  win?.addEventListener?.("focus", () => {
    refreshAll().catch(() => {});
  });
  return { refreshAll };
}
