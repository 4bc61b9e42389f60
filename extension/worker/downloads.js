// downloads.js — the downloads owned tabs start, as the tab's own debugger reports them
// (Page.downloadWillBegin and Page.downloadProgress: worker/debugger.js keeps Chrome's debugger,
// with Page enabled, on every owned tab), so a download belongs to the tab that started it by
// construction, and to the frame Chrome names (its frameId), whose origin is the securityOrigin
// its latest Page.frameNavigated stated before the download began — for an empty document (just
// attached, about:blank, about:srcdoc) its parent frame's (docs/adr/0007); and
// page_wait_download's wait for one. Pure: no chrome, timers injected. It must never record a
// download of a tab no session owns (background.js feeds it only owned tabs' events), never hold
// more than MAX_TOTAL_PER_TAB downloads or MAX_FRAMES_PER_TAB frames per tab, never let one
// frame origin's downloads crowd out those of an origin holding fewer, never hand the same
// finished download to two waits, never let a download it withholds (its frame's origin unknown
// or not approved) be matched, claimed, or change when or how a wait ends — and a filter matches
// only what the answer would show (the URL only when its origin is approved, the file name as
// masked) — and never redirect, open or remove a download: it only listens.

import { maskCards } from "./redact.js";
import { originOf } from "../shared/origin.js";

/** Downloads remembered per tab and frame origin (that origin's oldest go first). */
export const MAX_PER_TAB = 20;
/** Downloads remembered per tab in all (then the oldest of the origin holding the most go). */
export const MAX_TOTAL_PER_TAB = 100;
/** Frames whose origin is remembered per tab (past it the oldest go: their downloads are withheld). */
export const MAX_FRAMES_PER_TAB = 500;

/**
 * @typedef {{guid: string, url: string, filename: string, startedAt: number,
 *   state: "started" | "complete" | "failed", receivedBytes: number, totalBytes: number | null,
 *   claimed: boolean, frameOrigin: string | null}} Download frameOrigin: the origin of the
 *   frame that started it when it began, null when that frame was unknown or had none
 * @typedef {{filename?: string, url?: string}} DownloadMatch substrings, case-insensitive
 * @typedef {(origin: string | null) => boolean} Approved whether the policy approves an origin
 * @typedef {{setTimer: (fn: () => void, ms: number) => unknown, clearTimer: (h: unknown) => void}} Timers
 * @typedef {ReturnType<typeof createDownloadLog>} DownloadLog
 */

/**
 * @param {{timers: Timers, now?: () => number}} deps
 */
