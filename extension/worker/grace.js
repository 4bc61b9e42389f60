// grace.js — the per-tab grace period after the person confirmed a click kind ("submit",
// "link_click"): repeats of that kind on that tab within policy.clickGraceSeconds are not asked
// again. Pure: no chrome; the clock is passed in. It must never record (so never cover) any
// kind but the click kinds — eval and upload are confirmed on every call — and must forget a
// tab when it is released (closed, or its session ended).

/** The only kinds a grace may cover. */
export const GRACE_KINDS = Object.freeze(["submit", "link_click"]);

/** Longest grace accepted (trust/policy.py clickGraceSeconds: 0..600). */
const MAX_SECONDS = 600;

/**
 * @typedef {object} Grace
 * @property {(tabId: number, kind: string, now: number, seconds: unknown) => boolean} allow
 *   record a confirmed `kind` on `tabId` at `now` (ms) for `seconds`; false (nothing recorded)
 *   for a kind outside GRACE_KINDS or a non-positive / unreadable duration
 * @property {(tabId: number, kind: string, now: number) => boolean} covered
 * @property {(tabId: number) => void} release
 * @property {() => number} size tabs with a recorded grace
 */

/** @returns {Grace} */
export function createGrace() {
  /** @type {Map<number, Map<string, number>>} tabId -> kind -> until (ms) */
  const byTab = new Map();
  return {
    allow(tabId, kind, now, seconds) {
      if (!GRACE_KINDS.includes(kind) || !Number.isInteger(tabId) || !Number.isFinite(now)) return false;
      if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0) return false;
      let kinds = byTab.get(tabId);
      if (kinds === undefined) byTab.set(tabId, (kinds = new Map()));
      kinds.set(kind, now + Math.min(seconds, MAX_SECONDS) * 1000);
      return true;
    },
    covered(tabId, kind, now) {
      if (!GRACE_KINDS.includes(kind)) return false;
      const until = byTab.get(tabId)?.get(kind);
      return until !== undefined && Number.isFinite(now) && now < until;
    },
    release(tabId) {
      byTab.delete(tabId);
    },
    size: () => byTab.size,
  };
}
