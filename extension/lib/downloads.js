// downloads.js — the downloads owned tabs start, as the tab's own debugger reports them
// (Page.downloadWillBegin and Page.downloadProgress: lib/debugger.js keeps Chrome's debugger,
// with Page enabled, on every owned tab), so a download belongs to the tab that started it by
// construction; and page_wait_download's wait for one. Pure: no chrome, timers injected. It must
// never record a download of a tab no session owns (background.js feeds it only owned tabs'
// events), never hold more than MAX_PER_TAB downloads per tab, never hand the same finished
// download to two waits, and never redirect, open or remove a download: it only listens.

/** Downloads remembered per tab (the oldest go first). */
export const MAX_PER_TAB = 20;

/**
 * @typedef {{guid: string, url: string, filename: string, startedAt: number,
 *   state: "started" | "complete" | "failed", receivedBytes: number, totalBytes: number | null,
 *   claimed: boolean}} Download
 * @typedef {{filename?: string, url?: string}} DownloadMatch substrings, case-insensitive
 * @typedef {{setTimer: (fn: () => void, ms: number) => unknown, clearTimer: (h: unknown) => void}} Timers
 * @typedef {ReturnType<typeof createDownloadLog>} DownloadLog
 */

/**
 * @param {{timers: Timers, now?: () => number}} deps
 */
export function createDownloadLog({ timers, now = () => Date.now() }) {
  /** @type {Map<number, Download[]>} */
  const byTab = new Map();
  /** @type {Set<{tabId: number, check: () => void}>} */
  const waits = new Set();

  /** @param {Download} d @param {DownloadMatch} match */
  const matches = (d, match) =>
    (match.filename === undefined || d.filename.toLowerCase().includes(match.filename.toLowerCase()))
    && (match.url === undefined || d.url.toLowerCase().includes(match.url.toLowerCase()));

  /** @param {number} tabId */
  function wake(tabId) {
    for (const w of [...waits]) if (w.tabId === tabId) w.check();
  }

  return {
    /**
     * One CDP event of an owned tab.
     * @param {number} tabId
     * @param {string} method
     * @param {any} params
     */
    onEvent(tabId, method, params) {
      if (typeof params?.guid !== "string") return;
      const list = byTab.get(tabId) ?? [];
      if (method === "Page.downloadWillBegin") {
        if (list.some((d) => d.guid === params.guid)) return;
        list.push({
          guid: params.guid,
          url: typeof params.url === "string" ? params.url : "",
          filename: typeof params.suggestedFilename === "string" ? params.suggestedFilename : "",
          startedAt: now(),
          state: "started",
          receivedBytes: 0,
          totalBytes: null,
          claimed: false,
        });
        while (list.length > MAX_PER_TAB) list.shift();
        byTab.set(tabId, list);
      } else if (method === "Page.downloadProgress") {
        const d = list.find((x) => x.guid === params.guid);
        if (d === undefined || d.state !== "started") return;
        if (Number.isFinite(params.receivedBytes)) d.receivedBytes = params.receivedBytes;
        if (Number.isFinite(params.totalBytes) && params.totalBytes > 0) d.totalBytes = params.totalBytes;
        if (params.state === "completed") d.state = "complete";
        else if (params.state === "canceled") d.state = "failed";
      } else return;
      wake(tabId);
    },

    /** The tab closed or left its session. @param {number} tabId */
    removed(tabId) {
      byTab.delete(tabId);
      wake(tabId);
    },

    /**
     * The earliest unclaimed download of the tab that matches, once it finished (complete or
     * failed: then claimed); at `ms` the one still running (not claimed), or null when none
     * began. One that began before the call counts.
     * @param {number} tabId
     * @param {DownloadMatch} match
     * @param {number} ms
     * @returns {Promise<Download | null>}
     */
    wait(tabId, match, ms) {
      return new Promise((resolve) => {
        const pick = () => (byTab.get(tabId) ?? []).find((d) => !d.claimed && matches(d, match)) ?? null;
        /** @param {Download | null} d */
        const done = (d) => {
          waits.delete(w);
          timers.clearTimer(timer);
          resolve(d === null ? null : { ...d });
        };
        const w = {
          tabId,
          check: () => {
            const d = pick();
            if (d !== null && d.state !== "started") {
              d.claimed = true;
              done(d);
            }
          },
        };
        const timer = timers.setTimer(() => done(pick()), ms);
        waits.add(w);
        w.check();
      });
    },
  };
}