export function createDownloadLog({ timers, now = () => Date.now() }) {
  /** @type {Map<number, Download[]>} */
  const byTab = new Map();
  /** Each tab's frames: frameId -> the origin its last navigation stated (null: none). */
  /** @type {Map<number, Map<string, string | null>>} */
  const framesOf = new Map();
  /** @type {Set<{tabId: number, check: () => void}>} */
  const waits = new Set();

  /**
   * A download the wait may see: its frame's origin is approved; the filter is held only to
   * what the answer shows (the URL when its own origin is approved, the masked file name), so a
   * withheld part never decides a match.
   * @param {Download} d @param {DownloadMatch} match @param {Approved} approved
   */
  const matches = (d, match, approved) =>
    d.frameOrigin !== null && approved(d.frameOrigin)
    && (match.filename === undefined || maskCards(d.filename).toLowerCase().includes(match.filename.toLowerCase()))
    && (match.url === undefined || (approved(originOf(d.url)) && d.url.toLowerCase().includes(match.url.toLowerCase())));

  /**
   * Past MAX_PER_TAB downloads of one frame origin, that origin's oldest goes; past
   * MAX_TOTAL_PER_TAB, the oldest of the origin holding the most: a frame's downloads crowd out
   * its own first, never those of an origin with fewer.
   * @param {Download[]} list @param {string} origin
   */
  function evict(list, origin) {
    const drop = (/** @type {string} */ o) => list.splice(list.findIndex((d) => d.frameOrigin === o), 1);
    if (list.filter((d) => d.frameOrigin === origin).length > MAX_PER_TAB) drop(origin);
    while (list.length > MAX_TOTAL_PER_TAB) {
      /** @type {Map<string, number>} */
      const counts = new Map();
      for (const d of list) counts.set(/** @type {string} */ (d.frameOrigin), (counts.get(/** @type {string} */ (d.frameOrigin)) ?? 0) + 1);
      const most = Math.max(...counts.values());
      const oldest = /** @type {Download} */ (list.find((d) => counts.get(/** @type {string} */ (d.frameOrigin)) === most));
      drop(/** @type {string} */ (oldest.frameOrigin));
    }
  }

  /**
   * The origin a frame's document has: its securityOrigin; for an empty document (a frame just
   * attached, about:blank, about:srcdoc: measured, Chrome states "://" for those) the origin of
   * the frame that holds it, which created it (a frame of another site may not navigate it).
   * @param {number} tabId @param {unknown} url @param {unknown} securityOrigin @param {unknown} parentId
   * @returns {string | null}
   */
  function originIn(tabId, url, securityOrigin, parentId) {
    if (url === undefined || (typeof url === "string" && /^about:(blank|srcdoc)([?#]|$)/.test(url))) {
      return typeof parentId === "string" && parentId !== "" ? framesOf.get(tabId)?.get(parentId) ?? null : null;
    }
    return originOf(securityOrigin);
  }

  /** @param {number} tabId @param {string} frameId @param {string | null} origin */
  function frameSeen(tabId, frameId, origin) {
    const frames = framesOf.get(tabId) ?? new Map();
    frames.delete(frameId); // re-inserted last: the oldest-seen goes first
    frames.set(frameId, origin);
    while (frames.size > MAX_FRAMES_PER_TAB) frames.delete(/** @type {string} */ (frames.keys().next().value));
    framesOf.set(tabId, frames);
  }

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
      if (method === "Page.frameNavigated") {
        const frame = params?.frame;
        if (typeof frame?.id === "string") frameSeen(tabId, frame.id, originIn(tabId, String(frame.url ?? ""), frame.securityOrigin, frame.parentId));
        return;
      }
      if (method === "Page.frameAttached") {
        // Its first, empty document (a hidden iframe whose src is a download never commits one).
        if (typeof params?.frameId === "string") frameSeen(tabId, params.frameId, originIn(tabId, undefined, undefined, params.parentFrameId));
        return;
      }
      if (method === "Page.frameDetached") {
        if (typeof params?.frameId === "string") framesOf.get(tabId)?.delete(params.frameId);
        return;
      }
      if (typeof params?.guid !== "string") return;
      const list = byTab.get(tabId) ?? [];
      if (method === "Page.downloadWillBegin") {
        if (list.some((d) => d.guid === params.guid)) return;
        const frameOrigin = typeof params.frameId === "string" ? framesOf.get(tabId)?.get(params.frameId) ?? null : null;
        if (frameOrigin === null) return; // unattributable: withheld for good, so never kept
        list.push({
          guid: params.guid,
          url: typeof params.url === "string" ? params.url : "",
          filename: typeof params.suggestedFilename === "string" ? params.suggestedFilename : "",
          startedAt: now(),
          state: "started",
          receivedBytes: 0,
          totalBytes: null,
          claimed: false,
          frameOrigin,
        });
        evict(list, frameOrigin);
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

    /**
     * The tab's frames as Page.getFrameTree states them now (after an attachment that missed
     * their navigations): a frame already known keeps what its own events said.
     * @param {number} tabId
     * @param {unknown} tree Page.getFrameTree's answer
     */
    framesKnown(tabId, tree) {
      /** @param {any} node @param {number} depth */
      const walk = (node, depth) => {
        const frame = node?.frame;
        if (depth > 64 || typeof frame?.id !== "string") return;
        if (!(framesOf.get(tabId)?.has(frame.id) ?? false)) {
          frameSeen(tabId, frame.id, originIn(tabId, String(frame.url ?? ""), frame.securityOrigin, frame.parentId));
        }
        for (const child of Array.isArray(node.childFrames) ? node.childFrames : []) walk(child, depth + 1);
      };
      walk(/** @type {any} */ (tree)?.frameTree, 0);
    },

    /** The tab closed or left its session. @param {number} tabId */
    removed(tabId) {
      byTab.delete(tabId);
      framesOf.delete(tabId);
      wake(tabId);
    },

    /**
     * The earliest unclaimed download of the tab that matches, once it finished (complete or
     * failed: then claimed); at `ms` the one still running (not claimed), or null when none
     * began. One that began before the call counts. Only a download whose frame's origin is
     * approved is ever seen (matched, claimed, or ending the wait).
     * @param {number} tabId
     * @param {DownloadMatch} match
     * @param {number} ms
     * @param {Approved} approved
     * @returns {Promise<Download | null>}
     */
    wait(tabId, match, ms, approved) {
      return new Promise((resolve) => {
        const pick = () => (byTab.get(tabId) ?? []).find((d) => !d.claimed && matches(d, match, approved)) ?? null;
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
